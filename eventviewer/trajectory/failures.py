"""Problems and failures on a branch: everything a reader hunting the cause of a failed
run wants to walk through, each kind with its own name.

Pairing finds the problems of a branch (pending actions, mismatched results); each event
records its own failure when it is imported (``Light.failure``: agent and conversation
errors, non-zero exit codes, tool errors, invalid calls, rejections, hook blocks). A
blocked hook is often a side event (beside the branch, not on it): the caller passes
those of the branch in ``side``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .events import Light
from .kinds import (
    AGENT_ERROR_FAILURE,
    CONVERSATION_ERROR,
    CONVERSATION_ERROR_FAILURE,
    EXIT_CODE_FAILURE,
    HOOK_BLOCKED_FAILURE,
    INVALID_CALL_FAILURE,
    REJECTED_FAILURE,
    TOOL_ERROR_FAILURE,
)
from .projection import Turn
from .reading import Reading

PENDING, MISMATCHED = "pending", "mismatched"
PROBLEMS = (PENDING, MISMATCHED)  # what pairing finds: N/P walk these only

# Every kind, in the order a summary lists them: (code, one, many).
KINDS: tuple[tuple[str, str, str], ...] = (
    (PENDING, "pending action", "pending actions"),
    (MISMATCHED, "mismatched result", "mismatched results"),
    (CONVERSATION_ERROR_FAILURE, "conversation error", "conversation errors"),
    (AGENT_ERROR_FAILURE, "agent error", "agent errors"),
    (EXIT_CODE_FAILURE, "non-zero exit code", "non-zero exit codes"),
    (TOOL_ERROR_FAILURE, "tool error", "tool errors"),
    (INVALID_CALL_FAILURE, "invalid call", "invalid calls"),
    (REJECTED_FAILURE, "rejection", "rejections"),
    (HOOK_BLOCKED_FAILURE, "hook block", "hook blocks"),
)
CODES = tuple(code for code, _, _ in KINDS)
LABELS = {code: one for code, one, _ in KINDS}


@dataclass(frozen=True)
class Count:
    code: str
    count: int

    @property
    def label(self) -> str:
        one, many = next((o, m) for c, o, m in KINDS if c == self.code)
        return f"{self.count:,} {one if self.count == 1 else many}"


@dataclass(frozen=True)
class Summary:
    counts: list[Count]  # the kinds found, in KINDS order
    first: str | None  # the first failing event on the branch
    first_code: str | None
    first_turn: int | None  # its turn, counted from 1
    ended: tuple[str, ...] = ()  # the conversation errors that ended the run below the branch

    @property
    def total(self) -> int:
        return sum(c.count for c in self.counts)

    @property
    def ended_label(self) -> str:
        return Count(CONVERSATION_ERROR_FAILURE, len(self.ended)).label if self.ended else ""

    @property
    def first_below(self) -> bool:
        """The first failure is below the branch (no event on it failed): it has its own page."""
        return self.first is not None and self.first in self.ended


@dataclass
class Failures:
    kinds: dict[str, str]  # every failing event -> its kind, in branch order
    beside: dict[str, str]  # a failing side event -> the branch event it ran beside
    ended: tuple[str, ...] = ()  # conversation errors that ended the run below the branch (``run_end_errors``)

    def summary(self, turns: Sequence[Turn]) -> Summary:
        counts = {code: 0 for code in CODES}
        for code in self.kinds.values():
            counts[code] = counts.get(code, 0) + 1
        first = next(iter(self.kinds), None)
        first_turn = None
        if first is not None:
            on_branch = self.beside.get(first, first)
            first_turn = next((i + 1 for i, t in enumerate(turns) if on_branch in t.event_ids), None)
        return Summary(
            [Count(code, n) for code, n in counts.items() if n],
            first,
            self.kinds.get(first) if first is not None else None,
            first_turn,
            self.ended,
        )


def run_end_errors(head: Light, after: Sequence[Light]) -> list[Light]:
    """The ConversationErrorEvents that ended the run below HEAD. HEAD's rule passes over
    conversation errors, so those appended after HEAD hang below it (each legacy event is
    the previous one's child) and are not on its branch. ``after``: the tree events
    appended after HEAD, in order. They are the run's end when they are all conversation
    errors, each below HEAD or the one before; otherwise the run went on, and none is."""
    above = {head.pk}
    for event in after:
        if event.kind != CONVERSATION_ERROR or event.parent_pk not in above:
            return []
        above.add(event.pk)
    return list(after)


def failures(reading: Reading, side: Iterable[Light] = (), ended: Sequence[Light] = ()) -> Failures:
    """Every failing event of the branch, in branch order (a side event right after the
    event it ran beside; ``ended``, the conversation errors that ended the run below it
    (``run_end_errors``), last). A mismatched result counts as mismatched, whatever else it says."""
    pending, mismatched = set(reading.pairing.pending), reading.pairing.mismatched
    side_after: dict[int, list[Light]] = {}
    for event in side:
        if event.failure:
            side_after.setdefault(event.parent_pk or 0, []).append(event)
    found = Failures({}, {})
    for event in reading.path:
        if event.event_id in pending:
            found.kinds[event.event_id] = PENDING
        elif event.event_id in mismatched:
            found.kinds[event.event_id] = MISMATCHED
        elif event.failure:
            found.kinds[event.event_id] = event.failure
        for beside in side_after.get(event.pk, ()) if event.pk else ():
            found.kinds[beside.event_id] = beside.failure
            found.beside[beside.event_id] = event.event_id
    if ended and reading.path:
        for error in ended:
            found.kinds[error.event_id] = CONVERSATION_ERROR_FAILURE
            found.beside[error.event_id] = reading.path[-1].event_id
        found.ended = tuple(e.event_id for e in ended)
    return found
