"""Which turns of a long branch a page shows, and which problems it lists.

A branch of 10,000 events is read whole (it is small rows) but shown a window of turns
at a time: the newest, the one around an event, or the one just before or after the
window on screen. The problem list covers the window and its surroundings so that
keyboard navigation can follow problems past the window's edges."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .events import Light
from .failures import MISMATCHED, PENDING, PROBLEMS, Failures
from .pairing import Mismatch
from .projection import Turn, project
from .reading import Reading

PROBLEM_REACH = 100  # problems listed on each side of the window


class NotOnBranch(LookupError):
    """The event a window was asked around is not on the branch."""


class Span(NamedTuple):
    """The turns a page shows of a reading: ``start`` to ``end - 1`` of its ``total``.
    A stretch of a longer branch (``part_window``) does not count the branch's turns: it
    gives how many of the branch's events come before and after those shown instead."""

    start: int  # first turn shown, of the reading's
    end: int  # one past the last
    total: int  # turns read
    earlier: int | None = None  # a stretch's: events on the branch before the first one shown
    later: int | None = None  # a stretch's: events on the branch after the last one shown

    @property
    def has_earlier(self) -> bool:
        return self.start > 0 if self.earlier is None else self.earlier > 0

    @property
    def has_later(self) -> bool:
        return self.end < self.total if self.later is None else self.later > 0

    @property
    def later_count(self) -> int:
        """Turns after those shown; for a stretch, events."""
        return self.total - self.end if self.later is None else self.later


class PlacedProblem(NamedTuple):
    event_id: str
    mismatch: Mismatch | None  # None: a pending action, or a failure
    where: str  # "before", "in" or "after" the window
    code: str = PENDING  # which problem or failure (failures.KINDS)


def window(turns: Sequence[Turn], size: int, at: str = "", before: str = "", after: str = "") -> Span:
    """The newest ``size`` turns, or those around ``at``, or the ``size`` just before
    ``before`` / just after ``after`` (each an event id). Raises NotOnBranch."""
    total = len(turns)
    anchor = at or before or after
    if not anchor:
        return Span(max(0, total - size), total, total)
    index = next((i for i, t in enumerate(turns) if anchor in t.event_ids), None)
    if index is None:
        raise NotOnBranch(anchor)
    if before:
        return Span(max(0, index - size), index, total)
    if after:
        return Span(index + 1, min(total, index + 1 + size), total)
    start = max(0, min(index - size // 3, total - size))
    return Span(start, min(total, start + size), total)


def problems_near(
    reading: Reading, span: Span, reach: int = PROBLEM_REACH, found: Failures | None = None, only: str = ""
) -> list[PlacedProblem]:
    """The problems (or, given ``found``, the problems and failures; given ``only``, those
    of that kind) in the window and up to ``reach`` on each side, in path order. The
    nearest pending and mismatched ones are kept too, for N/P to reach past the window."""
    if found is None:
        found = Failures(
            {eid: MISMATCHED if eid in reading.pairing.mismatched else PENDING for eid in reading.problem_ids}, {}
        )
    flagged = {eid: code for eid, code in found.kinds.items() if not only or code == only}
    turn_of = reading.turn_of

    def where(eid: str) -> str:
        turn = turn_of.get(found.beside.get(eid, eid), span.start)
        return "before" if turn < span.start else "after" if turn >= span.end else "in"

    placed = [(eid, where(eid)) for eid in flagged]
    keep: set[str] = set()
    for codes in (None, PROBLEMS):
        chosen = [p for p in placed if codes is None or flagged[p[0]] in codes]
        keep.update(eid for eid, w in [p for p in chosen if p[1] == "before"][-reach:])
        keep.update(eid for eid, w in chosen if w == "in")
        keep.update(eid for eid, w in [p for p in chosen if p[1] == "after"][:reach])
    return [
        PlacedProblem(eid, reading.pairing.mismatched.get(eid), w, flagged[eid]) for eid, w in placed if eid in keep
    ]


# A branch too long to read at once (EVENTVIEWER_FULL_READ_MAX) is shown from a stretch of
# it read around the window: the events at some depths, root first. A shorter one is one
# stretch: all of it.
EVENTS_READ = 2000  # events read for a window of such a branch


class Depths(NamedTuple):
    """The depths of a branch to read: ``start`` to ``stop - 1``."""

    start: int
    stop: int


def stretch_for(leaf_depth: int, anchor_depth: int | None = None, mode: str = "", reach: int = EVENTS_READ) -> Depths:
    """What to read for the newest turns (no ``mode``), or those ``before``, ``after`` or
    ``at`` the event at ``anchor_depth``: that event too, and a quarter of ``reach`` on its
    other side, so that a batch of calls it sits in (the model does not see every event)
    is read whole."""
    end = leaf_depth + 1
    if not mode or anchor_depth is None:
        return Depths(max(0, end - reach), end)
    context = reach // 4
    if mode == "before":
        return Depths(max(0, anchor_depth - reach), min(end, anchor_depth + context))
    if mode == "after":
        return Depths(max(0, anchor_depth - context), min(end, anchor_depth + reach))
    return Depths(max(0, anchor_depth - reach // 2), min(end, anchor_depth + reach // 2 + 1))


def _unsure(turn: Turn) -> bool:
    """A batch (or an event the model does not see, which a batch may reach past) at a cut
    end of a stretch may belong with events that were not read."""
    return turn.is_batch or not turn.visible


def part_window(
    events: Sequence[Light], leaf_depth: int, size: int, at: str = "", before: str = "", after: str = ""
) -> tuple[list[Turn], Span]:
    """The turns of a stretch of a branch (``events``, consecutive depths, root first,
    holding the anchor event when there is one) and the window over them (``window``),
    with the branch's events before and after it counted. Turns at a cut end that may
    reach past it are left out unless they hold the anchor; raises NotOnBranch when the
    anchor is not among ``events``."""
    turns = project(events)
    anchor = at or before or after
    lo, hi = 0, len(turns)
    if events and (events[0].depth or 0) > 0:
        while lo < hi and _unsure(turns[lo]) and anchor not in turns[lo].event_ids:
            lo += 1
    if events and (events[-1].depth or 0) < leaf_depth:
        while hi > lo and _unsure(turns[hi - 1]) and anchor not in turns[hi - 1].event_ids:
            hi -= 1
    if lo == hi:  # nothing whole in it (one batch longer than the stretch): show what was read
        lo, hi = 0, len(turns)
    turns = turns[lo:hi]
    start, end, total = window(turns, size, at, before, after)[:3]
    shown = [e.depth or 0 for t in turns[start:end] for e in t.events]
    if not shown:  # nothing before (or after) the anchor
        edge = next(e.depth or 0 for e in events if e.event_id == anchor)
        return turns, Span(start, end, total, edge if after else 0, leaf_depth - edge if before else 0)
    return turns, Span(start, end, total, min(shown), leaf_depth - max(shown))
