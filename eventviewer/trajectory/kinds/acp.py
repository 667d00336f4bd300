"""ACPToolCallEvent: a tool call made by an agent behind the Agent Client Protocol,
reported with its input, output and status."""

from __future__ import annotations

from typing import Any

from ..cards import Card, output, pretty, text_of, texts
from .base import ACP_TOOL_CALL, TOOL_ERROR_FAILURE, Kind, register


def card(data: dict[str, Any], full: bool) -> Card:
    result = Card(
        kind=ACP_TOOL_CALL,
        label=text_of(data.get("title")) or "ACP tool call",
        tool_call_id=text_of(data.get("tool_call_id")),
        arguments=pretty(data.get("raw_input")),
    )
    for key, label in (("status", "status"), ("tool_kind", "kind")):
        if data.get(key):
            result.facts.append((label, text_of(data.get(key))))
    shown = texts(data.get("content")) or (pretty(data.get("raw_output")) if data.get("raw_output") is not None else "")
    if shown:
        result.output = output(shown, full)
    if data.get("is_error") is True:
        result.tone, result.error = "error", "the tool reported an error"
    return result


register(
    Kind(
        ACP_TOOL_CALL,
        "ACP tool call",
        "kinds/acp.html",
        card,
        summarize=lambda data: text_of(data.get("title")),
        failure=lambda data: TOOL_ERROR_FAILURE if data.get("is_error") is True else "",
    )
)
