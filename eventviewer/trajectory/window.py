"""Which turns of a long branch a page shows, and which problems it lists.

A branch of 10,000 events is read whole (it is small rows) but shown a window of turns
at a time: the newest, the one around an event, or the one just before or after the
window on screen. The problem list covers the window and its surroundings so that
keyboard navigation can follow problems past the window's edges."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .pairing import Mismatch
from .projection import Turn
from .reading import Reading

PROBLEM_REACH = 100  # problems listed on each side of the window


class NotOnBranch(LookupError):
    """The event a window was asked around is not on the branch."""


class Span(NamedTuple):
    start: int  # first turn shown
    end: int  # one past the last
    total: int  # turns on the branch

    @property
    def has_earlier(self) -> bool:
        return self.start > 0

    @property
    def has_later(self) -> bool:
        return self.end < self.total

    @property
    def later_count(self) -> int:
        return self.total - self.end


class PlacedProblem(NamedTuple):
    event_id: str
    mismatch: Mismatch | None  # None: a pending action
    where: str  # "before", "in" or "after" the window


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


def problems_near(reading: Reading, span: Span, reach: int = PROBLEM_REACH) -> list[PlacedProblem]:
    """The problems in the window and up to ``reach`` on each side, in path order."""
    wanted = set(reading.problem_ids)
    turn_of = {eid: i for i, turn in enumerate(reading.turns) for eid in turn.event_ids if eid in wanted}

    def where(eid: str) -> str:
        return "before" if turn_of[eid] < span.start else "after" if turn_of[eid] >= span.end else "in"

    placed = [(eid, where(eid)) for eid in reading.problem_ids]
    before = [p for p in placed if p[1] == "before"][-reach:]
    after = [p for p in placed if p[1] == "after"][:reach]
    near = before + [p for p in placed if p[1] == "in"] + after
    return [PlacedProblem(eid, reading.pairing.mismatched.get(eid), w) for eid, w in near]
