"""The conversation list, a conversation's branch page, its diagram, and moving HEAD."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

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
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from eventviewer import cards
from eventviewer.forms import BranchListForm, ConversationListForm, EventForm, HeadForm, PathForm, ShareForm
from eventviewer.lookups import checked, get_conversation, get_event, get_leaf, valid
from eventviewer.models import Conversation, Event, EventPayload, PathEvent, unpack
from eventviewer.scope import Scope
from eventviewer.trajectory import diagram, kinds
from eventviewer.trajectory.events import one_line
from eventviewer.trajectory.pairing import Mismatch
from eventviewer.trajectory.projection import Turn
from eventviewer.trajectory.reading import Reading
from eventviewer.trajectory.skeleton import Branch, describe_branches, event_label
from eventviewer.trajectory.window import NotOnBranch, PlacedProblem, Span, problems_near, window

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


class Part(NamedTuple):
    """A piece of a problem's reason: text, or an event id with the link to that event."""

    text: str
    href: str = ""
    anchor: str = ""  # an event on the branch shown, focused in place when it is loaded


@dataclass
class Entry:
    """One event of a turn, as a card with its pairing state."""

    event: PathEvent
    card: cards.Card
    pending: bool = False
    mismatch: Mismatch | None = None
    result_id: str = ""  # an action's result
    answers: str = ""  # the action a result answers
    stray_text: bool = False
    reason: list[Part] = field(default_factory=list)  # why it is pending or mismatched, ids linked


@dataclass
class Problem:
    """One line of the problem list."""

    event_id: str
    where: str  # "before", "in" or "after" the turns shown
    mismatch: Mismatch | None
    label: str  # the tool and command, or what the event is
    reason: list[Part]
    href: str


class Reasons:
    """Problem reasons as text with every event id in them linked: on the branch shown to
    the card, elsewhere to the event's page (which opens it on its own branch)."""

    def __init__(self, scope: Scope, leaf: Event, reading: Reading):
        self.scope, self.leaf, self.reading = scope, leaf.event_id, reading
        self.on_path = {e.event_id for e in reading.path}
        self.unmatched = reading.pairing.unmatched_for

    def href(self, event_id: str) -> str:
        if event_id in self.on_path:
            return self.scope.at_url(self.leaf, event_id)
        return self.scope.event_url(event_id, None)

    def link(self, event_id: str) -> Part:
        return Part(event_id, self.href(event_id), event_id if event_id in self.on_path else "")

    def _linked(self, text: str, ids: Sequence[str]) -> list[Part]:
        if not ids:
            return [Part(text)]
        pattern = "(" + "|".join(re.escape(i) for i in sorted(set(ids), key=len, reverse=True)) + ")"
        return [self.link(piece) if n % 2 else Part(piece) for n, piece in enumerate(re.split(pattern, text))]

    def of(self, event_id: str) -> list[Part]:
        mismatch = self.reading.pairing.mismatched.get(event_id)
        if mismatch is not None:
            parts = self._linked(mismatch.reason, mismatch.refs)
            if mismatch.action and mismatch.action not in mismatch.refs:
                parts += [Part(" (meant for action "), self.link(mismatch.action), Part(")")]
            return parts
        results = self.unmatched.get(event_id)
        if not results:
            return [Part("no result on this branch")]
        if len(results) == 1:
            return [Part("its only result does not match (see "), self.link(results[0]), Part(")")]
        parts = [Part(f"none of its {len(results)} results match (see ")]
        for n, result in enumerate(results):
            parts += [Part(", " if n else ""), self.link(result)]
        return [*parts, Part(")")]


@dataclass
class Row:
    turn: Turn
    entries: list[Entry] = field(default_factory=list)
    index: int = 0

    @property
    def anchor_id(self) -> str:
        return self.entries[0].event.event_id


def _rows(reading: Reading, span: Span, reasons: Reasons) -> list[Row]:
    turns = reading.turns[span.start : span.end]
    pks = [e.pk for t in turns for e in t.events]
    packed = dict(EventPayload.objects.filter(pk__in=pks).values_list("pk", "packed")) if pks else {}
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
                    reason=reasons.of(eid) if eid in pending or eid in pairing.mismatched else [],
                )
            )
        rows.append(row)
    return rows


def _problems(placed: list[PlacedProblem], reading: Reading, reasons: Reasons) -> list[Problem]:
    """The problem list's lines, each naming its tool and command (read from the events' JSON)."""
    by_id = {e.event_id: e for e in reading.path}
    events = [by_id[p.event_id] for p in placed]
    wanted = [e.pk for e in events if e.kind in (kinds.ACTION, kinds.OBSERVATION)]
    commands = {}
    for pk, packed in EventPayload.objects.filter(pk__in=wanted).values_list("pk", "packed"):
        commands[pk] = cards.build(orjson.loads(unpack(packed))).command
    return [
        Problem(
            p.event_id,
            p.where,
            p.mismatch,
            event_label(e.kind, e.source, e.tool_name, one_line(e.summary, 80), one_line(commands.get(e.pk, ""), 80)),
            reasons.of(p.event_id),
            reasons.href(p.event_id),
        )
        for p, e in zip(placed, events, strict=True)
    ]


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
            event_link=(lambda event_id: scope.at_url(leaf.event_id, event_id)) if leaf else None,
            htmx_target="#workspace",
        )
        cache.set(key, svg, settings.EVENTVIEWER_DIAGRAM_CACHE_SECONDS)
    # diagram_svg builds every label from escaped text and sanitizes the SVG dot
    # returns against an allowlist of elements and attributes.
    return mark_safe(svg)


