"""MessageEvent: a chat message (user, agent or environment), and
CondensationSummaryEvent, the summary a condensation puts in the model's view."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import markdown
from ..cards import MAX_ITEMS, Card, images, mapping, text_of, texts, thinking
from .base import CONDENSATION_SUMMARY, MESSAGE, Kind, register


def _message(data: dict[str, Any]) -> dict[str, Any]:
    message = data.get("llm_message")
    return message if isinstance(message, dict) else {}


def summarize(data: dict[str, Any]) -> str:
    return head(_message(data).get("content"))


def head(content: Any, enough: int = 800) -> str:
    """The first texts of a content list, joined, stopping once there is enough for a
    summary: tool output can run to megabytes."""
    if isinstance(content, str):
        return content[: enough * 4]
    if not isinstance(content, list):
        return ""
    found = []
    length = 0
    for item in content:
        if isinstance(item, dict) and isinstance(item.get("text"), str) and item["text"]:
            found.append(item["text"][:enough])
            length += len(found[-1])
            if length >= enough:
                break
    return " ".join(found)


def card(data: dict[str, Any], full: bool) -> Card:
    message = _message(data)
    content = message.get("content")
    role = text_of(message.get("role"))
    source = text_of(data.get("source"))
    result = Card(kind=MESSAGE, text=texts(content), images=images(content))
    result.label = "User" if role == "user" and source in ("user", "") else (role or source or "message").capitalize()
    if source == "environment" and role == "user":
        result.label = "Environment"
    result.reasoning = text_of(message.get("reasoning_content"))
    result.thinking = thinking(message)
    skills = data.get("activated_skills")
    if isinstance(skills, list) and skills:
        result.facts.append(("skills", ", ".join(text_of(s) for s in skills[:MAX_ITEMS])))
    extended = data.get("extended_content")
    if isinstance(extended, list) and extended:
        result.facts.append(("added context", texts(extended)))
    return result


def outcome(event: Any) -> str:
    return "finished" if event.source == "agent" else "open"


def caption(word: str, source: str, tool_name: str, summary: str, command: str) -> str:
    who = "User" if source == "user" else "Agent" if source == "agent" else (source or "Message").capitalize()
    return f"{who}: {summary}" if summary else who


def content(data: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The message's content as chat content parts: its texts and image URLs."""
    found = mapping(data, "llm_message").get("content")
    if isinstance(found, str):
        return [{"type": "text", "text": found}]
    parts: list[dict[str, Any]] = []
    for item in found if isinstance(found, list) else []:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("text"), str):
            parts.append({"type": "text", "text": item["text"]})
        elif item.get("type") == "image" and isinstance(item.get("image_urls"), list):
            parts.extend({"type": "image_url", "image_url": {"url": url}} for url in item["image_urls"] if url)
    return parts or [{"type": "text", "text": ""}]


def review(data: Mapping[str, Any], link: str, result: str) -> str:
    text = markdown.text_parts(content(data))
    return markdown.code(markdown.shortened(text, 400, markdown.TEXT_CHARS), "markdown")


register(
    Kind(
        MESSAGE,
        "Message",
        "kinds/message.html",
        card,
        summarize=summarize,
        outcome=outcome,
        role="user",  # or the message's own role
        caption=caption,
        content=content,
        review=review,
        heading=lambda event: (event.role or event.source or "message").capitalize(),
    )
)


def summary_card(data: dict[str, Any], full: bool) -> Card:
    return Card(kind=CONDENSATION_SUMMARY, text=text_of(data.get("summary")), label="Summary of earlier events")


register(
    Kind(
        CONDENSATION_SUMMARY,
        "Summary",
        "kinds/message.html",
        summary_card,
        summarize=lambda data: text_of(data.get("summary")),
        role="user",
        word="condensed",
        content=lambda data: [{"type": "text", "text": _string(data.get("summary"))}],
    )
)


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""
