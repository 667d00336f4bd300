"""A branch written out for use elsewhere: as the model's messages in the OpenAI chat
format, and as a Markdown review document.

Both are built from the events' JSON, a message or a turn at a time, so a caller can
stream them. In the Markdown, everything that comes from an event is either inside a
code block (whose fence is longer than any run of backticks in it) or escaped, so no
event text becomes markup there. What each kind contributes (its content parts, its
text as a result, its section of the document) is its own, in ``kinds``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain, islice
from typing import Any

import orjson

from . import kinds, markdown
from .cards import mapping, result_text, texts
from .events import Light
from .markdown import TEXT_CHARS, code, destination, escape, indent, shortened
from .projection import Message, Turn
from .reviews import Written


def chat_message(message: Message, events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One message of what the model is sent (see ``projection.to_messages``), in the
    OpenAI chat format, from the JSON of its events (in its order)."""
    role = message.role
    if kinds.kind_of(message.kind).call:
        first = events[0] if events else {}
        body: dict[str, Any] = {"role": "assistant", "content": texts(first.get("thought")) or None}
        body["tool_calls"] = [_tool_call(e) for e in events]
        return body
    if role == "tool":
        event = events[0] if events else {}
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": _result_text(event)}
    return _with_parts(role, [part for event in events for part in _content_parts(event)])


def chat_message_json(message: Message, events: Iterable[Mapping[str, Any]]) -> Iterator[bytes]:
    """``orjson.dumps(chat_message(message, events))``, written as the events come: a run of
    a user's messages (the SDK sends them as one) or a response of many calls is never
    held whole."""
    stream = iter(events)
    if kinds.kind_of(message.kind).call:
        first = next(stream, None)
        if first is None:
            yield orjson.dumps(chat_message(message, []))
            return
        yield orjson.dumps(chat_message(message, [first]))[:-2]  # open at its tool_calls: ...}]
        for event in stream:
            yield b"," + orjson.dumps(_tool_call(event))
        yield b"]}"
        return
    if message.role == "tool":
        yield orjson.dumps(chat_message(message, list(islice(stream, 1))))
        return
    parts = chain.from_iterable(_content_parts(e) for e in stream)
    opening = list(islice(parts, 2))
    if len(opening) < 2:  # a single text part is sent as the content itself
        yield orjson.dumps(_with_parts(message.role, opening))
        return
    yield orjson.dumps({"role": message.role, "content": opening})[:-2]
    for part in parts:
        yield b"," + orjson.dumps(part)
    yield b"]}"


def _with_parts(role: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    if len(parts) == 1 and parts[0]["type"] == "text":
        return {"role": role, "content": parts[0]["text"]}
    return {"role": role, "content": parts}


def _tool_call(event: Mapping[str, Any]) -> dict[str, Any]:
    call = mapping(event, "tool_call")
    arguments = call.get("arguments")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments if arguments is not None else event.get("action") or {})
    return {
        "id": _string(call.get("id")) or _string(event.get("tool_call_id")),
        "type": "function",
        "function": {"name": _string(call.get("name")) or _string(event.get("tool_name")), "arguments": arguments},
    }


def _result_text(event: Mapping[str, Any]) -> str:
    text = kinds.kind_of(str(event.get("kind"))).result
    return text(event) if text else result_text(event)


def _content_parts(event: Mapping[str, Any]) -> list[dict[str, Any]]:
    parts = kinds.kind_of(str(event.get("kind"))).content
    return parts(event) if parts else [{"type": "text", "text": ""}]


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


# --- Markdown ------------------------------------------------------------------------------


def event_section(event: Light, data: Mapping[str, Any], link: str, result: Mapping[str, Any] | None = None) -> str:
    """One event of a turn as Markdown: what it says, and (for a tool call) its result."""
    rules = kinds.kind_of(event.kind)
    if rules.review is not None:
        if event.tool_name and data.get("tool_name") != event.tool_name:
            data = {**data, "tool_name": event.tool_name}  # the name read at import (a V0 event's is elsewhere)
        return rules.review(data, link, _result(result) if result is not None else "")
    summary = rules.summarize(dict(data))
    return f"*{escape(rules.label)}*" + (f": {escape(summary)}" if summary else "") + "\n"


def _result(data: Mapping[str, Any]) -> str:
    review = kinds.kind_of(str(data.get("kind"))).review
    return review(data, "", "") if review else markdown.result("Output", data, _result_text(data))


def review_turn(
    number: int,
    turn: Turn,
    data: Mapping[str, Mapping[str, Any]],
    result_for: Mapping[str, str],
    link: Callable[[str], str],
) -> str:
    """One turn of the review document: a heading, then its events; a tool call with its
    result (``result_for``: action id -> result id, whose JSON is in ``data`` too)."""
    first = turn.events[0]
    if turn.is_batch:
        calls = len(turn.events)
        heading = f"Assistant · {calls} tool call{'s' if calls != 1 else ''}"
    else:
        rules = kinds.kind_of(first.kind)
        heading = rules.heading(first) if rules.heading else rules.label
    out = [f"### {number}. {escape(heading)} ([link]({destination(link(first.event_id))}))\n\n"]
    if turn.is_batch:
        thought = texts(data.get(first.event_id, {}).get("thought"))
        if thought:
            out.append(code(shortened(thought, 400, TEXT_CHARS), "markdown") + "\n")
        for event in turn.events:
            result = data.get(result_for.get(event.event_id, ""))
            out.append(event_section(event, data.get(event.event_id, {}), link(event.event_id), result))
        return "".join(out) + "\n"
    return "".join(out) + event_section(first, data.get(first.event_id, {}), link(first.event_id)) + "\n"


def comment_threads(found: Sequence[tuple[Written, Sequence[Written]]]) -> str:
    """The review threads at an event: each comment's author, time and labels, its body
    (a reviewer's Markdown, fenced like a message's: it cannot turn into the document's markup)."""

    def one(comment: Written, reply: bool) -> str:
        head = f"{'Reply' if reply else 'Comment'} by {escape(comment.author)}, {escape(comment.when)}"
        if comment.labels:
            head += " · labels: " + ", ".join(escape(n) for n in comment.labels)
        if comment.resolved:
            head += " · resolved"
        body = indent(code(comment.body, "markdown")) if comment.body else ""
        return f"{'  ' if reply else ''}- **{head}**\n" + (indent(body) if reply else body)

    out = []
    for root, replies in found:
        out.append(one(root, False))
        out.extend(one(r, True) for r in replies)
    return "".join(out) + "\n" if out else ""
