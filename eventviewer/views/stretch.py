"""What a page reads of a branch: a stretch of it, the window of turns it shows from it,
and their pairing; every branch page and the path API read through here.

A branch of at most EVENTVIEWER_FULL_READ_MAX events is one stretch: all of it, read once
and kept (``Conversation.read_path``). A longer one is read around the window
(``EventQuerySet.on_branch``), paired exactly for what it shows (``Conversation.pairing_of``);
what would need all of it is left out and the page says so: its turn and tool-call
counts, the model's view, its timeline, usage, failure summary and workspace drift, and
its problem counts unless they were counted at import (HEAD's branch)."""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import replace
from functools import cache
from typing import Any, TypeVar

from django.conf import settings
from django.http import Http404
from django.utils.safestring import mark_safe

from eventviewer import caches, cardhtml
from eventviewer.models import Conversation, Event, read_whole
from eventviewer.scope import PageScope
from eventviewer.trajectory.events import Light
from eventviewer.trajectory.failures import Failures, failures
from eventviewer.trajectory.pairing import LeafProblems
from eventviewer.trajectory.projection import Turn
from eventviewer.trajectory.reading import Reading, read_stretch
from eventviewer.trajectory.timeline import Axis, timeline_axis, timeline_svg
from eventviewer.trajectory.window import NotOnBranch, Span, part_window, problems_near, stretch_for, window
from eventviewer.views import HtmxHttpRequest, branches, is_partial
from eventviewer.views import turns as branch_turns
from eventviewer.views.comments import review_of
from eventviewer.views.problems import Reasons, problem_lines

ANCHORS = ("at", "before", "after")

T = TypeVar("T")


def read_depths(
    conversation: Conversation, leaf: Event, start: int, stop: int
) -> tuple[Reading, list[Light], Container[str]]:
    """The reading of the branch ending at ``leaf`` that shows its depths ``start`` to
    ``stop - 1``: all of it when it is short enough, else those depths alone. Returns the
    reading, those events, and the ids of the branch's events it read (for links)."""
    if read_whole(leaf):
        reading = conversation.read_path(leaf)
        return reading, list(reading.path[start:stop]), reading.position
    events = Event.objects.on_branch(leaf, start, stop)
    pairing, on_path = conversation.pairing_of(leaf, events, known=events)
    return read_stretch(events, [], pairing), events, on_path | {e.event_id for e in events}


class Stretch:
    """What a page of a branch read: the reading, the turns it walks through, the window
    over them, and the ids of the branch's events it read."""

    reading: Reading
    turns: Sequence[Turn]
    span: Span
    on_path: Container[str]

    def __init__(self, conversation: Conversation, leaf: Event, params: dict[str, Any], view: str = branch_turns.FULL):
        self.conversation, self.leaf = conversation, leaf
        mode = next((k for k in ANCHORS if params.get(k)), "")
        anchor = params[mode] if mode else ""
        self._anchor_row: tuple[int | None, str | None] | None = None
        depth = leaf.depth or 0
        if read_whole(leaf):
            start, stop = 0, depth + 1
        else:
            anchor_depth = self._anchor_of(anchor)[0] if anchor else None
            if anchor and (anchor_depth is None or anchor_depth > depth):
                raise Http404(f"Event {anchor!r} is not on this branch.")
            start, stop = stretch_for(depth, anchor_depth, mode)
        reading, events, self.on_path = read_depths(conversation, leaf, start, stop)
        size = settings.EVENTVIEWER_PAGE_SIZE
        if reading.whole:
            turns = caches.branch_memo(
                conversation, leaf.pk, f"turns:{view}", lambda: branch_turns.display_turns(reading, view)
            )

        def show(mode: str, anchor: str) -> tuple[Sequence[Turn], Span]:
            anchors = {k: anchor if k == mode else "" for k in ANCHORS}
            if reading.whole:
                return turns, window(turns, size, **anchors)
            return part_window(events, depth, size, **anchors)

        try:
            self.turns, self.span = show(mode, anchor)
        except NotOnBranch:
            # An event beside the branch (a side event: a hook) is shown after the event it ran beside.
            parent = self._anchor_of(anchor)[1]
            if mode != "at" or parent is None or parent not in self.on_path:
                raise Http404(f"Event {anchor!r} is not on this branch.") from None
            try:
                self.turns, self.span = show("at", parent)
            except NotOnBranch:
                raise Http404(f"Event {anchor!r} is not on this branch.") from None
        self.reading = reading if reading.whole else replace(reading, turns=list(self.turns))

    def _anchor_of(self, anchor: str) -> tuple[int | None, str | None]:
        """The depth of the event a page is anchored at, and its parent's id."""
        if self._anchor_row is None:
            row = self.conversation.events.filter(event_id=anchor).values_list("depth", "parent__event_id").first()
            self._anchor_row = row or (None, None)
        return self._anchor_row


def figures(conversation: Conversation, leaf: Event) -> dict[str, Any]:
    """What the page of a long branch says of the whole branch: its length, and its problem
    counts when they were counted at import (HEAD's branch); None: not counted."""
    counted = leaf.pk == conversation.head_id
    return {
        "events": (leaf.depth or 0) + 1,
        "limit": settings.EVENTVIEWER_FULL_READ_MAX,
        "pending": conversation.pending_count if counted else None,
        "mismatched": conversation.mismatch_count if counted else None,
        "root": Event.objects.on_branch(leaf, 0, 1)[0].event_id,
    }


