"""SystemPromptEvent: the system prompt and the tools the model was given."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import markdown
from ..cards import MAX_ITEMS, Card, items, text_of, texts
from .base import SYSTEM_PROMPT, Kind, register


def summarize(data: dict[str, Any]) -> str:
    tools = data.get("tools")
    count = len(tools) if isinstance(tools, list) else 0
    return f"system prompt, {count:,} tool{'s' if count != 1 else ''}"


def card(data: dict[str, Any], full: bool) -> Card:
    prompt = data.get("system_prompt")
    result = Card(kind=SYSTEM_PROMPT, text=texts([prompt]) if isinstance(prompt, dict) else texts(prompt))
    tools = items(data, "tools")
    for tool in tools[:MAX_ITEMS]:
        if isinstance(tool, dict):
            name = text_of(tool.get("title") or tool.get("name") or tool.get("kind"))
            result.tools.append((name[:200], text_of(tool.get("description"))[:20_000]))
    result.left_out = max(0, len(tools) - MAX_ITEMS)
    dynamic = data.get("dynamic_context")
    if dynamic:
        result.facts.append(("dynamic context", texts([dynamic]) if isinstance(dynamic, dict) else text_of(dynamic)))
    return result


def prompt(data: Mapping[str, Any]) -> str:
    found = data.get("system_prompt")
    text = found.get("text") if isinstance(found, dict) else found
    return text if isinstance(text, str) else ""


def review(data: Mapping[str, Any], link: str, result: str) -> str:
    # The system prompt is the same long text in every run: its start says which.
    return markdown.code(markdown.shortened(prompt(data)), "markdown")


register(
    Kind(
        SYSTEM_PROMPT,
        "System prompt",
        "kinds/system.html",
        card,
        summarize=summarize,
        role="system",
        word="System prompt",
        caption=lambda word, source, tool_name, summary, command: word,
        content=lambda data: [{"type": "text", "text": prompt(data)}],
        review=review,
    )
)