BRANCH_COLUMNS = [  # key, heading, natural direction
    ("label", "Branch", "asc"),
    ("fork", "Forks at", "asc"),
    ("length", "Events", "desc"),
    ("outcome", "Outcome", "asc"),
    ("recent", "Last activity", "desc"),
]
BRANCH_SORTS: dict[str, Callable[[Branch], Any]] = {
    "label": lambda b: (b.first_label or b.label).casefold(),
    "fork": lambda b: -1 if b.fork_depth is None else b.fork_depth,
    "length": lambda b: b.depth,
    "outcome": lambda b: b.outcome,
    "recent": lambda b: b.seq,
}


def _branch_list(request: HttpRequest, scope: Scope, reading: Reading | None) -> dict[str, Any]:
    """The branch list's context: every branch described against the selected one, filtered
    (``bq``), sorted (``bsort``, ``bdir``) and paged (``bpage``), with the links that change it."""
    form = checked(BranchListForm(request.GET))
    data = form.cleaned_data
    q, sort = data["bq"].strip(), data["bsort"] or "recent"
    natural = {key: natural for key, _, natural in BRANCH_COLUMNS}
    direction = data["bdir"] or natural[sort]
    branches = describe_branches(scope.conversation.skeleton, [e.event_id for e in reading.path] if reading else [])
    total = len(branches)
    if q:
        needle = q.casefold()
        branches = [
            b
            for b in branches
            if any(needle in text.casefold() for text in (b.label, b.first_label, b.leaf, b.outcome, b.first or ""))
        ]
    branches.sort(key=lambda b: (BRANCH_SORTS[sort](b), b.seq), reverse=direction == "desc")
    page = Paginator(branches, BRANCHES_LISTED).get_page(data["bpage"] or 1)
    leaf = reading.path[-1].event_id if reading else ""
    keep = {"leaf": leaf, "bq": q, "bsort": data["bsort"], "bdir": data["bdir"]}
    columns = []
    for key, label, first_direction in BRANCH_COLUMNS:
        next_direction = {"asc": "desc", "desc": "asc"}[direction] if key == sort else first_direction
        columns.append((key, label, scope.url(**{**keep, "bsort": key, "bdir": next_direction})))
    return {
        "branches": page,
        "branch_total": total,
        "bq": q,
        "bsort": sort,
        "bdir": direction,
        "branch_columns": columns,
        "branch_keep": keep,  # a branch switch keeps the list as it is
        "branch_pages": {
            "previous": scope.url(**keep, bpage=str(page.previous_page_number())) if page.has_previous() else "",
            "next": scope.url(**keep, bpage=str(page.next_page_number())) if page.has_next() else "",
        },
    }


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
        "can_share": not scope.read_only and request.user.is_authenticated,
    }
    if request.htmx and request.htmx.target == "branch-list" and not request.htmx.history_restore_request:
        context.update(_branch_list(request, scope, reading))  # filtered, sorted or paged in place
        return render(request, "conversations/detail.html#branch-list", context)
    if reading:
        try:
            span = window(
                reading.turns, settings.EVENTVIEWER_PAGE_SIZE, params["at"], params["before"], params["after"]
            )
        except NotOnBranch as e:
            raise Http404(f"Event {e.args[0]!r} is not on this branch.") from None
        reasons = Reasons(scope, leaf, reading)
        context["window"] = span
        context["rows"] = _rows(reading, span, reasons)
        context["at"] = params["at"]
        if request.htmx and (params["before"] or params["after"]) and not request.htmx.history_restore_request:
            partial = "earlier" if params["before"] else "later"
            return render(request, f"conversations/detail.html#{partial}", context)
        context["problems"] = _problems(problems_near(reading, span), reading, reasons)
    context["diagram"] = cached_diagram(scope, leaf, reading)
    context["legend"] = diagram.LEGEND
    context.update(_branch_list(request, scope, reading))
    if context["can_share"]:
        context["share_links"] = conversation.share_links.all()[:SHARE_LINKS_LISTED]
        context["share_form"] = ShareForm()
    if request.htmx and not request.htmx.history_restore_request:
        return render(request, "conversations/detail.html#workspace", context)
    return render(request, "conversations/detail.html", context)


@require_GET
@vary_on_headers("HX-Request")
def conversation_list(request: HttpRequest) -> HttpResponse:
    form = checked(ConversationListForm(request.GET))
    conversations = Conversation.objects.all()
    q = form.cleaned_data["q"].strip()
    if q:
        match = Q(title__icontains=q)
        as_id = q.lower().replace("-", "")
        if as_id and all(c in "0123456789abcdef" for c in as_id):
            match |= Q(conversation_id__startswith=as_id)
        conversations = conversations.filter(match)
    conversations = conversations.order_by(*form.ordering()).defer("skeleton", "base_state")
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
        "total": Conversation.objects.count(),
    }
    if request.htmx and not request.htmx.history_restore_request:
        return render(request, "conversations/list.html#table", context)
    return render(request, "conversations/list.html", context)


@require_GET
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


@require_GET
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
