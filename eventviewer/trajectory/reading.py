"""A branch read: the path, its turns, its pairing, and what the model was sent.

A reading is a stretch of the branch: all of it (``whole``) when the branch is short
enough to read at once (EVENTVIEWER_FULL_READ_MAX), else the depths a page shows and the
events around them, paired exactly for them (``Conversation.pairing_of``). What the model
was sent depends on the whole branch: a stretch does not know it, so nothing in it is
marked forgotten or dropped and no context size is given."""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from .events import Light
from .kinds import CONDENSATION
from .model_view import SUMMARY_SUFFIX, Condensed, View, context_sizes, model_view
from .pairing import Pairing, pair
from .projection import Message, Turn, assistant_turns, project, to_messages


@dataclass
class Reading:
    path: Sequence[Light]
    turns: list[Turn]
    pairing: Pairing
    condensations: Mapping[str, Condensed] = field(default_factory=dict)  # what each Condensation on it says
    whole: bool = True  # False: a stretch of a longer branch

    @property
    def partial(self) -> bool:
        """Whether this is a stretch of the branch only."""
        return not self.whole

    @cached_property
    def position(self) -> dict[str, int]:
        """Each event's index on the path, by id."""
        return {e.event_id: i for i, e in enumerate(self.path)}

    @cached_property
    def turn_of(self) -> dict[str, int]:
        """Each event's turn (its index in ``turns``), by id: kept with the reading, so a
        page asks it instead of going through every turn of the branch."""
        return {eid: i for i, turn in enumerate(self.turns) for eid in turn.event_ids}

    @cached_property
    def summary_of(self) -> dict[str, Light]:
        """The condensation that wrote each summary (``<condensation id>-summary``) on the path."""
        return {e.event_id + SUMMARY_SUFFIX: e for e in self.path if e.kind == CONDENSATION}

    @cached_property
    def problem_ids(self) -> list[str]:
        """Events with a problem (pending or mismatched), in path order."""
        flagged = set(self.pairing.pending) | set(self.pairing.mismatched)
        return [e.event_id for e in self.path if e.event_id in flagged]

    @cached_property
    def messages(self) -> list[Message]:
        """What the model is sent at the end of this branch, before condensation."""
        return to_messages(self.path)

    @cached_property
    def view(self) -> View:
        """What the model was sent at the end of this branch: after condensation and clean-up."""
        if not self.whole:
            return View([])
        return model_view(self.path, self.condensations)

    @cached_property
    def context_sizes(self) -> dict[str, int]:
        """Events in the model's view when each LLM response (by id) was asked for."""
        if not self.whole:
            return {}
        return context_sizes(self.path, self.condensations)

    @cached_property
    def tool_call_count(self) -> int:
        return sum(len(t.tool_call_ids) for t in self.turns)

    @cached_property
    def turn_count(self) -> int:
        """The branch's turns as every page counts them (``projection.TURNS_MEANING``)."""
        return assistant_turns(self.path)


def read(
    path: Sequence[Light], elsewhere: Container[str] = frozenset(), condensations: Mapping[str, Condensed] | None = None
) -> Reading:
    return Reading(path=path, turns=project(path), pairing=pair(path, elsewhere), condensations=condensations or {})


def read_stretch(events: Sequence[Light], turns: list[Turn], pairing: Pairing) -> Reading:
    """A stretch of a longer branch: ``events`` (consecutive depths, root first), the turns
    shown of them (``window.part_window``) and their pairing on the whole branch."""
    return Reading(path=events, turns=turns, pairing=pairing, whole=False)
