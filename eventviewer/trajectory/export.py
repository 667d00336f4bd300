"""A branch written out for use elsewhere: as the model's messages in the OpenAI chat
format, and as a Markdown review document.

Both are built from the events' JSON, a message or a turn at a time, so a caller can
stream them. In the Markdown, everything that comes from an event is either inside a
code block (whose fence is longer than any run of backticks in it) or escaped, so no
event text becomes markup there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain, islice
from typing import Any
from urllib.parse import quote

import orjson

from . import kinds
from .cards import mapping, texts
from .compare import output
from .events import Light, one_line
from .projection import Message, Turn
from .reviews import Written

OUTPUT_LINES = 30  # lines of a tool's output in the review document
OUTPUT_CHARS = 3_000
TEXT_CHARS = 20_000  # a message or thought in the review document
ARGUMENT_CHARS = 3_000
# What Markdown reads as markup wherever it stands in a line (CommonMark and GitHub's
# tables and strikethrough): a backslash, code spans, emphasis, links, HTML and
# entities. Other punctuation (``calc.py.``, ids with ``-``) stays as it is.
_INLINE = re.compile(r"[\\`*\[\]<|~]|&(?=#?\w+;)|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# Markup only at the start of a line (headings, quotes, lists, breaks) or after a space
# (a heading's closing #s).
_LINE_START = re.compile(r"^(?:[#>+=-]|\d+(?=[.)]))")
_AFTER_SPACE_HASH = re.compile(r"(?<=\s)#")
# What a link destination may hold as it is: the URL characters but parentheses, which
# would end the destination early, and % (already encoded).
_DESTINATION_SAFE = ":/?#[]@!$&'*+,;=%-._~"


def chat_message(message: Message, events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One message of what the model is sent (see ``projection.to_messages``), in the
    OpenAI chat format, from the JSON of its events (in its order)."""
    role = message.role
    if message.kind == kinds.ACTION:
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
    if message.kind == kinds.ACTION:
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
    if event.get("kind") == kinds.USER_REJECT:
        return f"Action rejected: {_string(event.get('rejection_reason')) or 'rejected'}"
    return output(event)


def _content_parts(event: Mapping[str, Any]) -> list[dict[str, Any]]:
    kind = event.get("kind")
    if kind == kinds.SYSTEM_PROMPT:
        prompt = event.get("system_prompt")
        text = prompt.get("text") if isinstance(prompt, dict) else prompt
        return [{"type": "text", "text": _string(text)}]
    if kind == kinds.CONDENSATION_SUMMARY:
        return [{"type": "text", "text": _string(event.get("summary"))}]
    message = mapping(event, "llm_message")
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    parts: list[dict[str, Any]] = []
    for item in content if isinstance(content, list) else []:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("text"), str):
            parts.append({"type": "text", "text": item["text"]})
        elif item.get("type") == "image" and isinstance(item.get("image_urls"), list):
            parts.extend({"type": "image_url", "image_url": {"url": url}} for url in item["image_urls"] if url)
    return parts or [{"type": "text", "text": ""}]


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


# --- Markdown ------------------------------------------------------------------------------


def escape(text: str) -> str:
    """Text as Markdown shows it, on one line: only what Markdown would read as markup is
    escaped."""
    line = _INLINE.sub(lambda m: "\\" + m.group(0), one_line(text, 10_000))
    line = _AFTER_SPACE_HASH.sub(r"\\#", line)
    start = _LINE_START.match(line)
    if start is None:
        return line
    if start.group(0).isdigit():  # "1. " would open a list: escape its dot
        return line[: start.end()] + "\\" + line[start.end() :]
    return "\\" + line


def destination(url: str) -> str:
    """A URL as a link's destination: whatever an id put in it (spaces, parentheses, ``<``)
    percent-encoded, so the link ends where it should and nothing after it is markup."""
    return quote(url, safe=_DESTINATION_SAFE)


