"""Event kinds: the registry (``base``) and one module per kind (or family of kinds).

Adding a kind is one module here (its summary, failure, outcome, role, card, diagram
label and export text) and one template in ``templates/kinds/``; nothing else switches
on kind names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..cards import Card, bound
from . import acp, action, condensation, control, errors, hooks, llm, message, observation, system  # noqa: F401
from .base import (
    ACP_TOOL_CALL,
    ACTION,
    AGENT_ERROR,
    AGENT_ERROR_FAILURE,
    COMPLETION_LOG,
    CONDENSATION,
    CONDENSATION_REQUEST,
    CONDENSATION_SUMMARY,
    CONVERSATION_ERROR,
    CONVERSATION_ERROR_FAILURE,
    EXIT_CODE_FAILURE,
    HOOK,
    HOOK_BLOCKED_FAILURE,
    INTERRUPT,
    INVALID_CALL_FAILURE,
    KINDS,
    MESSAGE,
    OBSERVATION,
    PAUSE,
    REJECTED_FAILURE,
    ROOT_PARENT_ID,
    SECURITY_ANALYSIS,
    STATE_UPDATE,
    SYSTEM_PROMPT,
    TOKENS,
    TOOL_ERROR_FAILURE,
    UNKNOWN,
    USER_REJECT,
    Kind,
    kind_of,
)

if TYPE_CHECKING:
    from ..events import Light

__all__ = [
    "ACP_TOOL_CALL",
    "ACTION",
    "ACTION_RESULTS",
    "AGENT_ERROR",
    "AGENT_ERROR_FAILURE",
    "COMPLETION_LOG",
    "CONDENSATION",
    "CONDENSATION_REQUEST",
    "CONDENSATION_SUMMARY",
    "CONVERSATION_ERROR",
    "CONVERSATION_ERROR_FAILURE",
    "EXIT_CODE_FAILURE",
    "HOOK",
    "HOOK_BLOCKED_FAILURE",
    "INTERRUPT",
    "INVALID_CALL_FAILURE",
    "KINDS",
    "LLM_VISIBLE",
    "MESSAGE",
    "OBSERVATION",
    "OBSERVATION_LIKE",
    "PAUSE",
    "REJECTED_FAILURE",
    "ROOT_PARENT_ID",
    "SECURITY_ANALYSIS",
    "SIDE_KINDS",
    "STATE_UPDATE",
    "SYSTEM_PROMPT",
    "TOKENS",
    "TOOL_ERROR_FAILURE",
    "UNKNOWN",
    "USER_REJECT",
    "Kind",
    "card_for",
    "kind_of",
    "outcome",
    "role_of",
]

# The SDK's LLMConvertibleEvent subclasses: the only events events_to_messages sees.
LLM_VISIBLE = frozenset(name for name, kind in KINDS.items() if kind.role)
# Events that answer an action by its action_id (plus tool_call_id and tool_name).
ACTION_RESULTS = frozenset({OBSERVATION, USER_REJECT})
# The SDK's ObservationBaseEvent subclasses: a tool call's result in the model's view.
OBSERVATION_LIKE = frozenset({OBSERVATION, USER_REJECT, AGENT_ERROR})
# Kinds whose dead-end leaves hang beside their parent instead of ending a branch.
SIDE_KINDS = frozenset(name for name, kind in KINDS.items() if kind.side)


def role_of(kind: str, message_role: str = "") -> str | None:
    """The chat role an event of ``kind`` takes in the model's messages (a message's
    own role for a MessageEvent), or None when the model never sees it."""
    role = kind_of(kind).role
    return (message_role or role) if role and kind == MESSAGE else role


def outcome(event: Light) -> str:
    """How a branch ends when this event is its leaf: finished, error, rejected,
    pending (an action still waiting for its result) or open."""
    if event.is_error and event.kind != USER_REJECT:  # a rejection is one, whatever else it says
        return "error"
    return kind_of(event.kind).outcome(event)


def card_for(data: Any, full: bool = False) -> Card:
    """The card of one event's JSON, bounded for the page: the conversation page's
    cards cut long texts and arguments, the event page's (``full``) show more."""
    if not isinstance(data, dict):
        data = {"kind": ""}
    return bound(kind_of(str(data.get("kind", ""))).build(data, full), full)
