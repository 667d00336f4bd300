"""ObservationEvent (a tool's result) and UserRejectObservation (an action refused by
the user in confirmation mode, or blocked by a PreToolUse hook)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import files, markdown
from ..cards import Card, command_of, images, observation_output, output, result_text, text_of
from .base import (
    EXIT_CODE_FAILURE,
    OBSERVATION,
    REJECTED_FAILURE,
    TOOL_ERROR_FAILURE,
    USER_REJECT,
    Kind,
    register,
    result_caption,
)
from .message import head

FINISH_KINDS = ("FinishObservation", "FinishAction")


def _observation(data: dict[str, Any]) -> dict[str, Any]:
    observation = data.get("observation")
    return observation if isinstance(observation, dict) else {}


def summarize(data: dict[str, Any]) -> str:
    return head(_observation(data).get("content"))


def failure(data: dict[str, Any]) -> str:
    observation = _observation(data)
    exit_code = observation.get("exit_code")
    if isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code not in (0, -1):
        return EXIT_CODE_FAILURE  # -1: the SDK's "no exit code" (still running, or timed out)
    if observation.get("is_error") is True or observation.get("timeout") is True:
        return TOOL_ERROR_FAILURE
    return ""


def card(data: dict[str, Any], full: bool) -> Card:
    observation = _observation(data)
    content = observation.get("content")
    result = Card(
        kind=OBSERVATION,
        tool_name=text_of(data.get("tool_name")),
        tool_call_id=text_of(data.get("tool_call_id")),
        action_kind=text_of(observation.get("kind")),
        output=output(observation_output(observation), full),
        images=images(content),
        command=command_of(observation),
    )
    if "exit_code" in observation:
        result.exit_code = observation["exit_code"]
    if observation.get("timeout") is True:
        result.facts.append(("timeout", "the command timed out"))
    if observation.get("is_error") is True:
        result.error = "the tool reported an error"
    if failure(data):
        result.tone = "error"
    if observation.get("kind") == "TaskObservation":
        for key in ("task_id", "subagent", "status"):
            if isinstance(observation.get(key), str) and observation[key]:
                result.facts.append((key.replace("_", " "), observation[key]))
    return result


def outcome(event: Any) -> str:
    return "finished" if event.payload_kind in FINISH_KINDS else "open"


register(
    Kind(
        OBSERVATION,
        "Observation",
        "kinds/observation.html",
        card,
        summarize=summarize,
        failure=failure,
        effect=files.effect,
        outcome=outcome,
        role="tool",
        word="result",
        caption=result_caption,
        result=result_text,
        review=lambda data, link, result: markdown.result("Output", data, result_text(data)),
    )
)


def _reason(data: Mapping[str, Any]) -> str:
    return text_of(data.get("rejection_reason")) or "rejected"


def rejection_text(data: Mapping[str, Any]) -> str:
    """What the model is told of a rejected call."""
    return f"Action rejected: {_reason(data)}"


def reject_card(data: dict[str, Any], full: bool) -> Card:
    result = Card(
        kind=USER_REJECT,
        tool_name=text_of(data.get("tool_name")),
        tool_call_id=text_of(data.get("tool_call_id")),
        tone="error",
        label="Rejected",
    )
    result.error = _reason(data)
    source = text_of(data.get("rejection_source"))
    if source:
        result.facts.append(("by", "a hook" if source == "hook" else source))
    return result


register(
    Kind(
        USER_REJECT,
        "Rejected",
        "kinds/rejection.html",
        reject_card,
        summarize=_reason,
        failure=lambda data: REJECTED_FAILURE,
        outcome=lambda event: "rejected",
        role="tool",
        word="rejected",
        caption=result_caption,
        result=rejection_text,
        review=lambda data, link, result: markdown.result("Rejected", data, rejection_text(data)),
    )
)
