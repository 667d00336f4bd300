"""A branch's Files tab: every file it changed, each change a diff linked to its event;
the commands on it that may have changed files; and what ran on other branches after it
forked from them, since a branch is not a snapshot of the workspace.

A long branch's edits are shown a page at a time, and at most LABELLED commands and
LABELLED events that ran elsewhere are listed: the page stays bounded however long the
branch or the conversation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from eventviewer.forms import FileDiffForm, FilesForm
from eventviewer.lookups import get_conversation, get_event, get_leaf, get_page, valid
from eventviewer.models import Conversation
from eventviewer.scope import PageScope, SharedScope
from eventviewer.trajectory import diff, files
from eventviewer.trajectory.events import Light
from eventviewer.views import HtmxHttpRequest
from eventviewer.views.share import shared_view

EDITS_PER_PAGE = 100  # edits whose changes one page shows
LABELLED = 300  # commands, and events that ran elsewhere, listed with what they ran
UNFOLDED_EDITS = 10  # a branch of at most this many edits shows its files' diffs unfolded


class Listed(NamedTuple):
    event: Light | files.Ran
    label: str  # the command, or the editor command and its path


class ForkNote(NamedTuple):
    fork: files.Fork
    event: Light  # the fork point, on the branch
    listed: list[Listed]
    more: int  # counted, not listed


def labelled(conversation: Conversation, events: Sequence[Light | files.Ran]) -> list[Listed]:
    """The events with what they ran, read back."""
    data = conversation.payloads(e.pk for e in events)
    return [Listed(e, files.label(data.get(e.pk, {}))) for e in events]


def fork_notes(conversation: Conversation, path: Sequence[Light], drift: files.Drift) -> list[ForkNote]:
    """Each fork point with what ran after it: in all, the first LABELLED events listed."""
    on_path = {e.event_id: e for e in path}
    budget = LABELLED
    notes = []
    for fork in drift.forks:
        listed = labelled(conversation, fork.ran[:budget])
        budget -= len(listed)
        notes.append(ForkNote(fork, on_path[fork.event_id], listed, fork.edits + fork.commands - len(listed)))
    return notes


def files_page(request: HtmxHttpRequest, scope: PageScope) -> HttpResponse:
    conversation = scope.conversation
    params = valid(FilesForm, request.GET)
    scope = scope.viewing(params["view"])
    leaf = get_leaf(conversation, params["leaf"])
    context = {"conversation": conversation, "scope": scope, "leaf": leaf}
    if leaf is not None:
        path = conversation.read_path(leaf).path
        edits = [e for e in path if e.effect == files.EDIT]
        page = get_page(edits, EDITS_PER_PAGE, params["page"], "this branch's edits fill {pages}.")
        shown = list(page.object_list)
        commands = [e for e in path if e.effect == files.COMMAND]
        budget = diff.Budget(diff.PAGE_SECONDS)
        drift = conversation.workspace_drift(path)
        context.update(
            histories=files.by_file(conversation.file_changes(shown, budget), budget),
            open_files=len(edits) <= UNFOLDED_EDITS,
            edits=len(edits),
            page=page.number,
            pages=page.paginator.num_pages,
            first=page.start_index(),
            last=page.end_index(),
            previous_url=scope.page_url("files/", leaf=leaf.event_id, page=str(page.previous_page_number()))
            if page.has_previous()
            else None,
            next_url=scope.page_url("files/", leaf=leaf.event_id, page=str(page.next_page_number()))
            if page.has_next()
            else None,
            commands=labelled(conversation, commands[:LABELLED]),
            more_commands=max(0, len(commands) - LABELLED),
            drift=drift,
            notes=fork_notes(conversation, path, drift),
        )
    return render(request, "conversations/files.html", context)


def diff_download(scope: PageScope, params: dict[str, Any]) -> HttpResponse:
    """One change's whole diff (the page shows at most diff.MAX_LINES lines of it): its
    size is the event's, its line matching bounded by diff.DOWNLOAD_SECONDS."""
    conversation = scope.conversation
    event = get_event(conversation, params["event"])
    data = conversation.payloads([event.pk]).get(event.pk, {})
    found = [c for c in files.changes(event.event_id, data, whole=True) if c.path == params["file"] and c.diff.lines]
    if not found:
        raise Http404(f"Event {event.event_id!r} records no diff of {params['file']!r}.")
    response = HttpResponse(
        "".join(line.text + "\n" for line in found[0].diff.lines), content_type="text/x-diff; charset=utf-8"
    )
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{event.event_id}-{params['file']}")
    response["Content-Disposition"] = f'attachment; filename="{name[-100:].strip(".") or "change"}.diff"'
    return response


@require_GET
def branch_diff(request: HtmxHttpRequest, conversation_id: str) -> HttpResponse:
    return diff_download(PageScope(get_conversation(conversation_id)), valid(FileDiffForm, request.GET))


@require_GET
@shared_view
def shared_diff(request: HtmxHttpRequest, scope: SharedScope) -> HttpResponse:
    return diff_download(scope, valid(FileDiffForm, request.GET))


@require_GET
def branch_files(request: HtmxHttpRequest, conversation_id: str) -> HttpResponse:
    return files_page(request, PageScope(get_conversation(conversation_id)))


@require_GET
@shared_view
def shared_files(request: HtmxHttpRequest, scope: SharedScope) -> HttpResponse:
    return files_page(request, scope)
