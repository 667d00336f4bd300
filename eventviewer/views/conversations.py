"""The conversation list, a conversation's branch page, its diagram, and moving HEAD."""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.exceptions import BadRequest
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from eventviewer import cards, tasks
from eventviewer.forms import ConversationListForm, EventForm, HeadForm, PathForm, ShareForm
from eventviewer.lookups import GONE, checked, get_conversation, get_event, get_leaf, valid
from eventviewer.models import Conversation, ConversationState, Event, EventPayload, unpack
from eventviewer.scope import Scope
from eventviewer.trajectory import diagram
from eventviewer.trajectory.events import Light
from eventviewer.trajectory.pairing import Mismatch
from eventviewer.trajectory.projection import Turn
from eventviewer.trajectory.reading import Reading
from eventviewer.trajectory.window import NotOnBranch, Span, problems_near, window

LIST_COLUMNS = [
    ("title", "Title"),
    ("status", "Status"),
    ("events", "Events"),
    ("branches", "Branches"),
    ("pending", "Pending"),
    ("mismatched", "Mismatched"),
    ("imported", "Imported"),
]
BRANCHES_LISTED = 40  # the branch list beside the diagram: the most recent ones
SHARE_LINKS_LISTED = 50
SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


@dataclass
class Entry:
    """One event of a turn, as a card with its pairing state."""

    event: Light
    card: cards.Card
    pending: bool = False
    mismatch: Mismatch | None = None
    result_id: str = ""  # an action's result
    answers: str = ""  # the action a result answers
    stray_text: bool = False


@dataclass
class Row:
    turn: Turn
    entries: list[Entry] = field(default_factory=list)
    index: int = 0

    @property
    def anchor_id(self) -> str:
        return self.entries[0].event.event_id


def _rows(reading: Reading, span: Span) -> list[Row]:
    turns = reading.turns[span.start : span.end]
    pks = [e.pk for t in turns for e in t.events]
    packed = dict(EventPayload.objects.filter(pk__in=pks).values_list("pk", "packed")) if pks else {}
    if len(packed) < len(pks):  # deleted while this page was read
        raise Http404(GONE)
    pairing = reading.pairing
    pending = set(pairing.pending)
    rows = []
    for offset, turn in enumerate(turns):
        row = Row(turn, index=span.start + offset)
        for event in turn.events:
            eid = event.event_id
            row.entries.append(
                Entry(
                    event=event,
                    card=cards.build(orjson.loads(unpack(packed[event.pk]))),
                    pending=eid in pending,
                    mismatch=pairing.mismatched.get(eid),
                    result_id=pairing.result_for.get(eid, ""),
                    answers=pairing.answers.get(eid, ""),
                    stray_text=eid in turn.stray_text,
                )
            )
        rows.append(row)
    return rows


def cached_diagram(scope: Scope, leaf: Event | None, reading: Reading | None = None) -> SafeString:
    """The branch diagram with ``leaf``'s branch selected. Events never change, so a
    diagram stays valid until the next import or HEAD change (``updated_at``)."""
    conversation = scope.conversation
    key = f"diagram:{conversation.pk}:{conversation.updated_at.timestamp()}:{leaf.pk if leaf else 0}:{scope.base}"
    svg = cache.get(key)
    if svg is None:
        if reading is None and leaf is not None:
            reading = conversation.read_path(leaf)
        path = reading.path if reading else []
        problems = {}
        if reading:
            problems = {eid: "pending" for eid in reading.pairing.pending}
            problems.update({eid: "mismatched" for eid in reading.pairing.mismatched})
        svg = diagram.diagram_svg(
            conversation.skeleton,
            path=path,
            problems=problems,
            link=lambda event_id: scope.url(leaf=event_id),
            htmx_target="#workspace",
        )
        cache.set(key, svg, settings.EVENTVIEWER_DIAGRAM_CACHE_SECONDS)
    # diagram_svg builds every label from escaped text and sanitizes the SVG dot
    # returns against an allowlist of elements and attributes.
    return mark_safe(svg)


def _branches(conversation: Conversation) -> tuple[list[dict], int]:
    leaves = [n for n in conversation.skeleton.get("nodes", []) if n["leaf"]]
    leaves.sort(key=lambda n: n["seq"], reverse=True)
    return leaves[:BRANCHES_LISTED], len(leaves)


def conversation_page(request: HttpRequest, scope: Scope, params: dict) -> HttpResponse:
    """A branch of the conversation, for its owner's pages and for a share link."""
    conversation = scope.conversation
    leaf = get_leaf(conversation, params["leaf"])
    reading = conversation.read_path(leaf) if leaf else None
    context = {
        "conversation": conversation,
        "scope": scope,
        "leaf": leaf,
        "reading": reading,
        "is_head": leaf is not None and leaf.pk == conversation.head_id,
    }
    if reading:
        try:
            span = window(
                reading.turns, settings.EVENTVIEWER_PAGE_SIZE, params["at"], params["before"], params["after"]
            )
        except NotOnBranch as e:
            raise Http404(f"Event {e.args[0]!r} is not on this branch.") from None
        context["window"] = span
        context["rows"] = _rows(reading, span)
        context["at"] = params["at"]
        if request.htmx and (params["before"] or params["after"]) and not request.htmx.history_restore_request:
            partial = "earlier" if params["before"] else "later"
            return render(request, f"conversations/detail.html#{partial}", context)
        context["problems"] = problems_near(reading, span)
    context["diagram"] = cached_diagram(scope, leaf, reading)
    context["branches"], context["branch_total"] = _branches(conversation)
    if not scope.read_only and request.user.is_authenticated:
        context["share_links"] = conversation.share_links.all()[:SHARE_LINKS_LISTED]
        context["share_form"] = ShareForm()
    if request.htmx and not request.htmx.history_restore_request:
        return render(request, "conversations/detail.html#workspace", context)
    return render(request, "conversations/detail.html", context)


