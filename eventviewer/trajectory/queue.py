"""A review queue: the conversations of a filtered list, walked one at a time.

The list's ids, in its order, each with whether the reviewer has given it a verdict, are
all the queue needs: where the one shown stands, and which to open next and before it.
Those already reviewed are passed over unless the reviewer asks for them too."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class QueueRow:
    """One conversation of the list, as the queue sees it."""

    id: str
    reviewed: bool = False  # the reviewer has given it a verdict


@dataclass(frozen=True)
class Place:
    """Where a conversation stands in its queue."""

    position: int | None  # counted from 1 in the list; None: it is not (or no longer) on it
    total: int  # conversations on the list, reviewed or not
    left: int  # conversations on the list not reviewed yet
    next: str | None = None  # the one to open after it
    previous: str | None = None


def _wanted(row: QueueRow, with_reviewed: bool) -> bool:
    return with_reviewed or not row.reviewed


def first(rows: Sequence[QueueRow], with_reviewed: bool = False) -> str | None:
    """The conversation a queue opens at: the list's first one still to review."""
    return next((r.id for r in rows if _wanted(r, with_reviewed)), None)


def place(rows: Sequence[QueueRow], current: str, with_reviewed: bool = False) -> Place:
    """Where ``current`` stands among ``rows``, and its neighbours in the queue. Off the
    list (its verdict took it out of a ``verdict=none`` list, say), its next is the
    queue's first and it has no previous."""
    left = sum(not r.reviewed for r in rows)
    index = next((i for i, r in enumerate(rows) if r.id == current), None)
    if index is None:
        return Place(None, len(rows), left, next=first(rows, with_reviewed))
    after = next((r.id for r in rows[index + 1 :] if _wanted(r, with_reviewed)), None)
    before = next((r.id for r in reversed(rows[:index]) if _wanted(r, with_reviewed)), None)
    return Place(index + 1, len(rows), left, next=after, previous=before)
