"""ActionEvent: one tool call of an assistant turn (several calls of one LLM response
are one turn: see ``projection``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .. import markdown
from ..cards import Card, command_of, items, mapping, text_of, texts, thinking, tool_arguments
from .base import ACTION, INVALID_CALL_FAILURE, Kind, register


def summarize(data: dict[str, Any]) -> str:
    summary = data.get("summary")
    if isinstance(summary, str) and summary.strip():
        return summary
    parts = [item.get("text") for item in items(data, "thought")[:20] if isinstance(item, dict)]
    thought = " ".join(p for p in parts if isinstance(p, str) and p)
    return thought or text_of(data.get("tool_name"))


def failure(data: dict[str, Any]) -> str:
    # No ``action``: the model's call could not be turned into one (unknown tool, bad arguments).
    return "" if isinstance(data.get("action"), dict) else INVALID_CALL_FAILURE


def card(data: dict[str, Any], full: bool) -> Card:
    found = data.get("action")
    action = found if isinstance(found, dict) else None
    result = Card(
        kind=ACTION,
        label=text_of(data.get("tool_name")) or "tool call",
        text=texts(data.get("thought")),
        reasoning=text_of(data.get("reasoning_content")),
        thinking=thinking(data),
        tool_name=text_of(data.get("tool_name")),
        tool_call_id=text_of(data.get("tool_call_id")),
        arguments=tool_arguments(data),
        action_kind=text_of(action.get("kind")) if action else "",
        title=text_of(data.get("summary")),
        command=command_of(action) if action else "",
    )
    if action is None:
        result.tone = "warn"
    risk = data.get("security_risk")
    if isinstance(risk, str) and risk not in ("", "UNKNOWN"):
        result.facts.append(("risk", risk))
    if action and action.get("kind") == "TaskAction":
        for key in ("description", "subagent_type", "resume"):
            if isinstance(action.get(key), str) and action[key]:
                result.facts.append((key.replace("_", " "), action[key]))
    return result


def outcome(event: Any) -> str:
    if event.executable:
        return "pending"
    # A finish that waits for no result (V0's) ends the run as the SDK's FinishObservation does.
    return "finished" if event.payload_kind == "FinishAction" else "open"


def caption(word: str, source: str, tool_name: str, summary: str, command: str) -> str:
    what = command or (summary if summary != tool_name else "")
    return f"{tool_name or 'tool'}: {what}" if what else tool_name or "tool call"


def review(data: Mapping[str, Any], link: str, result: str) -> str:
    """The call in the review document: its tool, its command or arguments, its result."""
    action = data.get("action") if isinstance(data.get("action"), dict) else None
    command = action.get("command") if action else None
    tool_name = data.get("tool_name")
    tool = tool_name if isinstance(tool_name, str) and tool_name else "tool call"
    out = [f"- **{markdown.escape(tool)}** ([event]({markdown.destination(link)}))\n"]
    if action is None:
        out.append("  *invalid call: no action could be made of it*\n")
    if isinstance(command, str):
        path = action.get("path") if action else None
        out.append(markdown.indent(markdown.code(f"$ {command}" + (f" {path}" if isinstance(path, str) else ""), "sh")))
    else:
        arguments = _arguments(data)
        if arguments:
            out.append(
                markdown.indent(markdown.code(markdown.shortened(arguments, 40, markdown.ARGUMENT_CHARS), "json"))
            )
    return "".join(out) + markdown.indent(result)


def _arguments(data: Mapping[str, Any]) -> str:
    arguments = mapping(data, "tool_call").get("arguments")
    if isinstance(arguments, str):
        try:
            return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
        except (ValueError, RecursionError):
            return arguments
    return json.dumps(arguments, indent=2, ensure_ascii=False) if arguments is not None else ""


register(
    Kind(
        ACTION,
        "Action",
        "kinds/action.html",
        card,
        summarize=summarize,
        failure=failure,
        outcome=outcome,
        role="assistant",
        call=True,
        caption=caption,
        review=review,
    )
)
