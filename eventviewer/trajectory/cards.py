"""What a card shows of an event: plain strings and structures taken from its JSON.

Everything here is untrusted model and tool output. Nothing is marked safe: the
templates escape it, and markdown goes through the ``markdown`` template filter with
raw HTML disabled. Every card is bounded: however large the event, a card holds at
most a few screens of text and MAX_ITEMS items of any list, and says what it left out
(the event page, and the event's raw download, have the rest).

Which card an event gets is its kind's business (``trajectory.kinds``); the helpers
here are what the kinds build their cards from.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import orjson

PREVIEW_LINES = 40  # lines of tool output shown before "show all output"
PREVIEW_CHARS = 4000
TEXT_CHARS = 20_000  # messages and thoughts longer than this are cut on the conversation page
FULL_TEXT_CHARS = 1_000_000  # the event page's limit; the raw download has the rest
MAX_ITEMS = 200  # items of any list a card shows: tools, thought parts, images, keys
JSON_CHARS = 20_000  # pretty-printed JSON shown in a card
MAX_IMAGE_CHARS = 2 * 1024 * 1024  # a data: URL shown as an image (about 1.5 MB of image)
_IMAGE_URL = re.compile(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]+")


@dataclass
class Output:
    """A block of tool output, truncated for the page; the event page shows it all."""

    text: str
    preview: str
    total_lines: int
    truncated: bool


@dataclass
class Image:
    """An image from a message or an observation: a data: URL of a raster image shown
    inline, or (anything else) only described."""

    src: str = ""  # a checked data:image/...;base64 URL, else empty
    note: str = ""  # what is shown instead: "an image at https://…", "an image of 3 MB"


@dataclass
class Card:
    kind: str
    template: str = ""  # the card body's template (the kind's)
    label: str = ""  # the card's heading: "User", the tool's name, "Observation"
    tone: str = ""  # "error", "warn", "ok" or "": how the heading is coloured
    folded: bool = False  # the body starts folded (side events, token counts, logs)
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
    images: list[Image] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)  # a condensation's forgotten event ids
    extra_json: str = ""  # pretty-printed JSON of what the card does not show otherwise
    left_out: int = 0  # list items this card leaves out (the event page shows up to MAX_ITEMS more)
    cut: bool = False  # text or arguments were cut here; the event page shows them whole


def output(text: str, full: bool = False) -> Output:
    lines = text.splitlines()
    if full or (len(lines) <= PREVIEW_LINES and len(text) <= PREVIEW_CHARS):
        return Output(text, text, len(lines), False)
    preview = "\n".join(lines[:PREVIEW_LINES])[:PREVIEW_CHARS]
    return Output(text, preview, len(lines), True)


def pretty(value: Any, limit: int = JSON_CHARS) -> str:
    """``value`` as indented JSON, at most about ``limit`` characters: a value with a
    million keys or items is laid out only as far as it shows."""
    if value is None:
        return ""
    value = _head_of(value, MAX_ITEMS)
    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # nested deeper than orjson writes
        return "(nested too deeply to lay out here: see the raw JSON on the event page)"
    return text if len(text) <= limit else text[:limit] + "\n…"


def _head_of(value: Any, items: int, depth: int = 0) -> Any:
    """The first ``items`` entries of every list and object in ``value`` (down to a few
    levels), with a marker where some were left out."""
    if depth > 8:
        return value
    if isinstance(value, dict):
        head = {k: _head_of(v, items, depth + 1) for k, v in islice(value.items(), items)}
        if len(value) > items:
            head["…"] = f"{len(value) - items:,} more keys"
        return head
    if isinstance(value, list):
        head_list = [_head_of(v, items, depth + 1) for v in value[:items]]
        if len(value) > items:
            head_list.append(f"… {len(value) - items:,} more items")
        return head_list
    return value


def cut_text(text: str, limit: int) -> tuple[str, bool]:
    return (text, False) if len(text) <= limit else (text[:limit] + " …", True)


def mapping(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    """``data[key]`` when it is an object, else an empty one: event JSON is untrusted."""
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def items(data: Mapping[str, Any], key: str) -> list[Any]:
    """``data[key]`` when it is an array, else an empty one."""
    value = data.get(key)
    return value if isinstance(value, list) else []


def text_of(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def texts(content: Any, limit: int = MAX_ITEMS) -> str:
    """The text parts of a content list (or a plain string), joined; at most ``limit``
    parts. Images are described in place ([image])."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for item in content[:limit]:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("text"), str):
            parts.append(item["text"])
        elif item.get("type") == "image":
            urls = item.get("image_urls")
            count = len(urls) if isinstance(urls, list) else 0
            parts.append(f"[image{'s' if count != 1 else ''}: {count}]")
    if len(content) > limit:
        parts.append(f"[… {len(content) - limit:,} more parts]")
    return "\n\n".join(parts)


