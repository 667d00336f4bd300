"""One branch read end to end: the path, its turns and its pairing."""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass
from functools import cached_property

from .events import Light
from .pairing import Pairing, pair
from .projection import Turn, project


@dataclass
class Reading:
    path: Sequence[Light]
    turns: list[Turn]
    pairing: Pairing

    @cached_property
    def problem_ids(self) -> list[str]:
        """Events with a problem (pending or mismatched), in path order."""
        flagged = set(self.pairing.pending) | set(self.pairing.mismatched)
        return [e.event_id for e in self.path if e.event_id in flagged]

    @cached_property
    def messages(self) -> list[Turn]:
        return [t for t in self.turns if t.visible]

    @cached_property
    def tool_call_count(self) -> int:
        return sum(len(t.tool_call_ids) for t in self.turns)


def read(path: Sequence[Light], elsewhere: Container[str] = frozenset()) -> Reading:
    return Reading(path=path, turns=project(path), pairing=pair(path, elsewhere))
