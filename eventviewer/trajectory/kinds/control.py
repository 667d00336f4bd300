"""Events about the run itself: PauseEvent and InterruptEvent (the user stopped the
agent), ConversationStateUpdateEvent (a state field changed; not part of the tree) and
SecurityAnalysisEvent (the risk the security analyzer gave the actions about to run)."""

from __future__ import annotations

from typing import Any

from ..cards import MAX_ITEMS, Card, mapping, pretty, text_of
from .base import INTERRUPT, PAUSE, SECURITY_ANALYSIS, STATE_UPDATE, Kind, register

register(
    Kind(
        PAUSE,
        "Paused",
        "kinds/notice.html",
        lambda data, full: Card(kind=PAUSE, text="The user paused the agent."),
        summarize=lambda data: "paused by the user",
    )
)

register(
    Kind(
        INTERRUPT,
        "Interrupted",
        "kinds/notice.html",
        lambda data, full: Card(kind=INTERRUPT, text="The user interrupted the agent mid-step.", tone="warn"),
        summarize=lambda data: "interrupted by the user",
    )
)


def _state_value(data: dict[str, Any]) -> str:
    value = data.get("value")
    return text_of(value) if isinstance(value, str | int | float | bool) or value is None else pretty(value, 2000)


def state_card(data: dict[str, Any], full: bool) -> Card:
    result = Card(kind=STATE_UPDATE, label=f"State: {text_of(data.get('key'))[:100]}")
    result.extra_json = _state_value(data)
    return result


register(
    Kind(
        STATE_UPDATE,
        "State update",
        "kinds/state_update.html",
        state_card,
        summarize=lambda data: f"{text_of(data.get('key'))} = {_state_value(data)[:200]}",
        side=True,
        folded=True,
    )
)


def security_card(data: dict[str, Any], full: bool) -> Card:
    result = Card(kind=SECURITY_ANALYSIS)
    for key in ("analyzer", "policy"):
        if data.get(key):
            result.facts.append((key, text_of(data.get(key))))
    risks = mapping(data, "risks")
    for action_id, risk in list(risks.items())[:MAX_ITEMS]:
        result.facts.append((f"action {text_of(action_id)[:12]}", text_of(risk)))
    result.left_out = max(0, len(risks) - MAX_ITEMS)
    if data.get("details"):
        result.extra_json = pretty(data.get("details"))
    if any(text_of(r).upper() == "HIGH" for r in risks.values()):
        result.tone = "warn"
    return result


def security_summary(data: dict[str, Any]) -> str:
    risks = mapping(data, "risks")
    levels = sorted({text_of(r) for r in risks.values()})
    return f"security analysis: {', '.join(levels) or 'no actions'}"


register(
    Kind(
        SECURITY_ANALYSIS,
        "Security analysis",
        "kinds/facts.html",
        security_card,
        summarize=security_summary,
        folded=True,
    )
)
