"""Which turns of a long branch a page shows, and which problems it lists.

A branch of 10,000 events is read whole (it is small rows) but shown a window of turns
at a time: the newest, the one around an event, or the one just before or after the
window on screen. The problem list covers the window and its surroundings so that
keyboard navigation can follow problems past the window's edges."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from .failures import MISMATCHED, PENDING, PROBLEMS, Failures
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
    wanted = {found.beside.get(eid, eid) for eid in flagged}
    turn_of = {eid: i for i, turn in enumerate(reading.turns) for eid in turn.event_ids if eid in wanted}

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
