"""Two branches side by side: of one conversation, or of two conversations that share
their first events (a copy continued elsewhere). The shared events fold into one line;
the continuations are aligned step by step (``trajectory.compare``); each side says how
it ended, what it cost and which files it changed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import BadRequest
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from eventviewer.forms import CompareForm
from eventviewer.lookups import get_conversation, get_leaf, get_page, valid
from eventviewer.models import Conversation, Event
from eventviewer.scope import PageScope, Scope, SharedScope
from eventviewer.trajectory import compare, diagram, files, kinds
from eventviewer.trajectory.cards import Card
from eventviewer.trajectory.diff import PAGE_SECONDS, Budget, Diff, unified
from eventviewer.trajectory.events import Light
from eventviewer.trajectory.ids import normalize_conversation_id
from eventviewer.trajectory.kinds import card_for
from eventviewer.trajectory.projection import assistant_turns
from eventviewer.trajectory.reading import Reading
from eventviewer.trajectory.usage import Usage
from eventviewer.views import HtmxHttpRequest, is_partial
from eventviewer.views.share import shared_view

ROWS_PER_PAGE = 100  # rows of the comparison on one page (a folded run of steps alike is one)
ALIKE_LISTED = 20  # steps named in a folded run of steps alike
EDITS_SHOWN = 100  # edits of each side whose file changes the page shows (each side's Files tab has them all)


@dataclass
class Side:
    """One of the two branches: where it lives, and what it holds after the shared events."""

    name: str  # "a" or "b"
    scope: PageScope  # its conversation's links (a share link's, under one)
    leaf: Event
    reading: Reading
    ref: str  # how the URL names it: the leaf's id, or <conversation-id>:<leaf id>
    tail: list[Light] = field(default_factory=list)
    steps: list[compare.Step] = field(default_factory=list)
    budget: Budget | None = None  # the page's time for matching the lines of diffs, shared by both sides
    left_out: int = 0  # events after the first compare.MAX_STEPS steps, not compared
    read: Callable[[list[Light]], dict[str, dict[str, Any]]] | None = None  # events -> their JSON by id

    @property
    def conversation(self) -> Conversation:
        return self.scope.conversation

    @property
    def last(self) -> Light:
        return self.reading.path[-1]

    @property
    def outcome(self) -> str:
        return kinds.outcome(self.last)

    @cached_property
    def turns(self) -> int:
        return assistant_turns(self.tail)

    @property
    def tool_calls(self) -> int:
        return sum(len(s.calls) for s in self.steps)

    @cached_property
    def usage(self) -> Usage | None:
        return self.conversation.usage_of(self.tail)

    @cached_property
    def edits(self) -> list[Light]:
        return [e for e in self.tail if e.effect == files.EDIT]

    @cached_property
    def files(self) -> list[files.FileHistory]:
        """The files its first EDITS_SHOWN edits after the shared events changed."""
        return files.by_file(self.conversation.file_changes(self.edits[:EDITS_SHOWN], self.budget), self.budget)

    @property
    def more_edits(self) -> int:
        return max(0, len(self.edits) - EDITS_SHOWN)

    def url(self, event_id: str) -> str:
        """An event on this branch."""
        return self.scope.url(leaf=self.leaf.event_id, at=event_id) + f"#event-{event_id}"


def _side(scope: Scope, name: str, raw: str) -> Side:
    """The branch ``raw`` names: ``<event-id>`` in the page's conversation, or
    ``<conversation-id>:<event-id>`` (under a share link, one it opens)."""
    prefix, colon, rest = raw.partition(":")
    if colon and normalize_conversation_id(prefix):
        side_scope = scope.of(get_conversation(prefix))
        if side_scope is None:
            raise Http404(f"There is no conversation {prefix}.")
        leaf_id = rest
    elif isinstance(scope, PageScope):
        side_scope, leaf_id = scope, raw
    else:
        raise BadRequest(f"{name}: name the conversation too, as <conversation-id>:<event-id>")
    if not leaf_id:
        raise BadRequest(f"{name}: name the branch by the id of its last event")
    leaf = get_leaf(side_scope.conversation, leaf_id)
    assert leaf is not None
    limit = settings.EVENTVIEWER_COMPARE_MAX_EVENTS
    if (leaf.depth or 0) >= limit:
        raise BadRequest(
            f"{name}: the branch has {(leaf.depth or 0) + 1:,} events, over the {limit:,} that Compare reads "
            "(EVENTVIEWER_COMPARE_MAX_EVENTS): read it on its own page, or compare shorter branches"
        )
    ref = leaf.event_id if side_scope.conversation == scope.conversation else f"{prefix}:{leaf.event_id}"
    return Side(name, side_scope, leaf, side_scope.conversation.read_path(leaf), ref)


@dataclass
class Cell:
    """One side of a row: a step as cards."""

    step: compare.Step
    cards: list[tuple[Light, Card, str]]  # each event with its card and its place on its branch


@dataclass
class ShownRow:
    """One row of the comparison as the page shows it."""

    kind: str  # compare.SAME, CHANGED, ONLY_A or ONLY_B
    a: Cell | None = None
    b: Cell | None = None
    alike: list[tuple[compare.Step, compare.Step]] = field(default_factory=list)  # a folded run, the first few
    count: int = 0  # steps in a folded run
    diffs: list[tuple[str, Diff]] = field(default_factory=list)  # what differs between two aligned steps


def _same_events(a: Side, b: Side) -> Callable[[Light, Light], bool]:
    """When an event of one side is the same as the other's: the same row in one
    conversation; across two, the same id or the same bytes."""
    if a.conversation.pk == b.conversation.pk:
        return lambda x, y: x.pk == y.pk
    digests = dict(
        Event.objects.filter(pk__in=[e.pk for e in (*a.reading.path, *b.reading.path)]).values_list("pk", "digest")
    )
    return lambda x, y: x.event_id == y.event_id or digests[x.pk] == digests[y.pk]


def _fill(side: Side, start: int) -> None:
    """The side's continuation from ``start``, its first compare.MAX_STEPS steps described
    from their JSON (read a few hundred events at a time, not kept)."""
    side.tail = list(side.reading.path[start:])
    found = compare.steps(side.tail[: compare.MAX_STEP_EVENTS], side.reading.pairing.result_for)

    def read(events: list[Light]) -> dict[str, dict[str, Any]]:
        payloads = side.conversation.payloads(e.pk for e in events)
        return {e.event_id: payloads.get(e.pk, {}) for e in events}

    side.steps = compare.described(found, read)
    side.read = read
    if side.steps:
        last = side.steps[-1].events[-1].seq
        side.left_out = sum(1 for e in side.tail if e.seq > last and e.kind not in kinds.SIDE_KINDS)


def _cell(side: Side, step: compare.Step, data: dict[str, dict[str, Any]]) -> Cell:
    return Cell(
        step, [(e, card_for(data.get(e.event_id, {"kind": e.kind})), side.url(e.event_id)) for e in step.events]
    )


def _diffs(x: compare.Step, y: compare.Step, budget: Budget | None) -> list[tuple[str, Diff]]:
    found = []
    if x.key.text != y.key.text:
        what = {"calls": "arguments", "message": "text"}.get(x.key.kind, "content")
        found.append((what, unified(x.key.text, y.key.text, "a", "b", budget=budget)))
    if x.output != y.output:
        found.append(("output", unified(x.output, y.output, "a", "b", budget=budget)))
    return found


def _shown(side: Side, steps: list[compare.Step]) -> dict[str, dict[str, Any]]:
    """The JSON of the steps a page shows, and those steps described whole (for their diffs)."""
    assert side.read is not None
    data = side.read([e for step in steps for e in step.events])
    for step in steps:
        compare.describe(step, data)
    return data


def _lines(rows: list[compare.AlignedRow], a: Side, b: Side) -> list[ShownRow]:
    cells = [p for row in rows if row.kind != compare.SAME for p in row.pairs]
    data_a = _shown(a, [a.steps[p.a] for p in cells if p.a is not None])
    data_b = _shown(b, [b.steps[p.b] for p in cells if p.b is not None])
    lines = []
    for row in rows:
        if row.kind == compare.SAME:
            # A SAME row pairs a step of each side: neither index is None.
            alike = [(a.steps[p.a], b.steps[p.b]) for p in row.pairs[:ALIKE_LISTED]]  # type: ignore[index]
            lines.append(ShownRow(row.kind, alike=alike, count=len(row.pairs)))
            continue
        (pair,) = row.pairs
        line = ShownRow(row.kind)
        if pair.a is not None:
            line.a = _cell(a, a.steps[pair.a], data_a)
        if pair.b is not None:
            line.b = _cell(b, b.steps[pair.b], data_b)
        if line.a and line.b:
            line.diffs = _diffs(line.a.step, line.b.step, a.budget)
        lines.append(line)
    return lines


def _picker(request: HtmxHttpRequest, scope: Scope, a: Side | None) -> HttpResponse:
    """Pick a branch in the diagram: the first one, then the one to compare it with."""
    conversation = scope.conversation
    if conversation is None:
        raise BadRequest("Name both branches: /compare/?a=<conversation-id>:<event-id>&b=<conversation-id>:<event-id>")
    path = a.reading.path if a is not None and a.conversation.pk == conversation.pk else []
    key = f"compare-diagram:{conversation.pk}:{conversation.updated_at.timestamp()}:{scope.base}:{a.ref if a else ''}"
    svg = cache.get(key)
    if svg is None:

        def link(event_id: str) -> str:
            """Clicking a leaf picks A, then B."""
            return scope.page_url("compare/", **({"a": a.ref, "b": event_id} if a else {"a": event_id}))

        svg = diagram.diagram_svg(conversation.skeleton, path=path, problems={}, link=link)
        cache.set(key, svg, settings.EVENTVIEWER_DIAGRAM_CACHE_SECONDS)
    leaves = sorted((n for n in conversation.skeleton.get("nodes", []) if n["leaf"]), key=lambda n: -n["seq"])
    context = {
        "conversation": conversation,
        "scope": scope,
        "a": a,
        # Built from escaped text and sanitized (see trajectory.diagram), as on the branch page.
        "diagram": mark_safe(svg),
        "leaves": leaves[:40],
    }
    return render(request, "compare/pick.html", context)


def compare_page(request: HtmxHttpRequest, scope: Scope) -> HttpResponse:
    params = valid(CompareForm, request.GET)
    scope = scope.viewing(params["view"])
    a = _side(scope, "a", params["a"]) if params["a"] else None
    if a is None or not params["b"]:
        return _picker(request, scope, a)
    b = _side(scope, "b", params["b"])
    a.budget = b.budget = Budget(PAGE_SECONDS)
    shared = compare.common_prefix(a.reading.path, b.reading.path, _same_events(a, b))
    _fill(a, shared)
    _fill(b, shared)
    rows = compare.rows(compare.align([s.key for s in a.steps], [s.key for s in b.steps]), a.steps, b.steps)
    page = get_page(rows, ROWS_PER_PAGE, params["page"], "the comparison has {pages}.")
    before = page.number - 1
    context = {
        "conversation": scope.conversation or a.conversation,
        "scope": scope,
        "a": a,
        "b": b,
        "sides": (a, b),
        "shared": shared,
        "fork": a.reading.path[shared - 1] if shared else None,
        "lines": _lines(list(page.object_list), a, b),
        "max_steps": compare.MAX_STEPS,
        "counts": {
            kind: sum(1 for r in rows if r.kind == kind) for kind in (compare.CHANGED, compare.ONLY_A, compare.ONLY_B)
        },
        "alike": sum(len(r.pairs) for r in rows if r.kind == compare.SAME),
        "page": page.number,
        "pages": page.paginator.num_pages,
        # The first page's URL has no page=: it is the comparison's own URL.
        "previous_url": scope.page_url("compare/", a=a.ref, b=b.ref, page=str(before) if before > 1 else None)
        if page.has_previous()
        else None,
        "next_url": scope.page_url("compare/", a=a.ref, b=b.ref, page=str(page.next_page_number()))
        if page.has_next()
        else None,
        "swap_url": scope.page_url("compare/", a=b.ref, b=a.ref),
    }
    if is_partial(request):
        return render(request, "compare/compare.html#comparison", context)
    return render(request, "compare/compare.html", context)


@require_safe
@vary_on_headers("HX-Request")
def branch_compare(request: HtmxHttpRequest, conversation_id: str) -> HttpResponse:
    return compare_page(request, PageScope(get_conversation(conversation_id)))


@require_safe
@vary_on_headers("HX-Request")
def conversations_compare(request: HtmxHttpRequest) -> HttpResponse:
    """Branches of any two conversations: ``a`` and ``b`` each name their conversation."""
    return compare_page(request, Scope(None))


@require_safe
@vary_on_headers("HX-Request")
@shared_view
def shared_compare(request: HtmxHttpRequest, scope: SharedScope) -> HttpResponse:
    return compare_page(request, scope)