def leaf_problems(conversation: Conversation) -> dict[str, LeafProblems]:
    """The branch list's problem counts that need no walk of the tree: HEAD's, counted at import."""
    head = conversation.skeleton.get("head")
    return {head: LeafProblems(conversation.pending_count, conversation.mismatch_count)} if head else {}


def first_failure(conversation: Conversation, leaf: Event, view: str) -> str | None:
    """The id of the first failure of a branch read whole, as its page's summary names it,
    when it is on the turns shown (not below the branch); None otherwise."""
    if not read_whole(leaf):
        return None
    reading = conversation.read_path(leaf)

    def remembered(name: str, compute: Callable[[], T]) -> T:
        return caches.branch_memo(conversation, leaf.pk, f"{name}:{view}", compute)

    turns = remembered("turns", lambda: branch_turns.display_turns(reading, view))
    side = remembered("side", lambda: conversation.side_failures(list(reading.path)))
    ended = remembered("ended", lambda: conversation.run_end_errors(reading.path[-1]))
    found: Failures = remembered("found", lambda: failures(reading, side, ended))
    summary, _ = remembered("failures", lambda: branch_turns.failure_summary(conversation, found, turns))
    if summary.first is None or summary.first_below:
        return None
    first: str = summary.first
    return first


def page_context(
    request: HtmxHttpRequest, scope: PageScope, leaf: Event, params: dict[str, Any], view: str, blind: bool = False
) -> dict[str, Any]:
    """The branch part of a branch's page: its window's rows and problems, and what the page
    says of the whole branch (all of it when the branch was read whole); ``blind``: the
    other reviewers' verdicts and labels wait for one's own."""
    conversation = scope.conversation
    stretch = Stretch(conversation, leaf, params, view)
    reading, turns, span = stretch.reading, stretch.turns, stretch.span
    context: dict[str, Any] = {"reading": reading, "window": span, "at": params["at"], "view": view}
    reasons = Reasons(scope, leaf, reading.pairing, stretch.on_path)
    ended: Sequence[Light] = ()
    if reading.whole:
        # What a page derives from the whole branch is kept with its reading (see caches.branch_memo).
        def remembered(name: str, compute: Callable[[], T]) -> T:
            return caches.branch_memo(conversation, leaf.pk, f"{name}:{view}", compute)

        side = remembered("side", lambda: conversation.side_failures(list(reading.path)))
        ended = remembered("ended", lambda: conversation.run_end_errors(reading.path[-1]))
        found: Failures = remembered("found", lambda: failures(reading, side, ended))
        context["branch_usage"] = remembered("usage", lambda: conversation.usage_of(reading.path))
        context["failures"], context["first_failure"] = remembered(
            "failures", lambda: branch_turns.failure_summary(conversation, found, turns)
        )
        context["drift"] = conversation.workspace_drift(reading.path)
        context["review"] = review_of(request, scope, leaf, reading, blind=blind)

        def strip() -> tuple[str, Axis | None]:
            def link(eid: str) -> str:
                url: str = scope.url(leaf=leaf.event_id, at=eid)
                return url + f"#event-{eid}"

            marks = branch_turns.timeline_marks(reading, turns)
            return timeline_svg(marks, link), timeline_axis(marks)

        svg, context["timeline_axis"] = remembered(f"timeline:{scope.base}{scope.query({}, keep=True)}", strip)
        context["timeline"] = mark_safe(svg)  # built from escaped text only (trajectory.timeline)
    else:
        side = conversation.side_failures_beside(reading.path)
        found = failures(reading, side)
        context["deep"] = figures(conversation, leaf)
    context["rows"] = rows = branch_turns.build_rows(conversation, reading, turns, span, leaf, reasons, found)
    if not reading.whole:
        index = 0
        for row in rows:  # numbered by depth: a stretch's turns are not counted from the root
            if not row.side:
                index = row.turn.events[0].depth or 0
            row.index = index
    if not (is_partial(request) and (params["before"] or params["after"])):
        only = params.get("problem") or ""
        near = problems_near(reading, span, found=found, only=only)
        # Described when the page's kept list (below) is not: the template calls it.
        context["problems"] = cache(lambda: problem_lines(conversation, near, reading, reasons, side, ended))
        context["problem_filter"] = only
        context["problem_total"] = len(found.kinds)
        context["problems_key"] = cardhtml.fragment_key(
            "problems", scope, leaf.event_id, only, tuple(near), len(found.kinds), reading.whole, len(reading.path)
        )
    return context


def branch_list(request: HtmxHttpRequest, scope: PageScope, leaf: Event | None) -> dict[str, Any]:
    """The branch list against the branch ending at ``leaf``. Against a long branch it is
    told apart by its kept events (from the skeleton), with the problem counts known
    without walking the tree."""
    conversation = scope.conversation
    if leaf is None or read_whole(leaf):
        return branches.branch_list(request, scope, conversation.read_path(leaf) if leaf else None)
    return branches.branch_list(
        request,
        scope,
        None,
        leaf=leaf,
        selected=lambda: conversation.kept_on_branch(leaf),
        problems=leaf_problems(conversation),
    )
