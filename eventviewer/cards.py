"""What a card shows of an event: plain strings and structures taken from its JSON.

Everything here is untrusted model and tool output. Nothing is marked safe: the
templates escape it, and markdown goes through ``templatetags.eventviewer.markdown``
with raw HTML disabled.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import orjson

from eventviewer.trajectory import kinds

PREVIEW_LINES = 40
PREVIEW_CHARS = 4000
TEXT_CHARS = 20_000  # messages and thoughts longer than this are cut on the conversation page


@dataclass
class Output:
    """A block of tool output, truncated for the page; the event page shows it all."""

    text: str
    preview: str
    total_lines: int
    truncated: bool


@dataclass
class Card:
    kind: str
    title: str = ""
    text: str = ""  # markdown: a message, a thought
    reasoning: str = ""
    thinking: list[str] = field(default_factory=list)
    tool_name: str = ""
    tool_call_id: str = ""
    arguments: str = ""  # pretty-printed JSON
    action_kind: str = ""
    command: str = ""  # a terminal command or file_editor command + path
    output: Output | None = None
    exit_code: Any = None
    error: str = ""
    facts: list[tuple[str, str]] = field(default_factory=list)  # small labelled values
    tools: list[tuple[str, str]] = field(default_factory=list)  # system prompt: (name, description)
    forgotten: int = 0
    extra_json: str = ""  # events of a kind we do not know: their JSON, pretty-printed
    cut: bool = False  # text or arguments were cut here; the event page shows them whole


def output(text: str, full: bool = False) -> Output:
    lines = text.splitlines()
    if full or (len(lines) <= PREVIEW_LINES and len(text) <= PREVIEW_CHARS):
        return Output(text, text, len(lines), False)
    preview = "\n".join(lines[:PREVIEW_LINES])[:PREVIEW_CHARS]
    return Output(text, preview, len(lines), True)


def pretty(value: Any) -> str:
    if value is None:
        return ""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # nested deeper than orjson writes
        return "(nested too deeply to lay out here: see the raw JSON on the event page)"


def build(data: dict[str, Any], full: bool = False) -> Card:
    """The card for one event's JSON; ``full`` shows long output untruncated."""
    kind = str(data.get("kind", ""))
    builder = _BUILDERS.get(kind, _unknown)
    card = builder(data, full)
    card.kind = kind
    if not full:
        if len(card.text) > TEXT_CHARS:
            card.text, card.cut = card.text[:TEXT_CHARS] + " …", True
        arguments = output(card.arguments)
        if arguments.truncated:
            card.arguments, card.cut = arguments.preview + "\n…", True
    return card


def _texts(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for item in content:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("text"), str):
            parts.append(item["text"])
        elif item.get("type") == "image":
            urls = item.get("image_urls")
            parts.append(f"[image: {len(urls) if isinstance(urls, list) else 0} url(s)]")
    return "\n\n".join(parts)


def _thinking(data: dict[str, Any]) -> list[str]:
    blocks = data.get("thinking_blocks")
    if not isinstance(blocks, list):
        return []
    return [str(b.get("thinking") or "") for b in blocks if isinstance(b, dict) and b.get("thinking")]


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _message(data: dict[str, Any], full: bool) -> Card:
    message = data.get("llm_message") if isinstance(data.get("llm_message"), dict) else {}
    card = Card(kind=kinds.MESSAGE, text=_texts(message.get("content")))
    card.reasoning = _str(message.get("reasoning_content"))
    card.thinking = _thinking(message)
    skills = data.get("activated_skills")
    if isinstance(skills, list) and skills:
        card.facts.append(("skills", ", ".join(_str(s) for s in skills)))
    return card


def _arguments(data: dict[str, Any]) -> str:
    call = data.get("tool_call") if isinstance(data.get("tool_call"), dict) else {}
    arguments = call.get("arguments")
    if isinstance(arguments, str):
        try:
            return pretty(json.loads(arguments))
        except (ValueError, RecursionError):  # not JSON, or absurdly nested: show it as the model wrote it
            return arguments
    if arguments is not None:
        return pretty(arguments)
    action = data.get("action")
    if isinstance(action, dict):
        return pretty({k: v for k, v in action.items() if k != "kind"})
    return ""


