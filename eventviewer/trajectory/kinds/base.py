"""The registry of event kinds: everything eventviewer knows about one kind in one place.

A ``Kind`` says how an event of that kind is summarised (the list and diagram line),
how the diagram labels it, how the exports write it (the chat messages and the review
document), which failure it records, what it says a call did to the workspace's files, how a
branch ending on it ends (its outcome), which role it takes in the model's messages,
whether it is a side event, and how its card is built and templated. Each kind lives
in its own module of this package with its template in ``templates/kinds/``; a kind
eventviewer does not know gets ``UNKNOWN``'s folded generic card.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

from ..cards import MAX_ITEMS, Card, pretty

if TYPE_CHECKING:
    from ..events import Light

ROOT_PARENT_ID = "__root__"

ACTION = "ActionEvent"
OBSERVATION = "ObservationEvent"
USER_REJECT = "UserRejectObservation"
AGENT_ERROR = "AgentErrorEvent"
MESSAGE = "MessageEvent"
SYSTEM_PROMPT = "SystemPromptEvent"
CONDENSATION = "Condensation"
CONDENSATION_REQUEST = "CondensationRequest"
CONDENSATION_SUMMARY = "CondensationSummaryEvent"
STATE_UPDATE = "ConversationStateUpdateEvent"
CONVERSATION_ERROR = "ConversationErrorEvent"
HOOK = "HookExecutionEvent"
PAUSE = "PauseEvent"
INTERRUPT = "InterruptEvent"
SECURITY_ANALYSIS = "SecurityAnalysisEvent"
TOKENS = "TokenEvent"
COMPLETION_LOG = "LLMCompletionLogEvent"
ACP_TOOL_CALL = "ACPToolCallEvent"

# Failures an event records about itself (Light.failure); pending and mismatched come
# from pairing the branch instead.
AGENT_ERROR_FAILURE = "agent_error"
CONVERSATION_ERROR_FAILURE = "conversation_error"
EXIT_CODE_FAILURE = "exit_code"
TOOL_ERROR_FAILURE = "tool_error"
INVALID_CALL_FAILURE = "invalid_call"
REJECTED_FAILURE = "rejected"
HOOK_BLOCKED_FAILURE = "hook_blocked"


def _no_summary(data: dict[str, Any]) -> str:
    return ""


def _no_failure(data: dict[str, Any]) -> str:
    return ""


def _no_effect(data: dict[str, Any]) -> str:
    return ""


def _open(event: Light) -> str:
    return "open"


def plain_caption(word: str, source: str, tool_name: str, summary: str, command: str) -> str:
    """A diagram label: the kind's word and the event's summary."""
    return f"{word}: {summary}" if summary else word


def result_caption(word: str, source: str, tool_name: str, summary: str, command: str) -> str:
    """A tool result's diagram label: the tool, the kind's word and the summary."""
    return plain_caption(f"{tool_name} {word}" if tool_name else word, source, tool_name, summary, command)


@dataclass(frozen=True)
class Kind:
    name: str  # the SDK's ``kind``
    label: str  # a card's heading for events of this kind
    template: str  # the card body's template
    card: Callable[[dict[str, Any], bool], Card]  # (the event's JSON, full?) -> its card, before bounding
    summarize: Callable[[dict[str, Any]], str] = _no_summary  # the line for lists and the diagram
    failure: Callable[[dict[str, Any]], str] = _no_failure  # "" or one of the *_FAILURE codes
    effect: Callable[[dict[str, Any]], str] = _no_effect  # what its call did to the workspace (see files.effect)
    outcome: Callable[[Light], str] = _open  # how a branch ending here ends (if the event is no error)
    role: str | None = None  # its role in the model's messages; None: the model never sees it
    side: bool = False  # as a dead-end leaf beside other events it is a side event, not a branch
    folded: bool = False  # its card starts folded
    call: bool = False  # the model's tool call: it may run, a result answers it, it is sent as a tool_call
    error: bool = False  # every event of the kind is an error
    # The diagram: its word ("result"; "": its name without "Event") and how its label is made
    # from (word, source, tool_name, summary, command).
    word: str = ""
    caption: Callable[[str, str, str, str, str], str] = plain_caption
    # The exports: its content parts in a chat message (user and system roles) or its text
    # as a tool's result; its section of the review document from (its JSON, its link, its
    # call's result's section), None: "*label*: summary"; its turn's heading there, None: label.
    content: Callable[[Mapping[str, Any]], list[dict[str, Any]]] | None = None
    result: Callable[[Mapping[str, Any]], str] | None = None
    review: Callable[[Mapping[str, Any], str, str], str] | None = None
    heading: Callable[[Light], str] | None = None

    def build(self, data: dict[str, Any], full: bool) -> Card:
        card = self.card(data, full)
        card.kind = self.name if self is not UNKNOWN else text(data.get("kind"))[:100]
        card.template = self.template
        card.label = card.label or self.label
        card.folded = card.folded or self.folded
        return card


KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    KINDS[kind.name] = kind
    return kind


def text(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


_SHOWN_ELSEWHERE = frozenset({"id", "timestamp", "source", "parent_id", "kind"})


def _unknown_card(data: dict[str, Any], full: bool) -> Card:
    kind = text(data.get("kind"))[:100]
    # The first fields only: an event may hold a million of them.
    fields = ((k, v) for k, v in data.items() if k not in _SHOWN_ELSEWHERE)
    rest = dict(islice(fields, MAX_ITEMS))
    card = Card(kind="", label=kind.removesuffix("Event") or kind or "Event", extra_json=pretty(rest) if rest else "")
    card.left_out = max(0, len(data) - len(_SHOWN_ELSEWHERE & data.keys()) - len(rest))
    return card


# A kind eventviewer does not know (a newer SDK's): imported and shown, folded, as JSON.
UNKNOWN = Kind("", "Event", "kinds/unknown.html", _unknown_card, folded=True)


def kind_of(name: str) -> Kind:
    return KINDS.get(name, UNKNOWN)
