"""Condensation (earlier events forgotten from the model's view, maybe replaced by a
summary) and CondensationRequest (a condensation asked for, not yet done)."""

from __future__ import annotations

from typing import Any

from ..cards import MAX_ITEMS, Card, text_of
from .base import CONDENSATION, CONDENSATION_REQUEST, Kind, register


def forgotten_ids(data: dict[str, Any]) -> list[str]:
    forgotten = data.get("forgotten_event_ids")
    return [i for i in forgotten if isinstance(i, str)] if isinstance(forgotten, list) else []


def summarize(data: dict[str, Any]) -> str:
    summary = data.get("summary")
    if isinstance(summary, str) and summary:
        return summary
    count = len(forgotten_ids(data))
    return f"forgot {count:,} event{'s' if count != 1 else ''}"


def card(data: dict[str, Any], full: bool) -> Card:
    result = Card(kind=CONDENSATION, text=text_of(data.get("summary")), label="Condensation")
    result.forgotten = forgotten_ids(data)
    if data.get("summary_offset") is not None:
        result.facts.append(("summary at", f"position {text_of(data.get('summary_offset'))} of the model's view"))
    return result


register(Kind(CONDENSATION, "Condensation", "kinds/condensation.html", card, summarize=summarize, word="condensed"))


def request_card(data: dict[str, Any], full: bool) -> Card:
    result = Card(kind=CONDENSATION_REQUEST, label="Condensation requested")
    if data.get("reason"):
        result.facts.append(("reason", text_of(data.get("reason"))[: MAX_ITEMS * 10]))
    return result


register(
    Kind(
        CONDENSATION_REQUEST,
        "Condensation requested",
        "kinds/condensation_request.html",
        request_card,
        summarize=lambda data: "condensation requested",
        word="condensation requested",
    )
)
