"""Event kinds and what the model sees of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .events import Light

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

# The SDK's LLMConvertibleEvent subclasses: the only events events_to_messages sees.
LLM_VISIBLE = frozenset(
    {
        SYSTEM_PROMPT,
        MESSAGE,
        ACTION,
        OBSERVATION,
        USER_REJECT,
        AGENT_ERROR,
        CONDENSATION_SUMMARY,
    }
)

# Events that answer an action by its action_id (plus tool_call_id and tool_name).
ACTION_RESULTS = frozenset({OBSERVATION, USER_REJECT})


def role_of(kind: str, message_role: str = "") -> str:
    """The chat role an LLM-visible event takes in the model's messages."""
    if kind == SYSTEM_PROMPT:
        return "system"
    if kind == ACTION:
        return "assistant"
    if kind in (OBSERVATION, USER_REJECT, AGENT_ERROR):
        return "tool"
    if kind == CONDENSATION_SUMMARY:
        return "user"
    return message_role or "user"


def outcome(event: Light) -> str:
    """How a branch ends when this event is its leaf: finished, error, rejected,
    pending (an action still waiting for its result) or open."""
    kind, payload_kind = event.kind, event.payload_kind
    is_error, executable, source = event.is_error, event.executable, event.source
    if kind == USER_REJECT:
        return "rejected"
    if is_error or kind in (AGENT_ERROR, CONVERSATION_ERROR):
        return "error"
    if payload_kind in ("FinishObservation", "FinishAction") and kind == OBSERVATION:
        return "finished"
    if kind == ACTION and executable:
        return "pending"
    if kind == MESSAGE and source == "agent":
        return "finished"
    return "open"
