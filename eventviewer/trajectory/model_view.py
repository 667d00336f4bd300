"""What the model was sent: the SDK's ``View`` of a branch.

The model is not sent the branch as it is. The SDK builds its view event by event
(``View.from_events``): LLM-visible events are appended; a Condensation removes the
events it forgets and, when it has a summary and an offset, puts its summary there as a
user message (id ``<condensation-id>-summary``); a CondensationRequest marks the view
as waiting for one. Then the view is made well-formed, each rule applied until none
removes anything (``enforce_properties``):

1. at most one result per tool call (the first stays);
2. the actions of one LLM response stay together: if the view lost any of them, all go;
3. every action has a result and every result an action, by tool_call_id;
4. a tool loop (an action with thinking blocks and the actions and results that follow
   it without anything else in between) stays whole, or goes.

``model_view`` does exactly this over a branch, given what each Condensation on it says
(its JSON is not part of the light row), and reports besides which condensation forgot
each event and which events the clean-up dropped.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .events import Light
from .kinds import (
    ACTION,
    CONDENSATION,
    CONDENSATION_REQUEST,
    CONDENSATION_SUMMARY,
    LLM_VISIBLE,
    MESSAGE,
    OBSERVATION_LIKE,
)
from .projection import Message, to_messages

SUMMARY_SUFFIX = "-summary"


@dataclass(frozen=True)
class Condensed:
    """What one Condensation says: the events it forgets, and where its summary goes."""

    forgotten: frozenset[str] = frozenset()
    has_summary: bool = False
    offset: int | None = None

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Condensed:
        """From a Condensation's JSON (anything malformed counts as absent)."""
        forgotten = data.get("forgotten_event_ids")
        offset = data.get("summary_offset")
        return cls(
            frozenset(i for i in forgotten if isinstance(i, str)) if isinstance(forgotten, list) else frozenset(),
            isinstance(data.get("summary"), str),
            offset if isinstance(offset, int) and not isinstance(offset, bool) and offset >= 0 else None,
        )


@dataclass
class View:
    events: list[Light]  # what the model is sent, summaries included
    unhandled_condensation_request: bool = False
    forgotten_by: dict[str, str] = field(default_factory=dict)  # path event -> the condensation that forgot it
    dropped: set[str] = field(default_factory=set)  # path events the clean-up removed

    @property
    def event_ids(self) -> list[str]:
        return [e.event_id for e in self.events]

    @cached_property
    def messages(self) -> list[Message]:
        return to_messages(self.events)

    @cached_property
    def summaries(self) -> dict[str, str]:
        """Each summary in the view: its id -> the condensation that wrote it."""
        return {
            e.event_id: e.event_id.removesuffix(SUMMARY_SUFFIX) for e in self.events if e.kind == CONDENSATION_SUMMARY
        }


def summary_event(condensation: Light) -> Light:
    """The user message a condensation's summary becomes (the SDK's CondensationSummaryEvent)."""
    return Light(
        condensation.event_id + SUMMARY_SUFFIX,
        CONDENSATION_SUMMARY,
        source="environment",
        role="user",
        timestamp=condensation.timestamp,
    )


def model_view(path: Sequence[Light], condensations: Mapping[str, Condensed]) -> View:
    """The view the SDK builds from ``path`` (root first), with ``condensations`` holding
    what each Condensation on it says."""
    view = View([])
    for event in path:
        _append(view, event, condensations)
    _enforce(view, path)
    return view


def context_sizes(path: Sequence[Light], condensations: Mapping[str, Condensed]) -> dict[str, int]:
    """For each LLM response on the path (by llm_response_id): how many events the
    model's view held when it was called, as the view stood before the response's first
    event. The clean-up rules are not applied at each step: before a call every earlier
    action has its result, so they would remove nothing."""
    view = View([])
    sizes: dict[str, int] = {}
    for event in path:
        response = event.llm_response_id
        if response and response not in sizes and (event.kind == ACTION or event.kind == MESSAGE):
            sizes[response] = len(view.events)
        _append(view, event, condensations)
    return sizes


def _append(view: View, event: Light, condensations: Mapping[str, Condensed]) -> None:
    if event.kind == CONDENSATION:
        condensed = condensations.get(event.event_id, Condensed())
        kept = []
        for e in view.events:
            if e.event_id in condensed.forgotten:
                view.forgotten_by.setdefault(e.event_id, event.event_id)
            else:
                kept.append(e)
        if condensed.has_summary and condensed.offset is not None:
            kept.insert(condensed.offset, summary_event(event))
        view.events = kept
        view.unhandled_condensation_request = False
    elif event.kind == CONDENSATION_REQUEST:
        view.unhandled_condensation_request = True
    elif event.kind in LLM_VISIBLE:
        view.events.append(event)


def _enforce(view: View, path: Sequence[Light]) -> None:
    rules: list[Callable[[list[Light], Sequence[Light]], set[str]]] = [
        _one_result_per_call,
        _whole_batches,
        _matched_calls,
        _whole_tool_loops,
    ]
    while True:
        for rule in rules:
            remove = rule(view.events, path)
            if remove:
                view.events = [e for e in view.events if e.event_id not in remove]
                view.dropped |= remove
                break
        else:
            return


def _one_result_per_call(events: list[Light], path: Sequence[Light]) -> set[str]:
    seen: set[str] = set()
    remove = set()
    for e in events:
        if e.kind in OBSERVATION_LIKE:
            if e.tool_call_id in seen:
                remove.add(e.event_id)
            else:
                seen.add(e.tool_call_id)
    return remove


def _batches(events: Sequence[Light]) -> dict[str, set[str]]:
    batches: dict[str, set[str]] = defaultdict(set)
    for e in events:
        if e.kind == ACTION:
            batches[e.llm_response_id].add(e.event_id)
    return batches


def _whole_batches(events: list[Light], path: Sequence[Light]) -> set[str]:
    everywhere = _batches(path)
    remove: set[str] = set()
    for response, ids in _batches(events).items():
        if ids != everywhere[response]:
            remove |= ids
    return remove


def _matched_calls(events: list[Light], path: Sequence[Light]) -> set[str]:
    called = {e.tool_call_id for e in events if e.kind == ACTION}
    answered = {e.tool_call_id for e in events if e.kind in OBSERVATION_LIKE}
    return {
        e.event_id
        for e in events
        if (e.kind == ACTION and e.tool_call_id not in answered)
        or (e.kind in OBSERVATION_LIKE and e.tool_call_id not in called)
    }


def _tool_loops(events: Sequence[Light]) -> list[set[str]]:
    loops: list[set[str]] = []
    current: set[str] | None = None
    for e in events:
        if e.kind == ACTION and e.thinking:
            if current is not None:
                loops.append(current)
            current = {e.event_id}
        elif e.kind == ACTION or e.kind in OBSERVATION_LIKE:
            if current is not None:
                current.add(e.event_id)
        elif current is not None:
            loops.append(current)
            current = None
    if current is not None:
        loops.append(current)
    return loops


def _whole_tool_loops(events: list[Light], path: Sequence[Light]) -> set[str]:
    loops = _tool_loops(path)
    if not loops:
        return set()
    in_view = {e.event_id for e in events}
    remove: set[str] = set()
    for loop in loops:
        if not loop <= in_view:
            remove |= loop & in_view
    return remove