def _action(data: dict[str, Any], full: bool) -> Card:
    action = data.get("action") if isinstance(data.get("action"), dict) else None
    card = Card(
        kind=kinds.ACTION,
        text=_texts(data.get("thought")),
        reasoning=_str(data.get("reasoning_content")),
        thinking=_thinking(data),
        tool_name=_str(data.get("tool_name")),
        tool_call_id=_str(data.get("tool_call_id")),
        arguments=_arguments(data),
        action_kind=_str(action.get("kind")) if action else "",
        title=_str(data.get("summary")),
    )
    if action:
        if isinstance(action.get("command"), str):
            card.command = action["command"]
            if isinstance(action.get("path"), str):
                card.command += f" {action['path']}"
    risk = data.get("security_risk")
    if isinstance(risk, str) and risk not in ("", "UNKNOWN"):
        card.facts.append(("risk", risk))
    return card


def _observation(data: dict[str, Any], full: bool) -> Card:
    observation = data.get("observation") if isinstance(data.get("observation"), dict) else {}
    card = Card(
        kind=kinds.OBSERVATION,
        tool_name=_str(data.get("tool_name")),
        tool_call_id=_str(data.get("tool_call_id")),
        action_kind=_str(observation.get("kind")),
        output=output(_texts(observation.get("content")), full),
    )
    if isinstance(observation.get("command"), str):
        card.command = observation["command"]
        if isinstance(observation.get("path"), str):
            card.command += f" {observation['path']}"
    if "exit_code" in observation:
        card.exit_code = observation["exit_code"]
    if observation.get("timeout") is True:
        card.facts.append(("timeout", "the command timed out"))
    if observation.get("is_error") is True:
        card.error = "the tool reported an error"
    return card


def _reject(data: dict[str, Any], full: bool) -> Card:
    card = Card(
        kind=kinds.USER_REJECT, tool_name=_str(data.get("tool_name")), tool_call_id=_str(data.get("tool_call_id"))
    )
    card.error = _str(data.get("rejection_reason")) or "rejected"
    if data.get("rejection_source"):
        card.facts.append(("by", _str(data.get("rejection_source"))))
    return card


def _agent_error(data: dict[str, Any], full: bool) -> Card:
    card = Card(
        kind=kinds.AGENT_ERROR, tool_name=_str(data.get("tool_name")), tool_call_id=_str(data.get("tool_call_id"))
    )
    card.error = _str(data.get("error"))
    return card


def _conversation_error(data: dict[str, Any], full: bool) -> Card:
    card = Card(kind=kinds.CONVERSATION_ERROR, title=_str(data.get("code")))
    card.error = _str(data.get("detail"))
    return card


def _system_prompt(data: dict[str, Any], full: bool) -> Card:
    prompt = data.get("system_prompt")
    card = Card(kind=kinds.SYSTEM_PROMPT, text=_texts([prompt]) if isinstance(prompt, dict) else _texts(prompt))
    tools = data.get("tools") if isinstance(data.get("tools"), list) else []
    for tool in tools:
        if isinstance(tool, dict):
            name = _str(tool.get("title") or tool.get("name") or tool.get("kind"))
            card.tools.append((name, _str(tool.get("description"))))
    dynamic = data.get("dynamic_context")
    if dynamic:
        card.facts.append(("dynamic context", _texts([dynamic]) if isinstance(dynamic, dict) else _str(dynamic)))
    return card


def _condensation(data: dict[str, Any], full: bool) -> Card:
    card = Card(kind=kinds.CONDENSATION, text=_str(data.get("summary")))
    forgotten = data.get("forgotten_event_ids")
    card.forgotten = len(forgotten) if isinstance(forgotten, list) else 0
    if data.get("summary_offset") is not None:
        card.facts.append(("summary offset", _str(data.get("summary_offset"))))
    return card


def _condensation_request(data: dict[str, Any], full: bool) -> Card:
    card = Card(kind=kinds.CONDENSATION_REQUEST)
    if data.get("reason"):
        card.facts.append(("reason", _str(data.get("reason"))))
    return card


def _unknown(data: dict[str, Any], full: bool) -> Card:
    card = Card(kind=_str(data.get("kind")))
    rest = {k: v for k, v in data.items() if k not in ("id", "timestamp", "source", "parent_id", "kind")}
    card.extra_json = pretty(rest) if rest else ""
    return card


_BUILDERS = {
    kinds.MESSAGE: _message,
    kinds.ACTION: _action,
    kinds.OBSERVATION: _observation,
    kinds.USER_REJECT: _reject,
    kinds.AGENT_ERROR: _agent_error,
    kinds.CONVERSATION_ERROR: _conversation_error,
    kinds.SYSTEM_PROMPT: _system_prompt,
    kinds.CONDENSATION: _condensation,
    kinds.CONDENSATION_SUMMARY: _condensation,
    kinds.CONDENSATION_REQUEST: _condensation_request,
}
