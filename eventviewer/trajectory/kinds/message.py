"""MessageEvent: a chat message (user, agent or environment), and
CondensationSummaryEvent, the summary a condensation puts in the model's view."""

from __future__ import annotations

from typing import Any

from ..cards import MAX_ITEMS, Card, images, text_of, texts, thinking
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


register(
    Kind(
        MESSAGE,
        "Message",
        "kinds/message.html",
        card,
        summarize=summarize,
        outcome=outcome,
        role="user",  # or the message's own role
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
    )
)
