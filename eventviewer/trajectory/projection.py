"""Batch projection: the path as the model saw it.

Consecutive ActionEvents with one ``llm_response_id`` are one assistant turn with k
tool calls (k is conserved), exactly as the SDK's ``events_to_messages`` groups
them. Events the model never sees do not break a batch; any event it sees does.
Only the first action of a batch carries the shared thought and reasoning: a later
one with its own text is kept and flagged, never dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from .events import Light
from .kinds import ACTION, LLM_VISIBLE, role_of


@dataclass
class Turn:
    """One item of the projection: a single event, or a batch of actions."""

    events: list[Light]
    visible: bool  # does the model see it (is it one of its messages)?
    role: str | None
    stray_text: list[str] = field(default_factory=list)  # later actions with their own text
    continues: str | None = None  # a batch split from an earlier one of the same response

    @property
    def kind(self) -> str:
        return self.events[0].kind

    @property
    def event_ids(self) -> list[str]:
        return [e.event_id for e in self.events]

    @property
    def tool_call_ids(self) -> list[str]:
        if self.kind != ACTION:
            return []
        return [e.tool_call_id for e in self.events]

    @property
    def is_batch(self) -> bool:
        return self.kind == ACTION


# What "turns" counts wherever a page shows a number of them (a branch, a run's instance, a
# side of a comparison): the importer counts an instance's in SQL by the same rule.
TURNS_MEANING = "turns: the model's responses that called tools (the parallel calls of one response are one turn)"


def assistant_turns(events: Iterable[Light]) -> int:
    """How many of the model's responses called tools among ``events`` (see TURNS_MEANING)."""
    return len({e.llm_response_id for e in events if e.kind == ACTION and e.llm_response_id})


def project(path: Sequence[Light]) -> list[Turn]:
    """Group the root-first path into turns; invisible events met inside a batch
    are placed right after it."""
    turns: list[Turn] = []
    batch: Turn | None = None
    batches_by_response: dict[str, Turn] = {}
    for event in path:
        visible = event.kind in LLM_VISIBLE
        if event.kind == ACTION:
            response = event.llm_response_id
            if batch is not None and batch.events[0].llm_response_id == response:
                batch.events.append(event)
                if event.carries_text:
                    batch.stray_text.append(event.event_id)
                continue
            batch = Turn([event], visible=True, role="assistant")
            earlier = batches_by_response.get(response) if response else None
            if earlier is not None:
                batch.continues = earlier.events[0].event_id
            batches_by_response.setdefault(response, batch)
            turns.append(batch)
            continue
        if visible:
            batch = None
            turns.append(Turn([event], visible=True, role=role_of(event.kind, event.role)))
        else:
            turns.append(Turn([event], visible=False, role=None))
    return turns


@dataclass
class Message:
    """One message of what the model is sent, as the SDK's ``events_to_messages`` makes it."""

    role: str
    kind: str  # its first event's kind
    event_ids: list[str]
    tool_call_ids: list[str] = field(default_factory=list)  # an assistant message's tool calls
    tool_call_id: str = ""  # the call a tool message answers
    response: str = field(default="", repr=False)  # an assistant message's llm_response_id

    @property
    def is_plain_user(self) -> bool:
        """A user message with no tool-call metadata: the SDK sends adjacent ones as one."""
        return self.role == "user" and not self.tool_call_id


def to_messages(events: Iterable[Light]) -> list[Message]:
    """The SDK's ``events_to_messages`` over LLM-visible events (others are skipped):
    consecutive actions of one LLM response are one assistant message with their tool
    calls, and adjacent plain user messages (a user's messages, a condensation summary)
    are merged into one."""
    result: list[Message] = []
    for event in events:
        role = role_of(event.kind, event.role)
        if role is None:
            continue
        last = result[-1] if result else None
        if event.kind == ACTION:
            if last is not None and last.kind == ACTION and last.response == event.llm_response_id:
                last.event_ids.append(event.event_id)
                last.tool_call_ids.append(event.tool_call_id)
                continue
            message = Message(role, event.kind, [event.event_id], [event.tool_call_id], response=event.llm_response_id)
        else:
            tool_call_id = event.tool_call_id if role == "tool" else ""
            message = Message(role, event.kind, [event.event_id], tool_call_id=tool_call_id)
        if last is not None and last.is_plain_user and message.is_plain_user:
            last.event_ids.extend(message.event_ids)
            continue
        result.append(message)
    return result


def sent(event: Light) -> bool:
    """Whether the model is sent ``event`` (it has a role in its messages)."""
    return role_of(event.kind, event.role) is not None


class Stretched(NamedTuple):
    """The messages that start in a stretch of a branch, and whether the last of them may
    go on past what was read (its length is then not known)."""

    messages: list[Message]
    open_end: bool


def messages_starting(
    previous: Light | None, events: Sequence[Light], ahead: Sequence[Light], ended: bool
) -> Stretched:
    """``to_messages``'s messages that start among ``events`` (a stretch of a branch), read
    without the rest of the branch. ``previous``: the last event before the stretch that the
    model is sent (None: there is none), whose message may take in the stretch's first
    events; ``ahead``: the events read after the stretch (``ended``: up to the leaf), into
    which its last message may run."""
    messages = to_messages([*([previous] if previous is not None else []), *events, *ahead])
    inside = {e.event_id for e in events}
    starting = [m for m in messages if m.event_ids[0] in inside]
    open_end = bool(starting) and starting[-1] is messages[-1] and not ended
    return Stretched(starting, open_end)