# An observation's fields that say what ran or where, not what came out: never its output.
_NOT_OUTPUT = frozenset(
    {
        "kind",
        "content",
        "command",
        "path",
        "url",
        "exit_code",
        "timeout",
        "is_error",
        "metadata",
        "prev_exist",
        "old_content",
        "new_content",
        "full_output_save_dir",
        "working_dir",
        "task_id",
        "subagent",
        "status",
        "tool_name",
        "tool_call_id",
    }
)


def observation_output(observation: Mapping[str, Any]) -> str:
    """What a tool's result says: its content's text or, when the content holds none,
    the text of the fields an observation of another shape puts it under
    (``{command, stdout, stderr, exit_code}``), each named when there are several."""
    text = texts(observation.get("content"))
    if text:
        return text
    found = []
    for key, value in islice(observation.items(), MAX_ITEMS):
        if key in _NOT_OUTPUT:
            continue
        value = texts(value) if isinstance(value, list) else value
        if isinstance(value, str) and value.strip():
            found.append((key, value))
    if len(found) == 1:
        return found[0][1]
    return "\n".join(f"[{key}]\n{value}" for key, value in found)


def result_text(data: Mapping[str, Any]) -> str:
    """A result's text: a tool's output, a rejection's reason, an error."""
    observation = data.get("observation")
    if isinstance(observation, dict):
        text = observation_output(observation)
        code = observation.get("exit_code")
        return text + (f"\n[exit code {code}]" if isinstance(code, int) and code not in (0, -1) else "")
    for key in ("rejection_reason", "error"):
        value = data.get(key)
        if isinstance(value, str):
            return value
    return ""


def images(content: Any) -> list[Image]:
    """The images of a content list: inline when a small raster data: URL, else described."""
    found: list[Image] = []
    if not isinstance(content, list):
        return found
    for item in content[:MAX_ITEMS]:
        if not isinstance(item, dict) or item.get("type") != "image" or not isinstance(item.get("image_urls"), list):
            continue
        for url in item["image_urls"][: MAX_ITEMS - len(found)]:
            found.append(image(url))
    return found


def image(url: Any) -> Image:
    if not isinstance(url, str):
        return Image(note="an image without a usable address")
    if len(url) > MAX_IMAGE_CHARS:
        return Image(note=f"an image of {len(url) * 3 // 4 // 1024:,} KB, too big to show here")
    if _IMAGE_URL.fullmatch(url):
        return Image(src=url)
    if url.startswith("data:"):
        return Image(note=f"an embedded {url[5:].split(';', 1)[0][:40] or 'file'}, not shown")
    return Image(note=f"an image at {url[:200]}")  # never fetched: the page loads nothing from elsewhere


def thinking(data: dict[str, Any]) -> list[str]:
    blocks = data.get("thinking_blocks")
    if not isinstance(blocks, list):
        return []
    return [text_of(b.get("thinking")) for b in blocks[:MAX_ITEMS] if isinstance(b, dict) and b.get("thinking")]


def tool_arguments(data: dict[str, Any]) -> str:
    """A tool call's arguments pretty-printed, or as the model wrote them when not JSON."""
    call = mapping(data, "tool_call")
    arguments = call.get("arguments")
    if isinstance(arguments, str):
        if len(arguments) > FULL_TEXT_CHARS:
            return arguments[:FULL_TEXT_CHARS]
        try:
            return pretty(json.loads(arguments), FULL_TEXT_CHARS)
        except (ValueError, RecursionError):  # not JSON, or absurdly nested: show it as the model wrote it
            return arguments
    if arguments is not None:
        return pretty(arguments, FULL_TEXT_CHARS)
    action = data.get("action")
    if isinstance(action, dict):
        return pretty({k: v for k, v in action.items() if k != "kind"}, FULL_TEXT_CHARS)
    return ""


def command_of(payload: dict[str, Any]) -> str:
    """A terminal command, or a file_editor command and its path."""
    command = payload.get("command")
    if not isinstance(command, str):
        return ""
    path = payload.get("path")
    return f"{command} {path}" if isinstance(path, str) else command


def bound(card: Card, full: bool) -> Card:
    """Cut what a card holds to what a page shows: long texts and arguments on the
    conversation page, anything past the event page's limit there."""
    limit = FULL_TEXT_CHARS if full else TEXT_CHARS
    card.text, cut = cut_text(card.text, limit)
    card.reasoning, cut_reasoning = cut_text(card.reasoning, limit)
    card.error, cut_error = cut_text(card.error, limit)
    card.cut = card.cut or cut or cut_reasoning or cut_error
    if not full:
        arguments = output(card.arguments)
        if arguments.truncated:
            card.arguments, card.cut = arguments.preview + "\n…", True
    return card