def code(text: str, info: str = "text") -> str:
    """A fenced code block holding ``text`` exactly, whatever backticks it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}{'' if text.endswith(chr(10)) or not text else chr(10)}{fence}\n"


def shortened(text: str, lines: int = OUTPUT_LINES, chars: int = OUTPUT_CHARS) -> str:
    """The start of a long text, saying how much was left out."""
    kept = text.splitlines()
    head = "\n".join(kept[:lines])[:chars]
    if len(kept) > lines or len("\n".join(kept)) > len(head):
        rest = len(kept) - head.count("\n") - 1
        head += f"\n… ({rest:,} more line{'s' if rest != 1 else ''} in the conversation)"
    return head


def event_section(event: Light, data: Mapping[str, Any], link: str, result: Mapping[str, Any] | None = None) -> str:
    """One event of a turn as Markdown: what it says, and (for a tool call) its result."""
    kind = event.kind
    out: list[str] = []
    if kind == kinds.ACTION:
        action = data.get("action") if isinstance(data.get("action"), dict) else None
        command = action.get("command") if action else None
        out.append(f"- **{escape(event.tool_name or 'tool call')}** ([event]({destination(link)}))\n")
        if action is None:
            out.append("  *invalid call: no action could be made of it*\n")
        if isinstance(command, str):
            path = action.get("path") if action else None
            out.append(_indent(code(f"$ {command}" + (f" {path}" if isinstance(path, str) else ""), "sh")))
        else:
            arguments = _tool_arguments(data)
            if arguments:
                out.append(_indent(code(shortened(arguments, 40, ARGUMENT_CHARS), "json")))
        if result is not None:
            out.append(_indent(_result(result)))
        return "".join(out)
    if kind in (kinds.MESSAGE, kinds.SYSTEM_PROMPT):
        text = "\n\n".join(p["text"] for p in _content_parts(data) if p["type"] == "text")
        # The system prompt is the same long text in every run: its start says which.
        return code(shortened(text) if kind == kinds.SYSTEM_PROMPT else shortened(text, 400, TEXT_CHARS), "markdown")
    if kind in kinds.ACTION_RESULTS or kind == kinds.AGENT_ERROR:
        return _result(data)
    summary = kinds.kind_of(kind).summarize(dict(data))
    return f"*{escape(kinds.kind_of(kind).label)}*" + (f": {escape(summary)}" if summary else "") + "\n"


def _result(data: Mapping[str, Any]) -> str:
    kind = data.get("kind")
    observation = mapping(data, "observation")
    facts = []
    code_ = observation.get("exit_code")
    if isinstance(code_, int) and not isinstance(code_, bool) and code_ != -1:
        facts.append(f"exit code {code_}")
    if observation.get("is_error") is True:
        facts.append("the tool reported an error")
    label = {kinds.USER_REJECT: "Rejected", kinds.AGENT_ERROR: "Error"}.get(str(kind), "Output")
    head = f"{label}" + (f" ({escape(', '.join(facts))})" if facts else "") + ":\n"
    return head + code(shortened(_result_text(data)))


def _tool_arguments(data: Mapping[str, Any]) -> str:
    call = mapping(data, "tool_call")
    arguments = call.get("arguments")
    if isinstance(arguments, str):
        try:
            return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
        except (ValueError, RecursionError):
            return arguments
    return json.dumps(arguments, indent=2, ensure_ascii=False) if arguments is not None else ""


def _indent(block: str) -> str:
    return "".join(f"  {line}" if line.strip() else line for line in block.splitlines(keepends=True))


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
    elif first.kind == kinds.MESSAGE:
        heading = (first.role or first.source or "message").capitalize()
    else:
        heading = kinds.kind_of(first.kind).label
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
        body = _indent(code(comment.body, "markdown")) if comment.body else ""
        return f"{'  ' if reply else ''}- **{head}**\n" + (_indent(body) if reply else body)

    out = []
    for root, replies in found:
        out.append(one(root, False))
        out.extend(one(r, True) for r in replies)
    return "".join(out) + "\n" if out else ""
