"""The problem list and the reasons on cards: why an event is pending or mismatched, with
every event id in the reason linked."""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from eventviewer.models import Conversation, Event
from eventviewer.scope import Scope
from eventviewer.trajectory import kinds
from eventviewer.trajectory.cards import Card
from eventviewer.trajectory.events import Light, one_line
from eventviewer.trajectory.failures import LABELS, MISMATCHED, PENDING, PROBLEMS
from eventviewer.trajectory.pairing import Mismatch, Pairing
from eventviewer.trajectory.reading import Reading
from eventviewer.trajectory.skeleton import event_label
from eventviewer.trajectory.window import PlacedProblem


class Part(NamedTuple):
    """A piece of a problem's reason: text, or an event id with the link to that event."""

    text: str
    href: str = ""
    anchor: str = ""  # an event on the branch shown, focused in place when it is loaded


@dataclass
class ProblemLine:
    """One line of the list of problems and failures."""

    event_id: str
    where: str  # "before", "in" or "after" the turns shown
    code: str  # which problem or failure (failures.KINDS)
    mismatch: Mismatch | None
    label: str  # the tool and command, or what the event is
    reason: list[Part]
    href: str


class Reasons:
    """Problem reasons as text with every event id in them linked: on the branch shown to
    the card, elsewhere to the event's page (which opens it on its own branch)."""

    def __init__(self, scope: Scope, leaf: Event, pairing: Pairing, on_path: Container[str]):
        """``on_path``: the branch's events among those the reasons name (all of them, or
        the ids ``Conversation.pairing_of`` read)."""
        self.scope, self.leaf, self.pairing = scope, leaf.event_id, pairing
        self.on_path = on_path
        self.unmatched = pairing.unmatched_for

    @classmethod
    def of_branch(cls, scope: Scope, leaf: Event, reading: Reading) -> Reasons:
        return cls(scope, leaf, reading.pairing, reading.position)

    def href(self, event_id: str) -> str:
        if event_id in self.on_path:
            return self.scope.at_url(self.leaf, event_id)
        return self.scope.event_url(event_id, None)

    def link(self, event_id: str) -> Part:
        return Part(event_id, self.href(event_id), event_id if event_id in self.on_path else "")

    def _linked(self, text: str, ids: Sequence[str]) -> list[Part]:
        if not ids:
            return [Part(text)]
        pattern = "(" + "|".join(re.escape(i) for i in sorted(set(ids), key=len, reverse=True)) + ")"
        return [self.link(piece) if n % 2 else Part(piece) for n, piece in enumerate(re.split(pattern, text))]

    def of(self, event_id: str) -> list[Part]:
        mismatch = self.pairing.mismatched.get(event_id)
        if mismatch is not None:
            parts = self._linked(mismatch.reason, mismatch.refs)
            if mismatch.action and mismatch.action not in mismatch.refs:
                parts += [Part(" (meant for action "), self.link(mismatch.action), Part(")")]
            return parts
        results = self.unmatched.get(event_id)
        if not results:
            return [Part("no result on this branch")]
        if len(results) == 1:
            return [Part("its only result does not match (see "), self.link(results[0]), Part(")")]
        parts = [Part(f"none of its {len(results)} results match (see ")]
        for n, result in enumerate(results):
            parts += [Part(", " if n else ""), self.link(result)]
        return [*parts, Part(")")]


def problem_lines(
    conversation: Conversation,
    placed: list[PlacedProblem],
    reading: Reading,
    reasons: Reasons,
    side: Sequence[Light],
    below: Sequence[Light] = (),
) -> list[ProblemLine]:
    """The list's lines, each naming its tool and command (read from the events' JSON);
    a failure says what failed, a problem why. ``side``: the failing side events;
    ``below``: the conversation errors that ended the run below the branch, each linked
    to its own page (they are not on this one)."""
    elsewhere = {e.event_id for e in below}
    beside = {e.event_id: e for e in (*side, *below)}
    events = [beside.get(p.event_id) or reading.path[reading.position[p.event_id]] for p in placed]
    failing = {p.event_id for p in placed if p.code not in PROBLEMS}
    wanted = (e.pk for e in events if e.kind in (kinds.ACTION, kinds.OBSERVATION) or e.event_id in failing)
    cards = conversation.cards(wanted)
    commands = {pk: card.command for pk, card in cards.items()}
    return [
        ProblemLine(
            p.event_id,
            "after" if p.event_id in elsewhere else p.where,  # on no turn of this page
            p.code,
            p.mismatch,
            event_label(e.kind, e.source, e.tool_name, one_line(e.summary, 80), one_line(commands.get(e.pk, ""), 80)),
            [Part(describe_failure(cards[e.pk], p.code))] if p.code not in PROBLEMS else reasons.of(p.event_id),
            reasons.scope.event_url(p.event_id)
            if p.event_id in elsewhere
            else reasons.scope.at_url(reasons.leaf, p.event_id),
        )
        for p, e in zip(placed, events, strict=True)
    ]


def describe_failure(card: Card, code: str) -> str:
    """A failure in a few words: "terminal `pytest` exit 1", "Agent error: tool not found"."""
    command = f" `{' '.join(card.command.split())[:80]}`" if card.command else ""
    if code == kinds.EXIT_CODE_FAILURE:
        return f"{card.tool_name or card.label}{command} exit {card.exit_code}"
    if code in (kinds.INVALID_CALL_FAILURE, PENDING, MISMATCHED):
        return f"{card.label}{command}: {LABELS[code]}"
    detail = " ".join((card.error or card.title or card.text).split())[:120]
    return f"{card.label}: {detail}" if detail else f"{card.label}: {LABELS.get(code, code)}"
