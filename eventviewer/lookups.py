"""Finding what a URL names, for pages and the API alike: the object, or the exception
that says what is wrong (BadRequest: 400, Http404: 404). Pages render these as error
pages; the API turns them into JSON."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from django import forms
from django.core.exceptions import BadRequest
from django.core.paginator import EmptyPage, Page, Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.log import log_response

from eventviewer.models import Conversation, ConversationQuerySet, Event
from eventviewer.trajectory.ids import normalize_conversation_id

F = TypeVar("F", bound=forms.Form)

GONE = "This conversation is being deleted."


def get_conversation(raw_id: str, queryset: ConversationQuerySet | None = None) -> Conversation:
    conversation_id = normalize_conversation_id(raw_id)
    if conversation_id is None:
        raise BadRequest(f"{raw_id!r} is not a conversation id (32 hex digits, or a dashed UUID)")
    found = (queryset if queryset is not None else Conversation.objects).shown().filter(conversation_id=conversation_id)
    conversation = found.first()
    if conversation is None:
        raise Http404(f"There is no conversation {conversation_id}.")
    return conversation


def get_event(conversation: Conversation, event_id: str) -> Event:
    event = conversation.events.light().filter(event_id=event_id).first()
    if event is None:
        raise Http404(f"This conversation has no event {event_id!r}.")
    return event


def get_leaf(conversation: Conversation, event_id: str) -> Event | None:
    """The event ending the branch to show: ``event_id``'s, or HEAD's when it is empty
    (None when the conversation has no HEAD)."""
    try:
        leaf = get_event(conversation, event_id) if event_id else conversation.head
    except Event.DoesNotExist:  # deleted since the conversation was read
        raise Http404(GONE) from None
    if leaf is not None and not leaf.is_tree_node:
        raise BadRequest(f"Event {leaf.event_id!r} is a {leaf.kind}, which is not on any branch.")
    return leaf


def get_page(items: Sequence[Any], per_page: int, number: int | None, beyond: str) -> Page[Any]:
    """Page ``number`` (None: the first) of ``items``; a page past the last is a 404 that
    says how many there are (``beyond``: "the results fill {pages}")."""
    paginator = Paginator(items, per_page)
    try:
        return paginator.page(number or 1)
    except EmptyPage:
        raise Http404(f"There is no page {number}: " + beyond.format(pages=paginator.num_pages)) from None


def checked(form: F, what: str = "query") -> F:
    """The form, or a 400 saying what is wrong with it."""
    if not form.is_valid():
        problems = "; ".join(
            f"{k}: {' '.join(map(str, v))}" if k != "__all__" else " ".join(map(str, v)) for k, v in form.errors.items()
        )
        raise BadRequest(f"Bad {what}: {problems}")
    return form


def valid(form_class: type[forms.Form], data: Any) -> dict[str, Any]:
    return checked(form_class(data)).cleaned_data


def refused_page(request: HttpRequest, response: HttpResponse, reason: str) -> HttpResponse:
    """A page that answers a refused query itself (its box, the reason beside it) is logged
    as a raised BadRequest is: one line naming the reason (eventviewer.logfilters)."""
    log_response("%s: %s", reason, request.path, response=response, request=request)
    return response
