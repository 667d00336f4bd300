"""What a page must draw when the branch it shows has grown: events are only ever
appended, so the turns before the last one shown stay as they were, except those
whose actions have just been answered (they were drawn pending)."""

from __future__ import annotations

from typing import NamedTuple

from .reading import Reading


class Growth(NamedTuple):
    start: int  # the first turn to draw again: it and every turn after it
    first_new: int  # the turn holding the first new event
    new_events: int  # events on the branch after the one the page showed last


def growth(reading: Reading, shown_leaf: str, last_turn: int) -> Growth | None:
    """How ``reading``'s branch extends the one that ended at ``shown_leaf``, drawn up
    to turn ``last_turn``; None when it does not extend it (HEAD moved elsewhere)."""
    position = next((i for i, e in enumerate(reading.path) if e.event_id == shown_leaf), None)
    if position is None:
        return None
    new = {e.event_id for e in reading.path[position + 1 :]}
    turns = reading.turns
    start = min(last_turn, len(turns) - 1)
    answered = reading.pairing.result_for
    for index, turn in enumerate(turns[:start]):
        if any(answered.get(e.event_id) in new for e in turn.events):
            start = index
            break
    first_new = next((i for i, t in enumerate(turns) if any(e.event_id in new for e in t.events)), len(turns))
    return Growth(max(start, 0), first_new, len(new))
