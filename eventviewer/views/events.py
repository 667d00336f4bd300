"""One event: its card in full, where it sits in the tree, and its raw JSON."""

from __future__ import annotations

import orjson
from django.conf import settings
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from eventviewer.forms import EventForm
from eventviewer.imports.packing import unpack
from eventviewer.lookups import GONE, get_conversation, get_event, get_leaf, valid
from eventviewer.models import Conversation, Event, EventPayload, read_whole
from eventviewer.scope import PageScope
from eventviewer.trajectory.kinds import card_for
from eventviewer.trajectory.skeleton import latest_leaf_below
from eventviewer.views import HtmxHttpRequest, is_partial
from eventviewer.views.problems import Reasons

CHILDREN_LISTED = 100


def event_page(request: HtmxHttpRequest, scope: PageScope, event_id: str) -> HttpResponse:
    """An event page, for its owner's pages and for a share link."""
    conversation = scope.conversation
    event = get_event(conversation, event_id)
    params = valid(EventForm, request.GET)
    scope = scope.viewing(params["view"])
    raw = _stored(event)
    data = orjson.loads(raw)
    leaf = None
    if event.is_tree_node:
        if params["leaf"]:
            leaf = params["leaf"]
        else:
            leaf = _branch_through(conversation, event)
    problem = None
    if leaf and not is_partial(request):
        # Pending or mismatched on the branch it is shown on: the same badge and reason as its card.
        leaf_event = get_leaf(conversation, leaf)
        assert leaf_event is not None  # a leaf named is found (or a 404): None is HEAD's absence
        # Only what decides how this event pairs is read, not the branch (which may be huge).
        pairing, on_path = conversation.pairing_of(leaf_event, [event.as_light()])
        if event.event_id in pairing.mismatched or event.event_id in pairing.pending:
            reason = Reasons(scope, leaf_event, pairing, on_path).of(event.event_id)
            problem = {"mismatch": pairing.mismatched.get(event.event_id), "reason": reason}
    children = list(event.children.light().order_by("seq")[:CHILDREN_LISTED]) if event.is_tree_node else []
    parent = event.parent.event_id if event.parent is not None else None
    context = {
        "conversation": conversation,
        "scope": scope,
        "event": event,
        "card": card_for(data, full=True),
        # The stored bytes as they came (a re-serialisation would round big numbers and
        # merge duplicate keys), up to a size; the rest is a download. A cut through a
        # multi-byte character drops that character.
        "raw_json": raw[: settings.EVENTVIEWER_RAW_SHOWN_BYTES].decode("utf-8", "ignore"),
        "raw_size": len(raw),
        "raw_cut": len(raw) > settings.EVENTVIEWER_RAW_SHOWN_BYTES,
        "raw_url": scope.raw_url(event.event_id),
        "leaf": leaf,
        "parent": parent,
        "problem": problem,
        "children": children,
    }
    if is_partial(request):
        return render(request, "conversations/event.html#card", context)  # "show all output" in place
    return render(request, "conversations/event.html", context)


def _stored(event: Event) -> bytes:
    packed = EventPayload.objects.filter(pk=event.pk).values_list("packed", flat=True).first()
    if packed is None:  # deleted since the event was read
        raise Http404(GONE)
    return unpack(packed)


def _branch_through(conversation: Conversation, event: Event) -> str:
    """The branch to show an event on: HEAD's if the event is on it, else the most
    recent leaf below the event. (HEAD's own page reads no branch.)"""
    head = Event.objects.filter(pk=conversation.head_id).first() if conversation.head_id else None
    if head is not None and head.pk == event.pk:
        return head.event_id
    if head is not None and head.depth is not None and event.depth is not None and event.depth <= head.depth:
        if Event.objects.at_depths(head, [event.depth]).get(event.depth) == event.pk:
            return head.event_id
    if not read_whole(event):  # a long branch: its kept event below, found without reading it
        kept = conversation.kept_below(event)
        nodes = {node["id"]: node for node in conversation.skeleton.get("nodes", [])}
        return nodes[kept]["latest_leaf"] if kept is not None else event.event_id
    path_ids = [e.event_id for e in Event.objects.path_to(event)]
    return latest_leaf_below(conversation.skeleton, path_ids) or event.event_id


def event_id_of(request: HtmxHttpRequest, event_id: str | None) -> str:
    """The event of an event page: in its path, or for "." and ".." in ``?id=``
    (see scope.event_path)."""
    return event_id if event_id is not None else request.GET.get("id", "")


def raw_response(scope: PageScope, event_id: str) -> HttpResponse:
    """An event's stored JSON, byte for byte, as a download."""
    event = get_event(scope.conversation, event_id)
    raw = _stored(event)
    response = HttpResponse(raw, content_type="application/json")
    safe_name = "".join(c if c.isalnum() or c in "-_." else "_" for c in event.event_id)[:100].strip(".") or "event"
    response["Content-Disposition"] = f'attachment; filename="{safe_name}.json"'
    return response


@require_safe
def event_raw(request: HtmxHttpRequest, conversation_id: str, event_id: str | None = None) -> HttpResponse:
    return raw_response(PageScope(get_conversation(conversation_id)), event_id_of(request, event_id))


@require_safe
@vary_on_headers("HX-Request")
def event_detail(request: HtmxHttpRequest, conversation_id: str, event_id: str | None = None) -> HttpResponse:
    return event_page(request, PageScope(get_conversation(conversation_id)), event_id_of(request, event_id))
