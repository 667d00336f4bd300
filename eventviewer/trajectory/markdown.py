"""Markdown for the review document: event text escaped or fenced so none of it
becomes markup, and the shapes the kinds' sections share (see ``export``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from . import events
from .cards import mapping

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


def escape(text: str) -> str:
    """Text as Markdown shows it, on one line: only what Markdown would read as markup is
    escaped."""
    line = _INLINE.sub(lambda m: "\\" + m.group(0), events.one_line(text, 10_000))
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


def indent(block: str) -> str:
    return "".join(f"  {line}" if line.strip() else line for line in block.splitlines(keepends=True))


def text_parts(parts: list[dict[str, Any]]) -> str:
    """The texts of a chat message's content parts, as paragraphs."""
    return "\n\n".join(p["text"] for p in parts if p["type"] == "text")


def result(heading: str, data: Mapping[str, Any], text: str) -> str:
    """A tool's result: ``heading`` ("Output"), what its observation says of how it
    ended, and the start of ``text``."""
    observation = mapping(data, "observation")
    facts = []
    exit_code = observation.get("exit_code")
    if isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != -1:
        facts.append(f"exit code {exit_code}")
    if observation.get("is_error") is True:
        facts.append("the tool reported an error")
    head = f"{heading}" + (f" ({escape(', '.join(facts))})" if facts else "") + ":\n"
    return head + code(shortened(text))
