"""A branch's Files tab: every file it changed, each change a diff linked to its event;
the commands on it that may have changed files; and what ran on other branches after it
forked from them, since a branch is not a snapshot of the workspace."""

from __future__ import annotations

from typing import NamedTuple

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from eventviewer.forms import EventForm
from eventviewer.lookups import get_conversation, get_leaf, valid
from eventviewer.models import Conversation
from eventviewer.scope import Scope
from eventviewer.trajectory import files
from eventviewer.trajectory.events import Light
from eventviewer.views.share import _shared

LISTED = 200  # commands, and events that ran elsewhere per fork point, listed with what they ran


class Listed(NamedTuple):
    event: Light | files.Ran
    label: str  # the command, or the editor command and its path


class ForkNote(NamedTuple):
    fork: files.Fork
    event: Light  # the fork point, on the branch
    listed: list[Listed]
    more: int  # not listed


def labelled(conversation: Conversation, events: list) -> list[Listed]:
    data = conversation.payloads(e.pk for e in events)
    return [Listed(e, files.label(data.get(e.pk, {}))) for e in events]


def fork_notes(conversation: Conversation, path: list[Light], drift: files.Drift) -> list[ForkNote]:
    on_path = {e.event_id: e for e in path}
    return [
        ForkNote(
            fork, on_path[fork.event_id], labelled(conversation, fork.ran[:LISTED]), max(0, len(fork.ran) - LISTED)
        )
        for fork in drift.forks
    ]


def files_page(request: HttpRequest, scope: Scope) -> HttpResponse:
    conversation = scope.conversation
    leaf = get_leaf(conversation, valid(EventForm, request.GET)["leaf"])
    context = {"conversation": conversation, "scope": scope, "leaf": leaf}
    if leaf is not None:
        path = conversation.read_path(leaf).path
        commands = [e for e in path if e.effect == files.COMMAND]
        drift = conversation.workspace_drift(path)
        context.update(
            histories=files.by_file(conversation.file_changes(path)),
            commands=labelled(conversation, commands[:LISTED]),
            more_commands=max(0, len(commands) - LISTED),
            drift=drift,
            notes=fork_notes(conversation, path, drift),
        )
    return render(request, "conversations/files.html", context)


@require_GET
def branch_files(request: HttpRequest, conversation_id: str) -> HttpResponse:
    return files_page(request, Scope(get_conversation(conversation_id)))


@require_GET
@_shared
def shared_files(request: HttpRequest, scope: Scope) -> HttpResponse:
    return files_page(request, scope)
