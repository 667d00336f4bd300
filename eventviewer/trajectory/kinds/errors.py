"""AgentErrorEvent (the agent's scaffold could not run a tool call: unknown tool, bad
arguments, a crash) and ConversationErrorEvent (the run stopped: the LLM failed, the
iteration limit)."""

from __future__ import annotations

from typing import Any

from .. import markdown
from ..cards import Card, result_text, text_of
from .base import (
    AGENT_ERROR,
    AGENT_ERROR_FAILURE,
    CONVERSATION_ERROR,
    CONVERSATION_ERROR_FAILURE,
    Kind,
    register,
    result_caption,
)


def _classification(data: dict[str, Any], card: Card) -> None:
    classification = data.get("classification")
    if isinstance(classification, dict):
        for key in ("kind", "retryable", "user_action"):
            if classification.get(key) is not None:
                card.facts.append((key.replace("_", " "), text_of(classification[key])))


def agent_error_card(data: dict[str, Any], full: bool) -> Card:
    card = Card(
        kind=AGENT_ERROR,
        tool_name=text_of(data.get("tool_name")),
        tool_call_id=text_of(data.get("tool_call_id")),
        error=text_of(data.get("error")),
        tone="error",
    )
    _classification(data, card)
    return card


register(
    Kind(
        AGENT_ERROR,
        "Agent error",
        "kinds/error.html",
        agent_error_card,
        summarize=lambda data: text_of(data.get("error")),
        failure=lambda data: AGENT_ERROR_FAILURE,
        outcome=lambda event: "error",
        role="tool",
        error=True,
        word="error",
        caption=result_caption,
        result=result_text,
        review=lambda data, link, result: markdown.result("Error", data, result_text(data)),
    )
)


def conversation_error_card(data: dict[str, Any], full: bool) -> Card:
    card = Card(kind=CONVERSATION_ERROR, title=text_of(data.get("code")), error=text_of(data.get("detail")))
    card.tone = "error"
    _classification(data, card)
    return card


register(
    Kind(
        CONVERSATION_ERROR,
        "Conversation error",
        "kinds/error.html",
        conversation_error_card,
        summarize=lambda data: f"{text_of(data.get('code')) or 'error'}: {text_of(data.get('detail'))}",
        failure=lambda data: CONVERSATION_ERROR_FAILURE,
        outcome=lambda event: "error",
        error=True,
        word="error",
    )
)