@require_safe
@vary_on_headers("HX-Request")
def conversation_list(request: HttpRequest) -> HttpResponse:
    form = checked(ConversationListForm(request.GET))
    conversations = Conversation.objects.shown()
    q = form.cleaned_data["q"].strip()
    if q:
        match = Q(title__icontains=q)
        as_id = q.lower().replace("-", "")
        if as_id and all(c in "0123456789abcdef" for c in as_id):
            match |= Q(conversation_id__startswith=as_id)
        conversations = conversations.filter(match)
    conversations = conversations.order_by(*form.ordering()).defer("skeleton")
    page = Paginator(conversations, settings.EVENTVIEWER_LIST_PAGE_SIZE).get_page(form.cleaned_data["page"] or 1)
    sort = form.cleaned_data["sort"] or "imported"
    direction = form.cleaned_data["dir"] or ("asc" if sort == "title" else "desc")
    columns = []
    for key, label in LIST_COLUMNS:
        natural = "asc" if key == "title" else "desc"
        flipped = {"asc": "desc", "desc": "asc"}[direction]
        columns.append((key, label, key not in ("title", "status", "imported"), flipped if key == sort else natural))
    context = {
        "page": page,
        "q": q,
        "sort": sort,
        "dir": direction,
        "columns": columns,
        "total": Conversation.objects.shown().count(),
    }
    if request.htmx and not request.htmx.history_restore_request:
        return render(request, "conversations/list.html#table", context)
    return render(request, "conversations/list.html", context)


@require_safe
@vary_on_headers("HX-Request")
def conversation(request: HttpRequest, conversation_id: str) -> HttpResponse:
    found = get_conversation(conversation_id)
    if conversation_id != found.conversation_id:
        query = request.GET.urlencode()
        return redirect(found.get_absolute_url() + (f"?{query}" if query else ""))
    return conversation_page(request, Scope(found), valid(PathForm, request.GET))


def diagram_response(request: HttpRequest, scope: Scope) -> HttpResponse:
    """The diagram alone, as a standalone SVG document."""
    params = valid(EventForm, request.GET)
    conversation = scope.conversation
    leaf = get_leaf(conversation, params["leaf"])
    svg = '<?xml version="1.0" encoding="UTF-8"?>\n' + str(cached_diagram(scope, leaf))
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    response["Content-Security-Policy"] = SVG_CSP
    response["Content-Disposition"] = f'inline; filename="{conversation.conversation_id}.svg"'
    return response


@require_safe
def diagram_svg(request: HttpRequest, conversation_id: str) -> HttpResponse:
    return diagram_response(request, Scope(get_conversation(conversation_id)))


@require_POST
@login_required
def set_head(request: HttpRequest, conversation_id: str) -> HttpResponse:
    conversation = get_conversation(conversation_id)
    form = checked(HeadForm(request.POST), "request")
    event = get_event(conversation, form.cleaned_data["leaf"])
    if not event.is_tree_node:
        raise BadRequest(f"Event {event.event_id!r} is a {event.kind}, which is not on any branch.")
    with transaction.atomic():
        # An import of this conversation holds this lock: wait for it, then start from its result.
        conversation = Conversation.objects.select_for_update().get(pk=conversation.pk)
        conversation.head = event
        conversation.refresh_figures()
    messages.success(request, "This branch is now the conversation's default (HEAD).")
    return redirect(conversation.get_absolute_url())


@require_safe
def base_state(request: HttpRequest, conversation_id: str) -> HttpResponse:
    """base_state.json as imported, as a download: the only place that reads it."""
    conversation = get_conversation(conversation_id)
    packed = ConversationState.objects.filter(conversation=conversation).values_list("packed", flat=True).first()
    if packed is None:
        raise Http404("This conversation was imported without a base_state.json.")
    response = HttpResponse(unpack(packed), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{conversation.conversation_id}-base_state.json"'
    return response


@require_http_methods(["GET", "HEAD", "POST"])
@login_required
def delete(request: HttpRequest, conversation_id: str) -> HttpResponse:
    """Ask first (GET); then hide the conversation at once and delete it in the
    background (POST): a big one takes a while, a batch of events at a time."""
    conversation = get_conversation(conversation_id)
    if request.method != "POST":
        subagents = conversation.subagent_conversations()
        return render(request, "conversations/delete.html", {"conversation": conversation, "subagents": subagents})
    tasks.delete_in_background(Conversation.objects.filter(pk=conversation.pk))
    messages.success(request, f"Deleting {conversation} ({conversation.event_count:,} events) in the background.")
    return redirect("eventviewer:conversation-list")
