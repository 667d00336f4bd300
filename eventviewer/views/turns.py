"""What a branch page shows for the turns on screen: each event as a card with its
pairing, what the model's view made of it, what its LLM response cost, side events
beside it, and the sub-agent a task call started."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.http import Http404

from eventviewer.lookups import GONE
from eventviewer.models import Conversation, Event, TurnUsage
from eventviewer.trajectory import kinds
from eventviewer.trajectory.cards import Card
from eventviewer.trajectory.events import Light
from eventviewer.trajectory.failures import Failures, Summary
from eventviewer.trajectory.kinds import card_for
from eventviewer.trajectory.pairing import Mismatch
from eventviewer.trajectory.projection import Turn, project
from eventviewer.trajectory.reading import Reading
from eventviewer.trajectory.timeline import Mark
from eventviewer.trajectory.window import Span
from eventviewer.views.problems import Part, Reasons, describe_failure

FULL, MODEL = "full", "model"  # the two ways to read a branch (?view=)


def view_param(view: str) -> str | None:
    """``view`` as it goes in a URL: the default (the whole branch) is left out."""
    return view if view != FULL else None


@dataclass
class TurnEvent:
    """One event of a turn, as a card with its state on the branch."""

    event: Light
    card: Card
    pending: bool = False
    mismatch: Mismatch | None = None
    result_id: str = ""  # an action's result
    answers: str = ""  # the action a result answers
    stray_text: bool = False
    forgotten_by: str = ""  # the condensation that took it out of the model's view
    dropped: bool = False  # the model's view left it out: no result, or its batch broken
    forgotten_ranges: list[tuple[str, str, int]] = field(default_factory=list)  # a condensation's
    subagent: Conversation | None = None  # the sub-agent a task call (or its result) ran
    reason: list[Part] = field(default_factory=list)  # why it is pending or mismatched, ids linked
    failure: str = ""  # its problem or failure (failures.KINDS), for the marks and n/p


@dataclass
class TurnRow:
    turn: Turn
    entries: list[TurnEvent] = field(default_factory=list)
    index: int = 0
    usage: TurnUsage | None = None  # what the turn's LLM response cost
    context: int | None = None  # events in the model's view when that response was asked for
    side: bool = False  # side events (hooks …) of the turn before

    @property
    def anchor_id(self) -> str:
        return self.entries[0].event.event_id

    @property
    def response_id(self) -> str:
        first = self.turn.events[0]
        return first.llm_response_id if first.kind in (kinds.ACTION, kinds.MESSAGE, kinds.CONDENSATION) else ""


def display_turns(reading: Reading, view: str) -> list[Turn]:
    """The turns a page walks through: the whole branch, or what the model was sent
    (forgotten events gone, summaries in their place, dropped events kept and marked)."""
    if view != MODEL:
        return reading.turns
    model = reading.view
    order = {e.event_id: i for i, e in enumerate(reading.path)}
    dropped = [e for e in reading.path if e.event_id in model.dropped]
    shown: list[Light] = []
    for event in model.events:  # dropped events go back where they were on the path
        while dropped and event.event_id in order and order[dropped[0].event_id] < order[event.event_id]:
            shown.append(dropped.pop(0))
        shown.append(event)
    return project(shown + dropped)


def build_rows(
    conversation: Conversation,
    reading: Reading,
    turns: Sequence[Turn],
    span: Span,
    leaf: Light | Event,
    reasons: Reasons,
    failing: Failures | None = None,
) -> list[TurnRow]:
    window = turns[span.start : span.end]
    events = [e for t in window for e in t.events]
    condensation_of = reading.summary_of
    side = conversation.side_events([e.pk for e in events if e.pk and e.pk != leaf.pk], leaf.pk)
    summaries = {e.event_id: condensation_of[e.event_id].pk for e in events if e.event_id in condensation_of}
    pks = {e.pk for e in events if e.pk} | {s.pk for found in side.values() for s in found}
    cards = conversation.cards(pks | set(summaries.values()))
    usage = {
        u.response_id: u
        for u in conversation.usages.filter(response_id__in={t.events[0].llm_response_id for t in window} - {""})
    }
    subagents = {c.parent_call_id: c for c in conversation.subagents.exclude(parent_call_id="")}
    on_path = reading.position
    pairing, model = reading.pairing, reading.view
    pending = set(pairing.pending)

    def card_of(event: Light) -> Card:
        if event.event_id in summaries:  # a summary: the user message its condensation wrote
            return card_for({"kind": kinds.CONDENSATION_SUMMARY, "summary": cards[summaries[event.event_id]].text})
        return cards[event.pk]

    def entry(event: Light, turn: Turn) -> TurnEvent:
        eid = event.event_id
        found = TurnEvent(
            event=event,
            card=card_of(event),
            pending=eid in pending,
            mismatch=pairing.mismatched.get(eid),
            result_id=pairing.result_for.get(eid, ""),
            answers=pairing.answers.get(eid, ""),
            stray_text=eid in turn.stray_text,
            forgotten_by=model.forgotten_by.get(eid, ""),
            dropped=eid in model.dropped,
            subagent=subagents.get(eid) or subagents.get(pairing.answers.get(eid, "")),
            reason=reasons.of(eid) if eid in pending or eid in pairing.mismatched else [],
            failure=failing.kinds.get(eid, "") if failing else "",
        )
        if event.kind == kinds.CONDENSATION and not reading.partial:  # a stretch holds only some of them
            found.forgotten_ranges = _ranges(found.card.forgotten, on_path, reading.path)
        return found

    rows = []
    for offset, turn in enumerate(window):
        row = TurnRow(turn, [entry(e, turn) for e in turn.events], index=span.start + offset)
        row.usage = usage.get(row.response_id)
        row.context = (
            reading.context_sizes.get(row.response_id) if row.turn.is_batch or row.turn.kind == kinds.MESSAGE else None
        )
        rows.append(row)
        for event in turn.events:
            for s in side.get(event.pk, ()):
                side_turn = Turn([s], visible=False, role=None)
                rows.append(TurnRow(side_turn, [entry(s, side_turn)], index=row.index, side=True))
    return rows


def _ranges(forgotten: list[str], on_path: dict[str, int], path: Sequence[Light]) -> list[tuple[str, str, int]]:
    """The events a condensation forgot that are on the branch, as runs of consecutive
    path events: (first, last, how many)."""
    positions = sorted(on_path[i] for i in set(forgotten) if i in on_path)
    ranges: list[tuple[str, str, int]] = []
    for position in positions:
        if ranges and on_path[ranges[-1][1]] == position - 1:
            first, _, count = ranges[-1]
            ranges[-1] = (first, path[position].event_id, count + 1)
        else:
            ranges.append((path[position].event_id, path[position].event_id, 1))
    return ranges


def timeline_marks(reading: Reading, turns: Sequence[Turn]) -> list[Mark]:
    """One mark per turn, coloured by its worst news."""
    pending, mismatched = set(reading.pairing.pending), set(reading.pairing.mismatched)
    marks = []
    for turn in turns:
        ids = set(turn.event_ids)
        first = turn.events[0]
        if ids & mismatched:
            tone = "mismatched"
        elif ids & pending:
            tone = "pending"
        elif any(e.failure or e.is_error for e in turn.events):
            tone = "error"
        else:
            tone = turn.role if turn.role in ("user", "assistant", "tool") else "other"
        label = f"{first.kind.removesuffix('Event')}: {first.summary[:120]}" if first.summary else first.kind
        marks.append(Mark(first.event_id, first.timestamp, tone, label))
    return marks


def failure_summary(conversation: Conversation, found: Failures, turns: Sequence[Turn]) -> tuple[Summary, str]:
    """How many of each problem and failure the branch holds, and what its first one was
    (one line: "terminal `pytest` exit 1")."""
    summary = found.summary(turns)
    if summary.first is None:
        return summary, ""
    pk = conversation.events.filter(event_id=summary.first).values_list("pk", flat=True).first()
    if pk is None:
        raise Http404(GONE)
    return summary, describe_failure(conversation.cards([pk])[pk], summary.first_code or "")
