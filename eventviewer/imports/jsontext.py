"""JSON text as eventviewer reads it: one event's bytes checked (valid, not too deep, no
key given twice), and the items of a JSON array read one at a time as the text they were."""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from typing import IO, Any

import orjson

MAX_NESTING = 254  # the deepest JSON orjson writes back out (an array file's items, the event cards)
READ_CHUNK = 1024 * 1024  # bytes read at a time from a JSON or JSONL file
_TOO_DEEP = f"nested deeper than {MAX_NESTING} levels of arrays and objects"


def parse_json(content: bytes, line: int = 1, column: int = 1) -> tuple[Any, bytes, str]:
    """The JSON in ``content``, or why not (a syntax error placed by line and column in
    its file, where ``content`` starts at ``line`` and ``column``). JSON nested deeper than orjson writes back
    out (and deep enough to exhaust Python's recursion in ``==``, ``str()`` and the
    event cards) is refused, and so is a key given twice in one object: which of the
    two counts is anyone's guess (orjson keeps the last)."""
    try:
        data = orjson.loads(content)  # which also refuses bytes that are not UTF-8
    except orjson.JSONDecodeError as e:
        return None, b"", malformed(e.msg, line + e.lineno - 1, column + e.colno - 1 if e.lineno == 1 else e.colno)
    raw = content.strip()
    if isinstance(data, (dict, list)):
        written = _written(data)
        if written is None:
            return data, b"", _TOO_DEEP  # the data names the event in the problem line
        # What the SDK writes comes back byte for byte: nothing was dropped.
        if written != raw and _may_repeat_keys(raw, written):
            key = _repeated_key(raw)
            if key is not None:
                return data, b"", f'the key "{key[:100]}" appears twice in one object'
    return data, raw, ""


MALFORMED = "malformed JSON at line"


def malformed(message: str, line: int, column: int) -> str:
    return f"{MALFORMED} {line}, column {column} ({message})"


def _written(data: Any) -> bytes | None:
    """``data`` written out again by orjson, or None when it is nested deeper than
    MAX_NESTING (which orjson refuses to write)."""
    try:
        return orjson.dumps(data)
    except orjson.JSONEncodeError:
        return None


def _may_repeat_keys(content: bytes, written: bytes) -> bool:
    """A cheap test that never misses a repeated key. Parsing keeps one of each
    repeated key and drops the others, each with the colon after it: so the text
    written back has fewer colons than the one read. Colons inside strings stay
    colons, unless the text escapes them (\\u003a), which is rare: then look closely."""
    return written.count(b":") != content.count(b":") or b"\\u003" in content


# The members of a top-level object that hold the events: "events", and "trajectory" (what
# OpenHands' /trajectory API answers; its "export trajectory" saves the array alone).
ARRAY_KEYS = ("events", "trajectory")


class _RepeatedKey(Exception):
    pass


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return result


def _repeated_key(content: bytes) -> str | None:
    """The first key that appears twice in one object (the slow, exact look)."""
    try:
        json.loads(content, object_pairs_hook=_no_repeats)
    except _RepeatedKey as e:
        return str(e.args[0])
    except (ValueError, RecursionError):
        return None
    return None


class NotAnArray(Exception):
    pass


class BadItem(Exception):
    def __init__(self, message: str, in_item: bool = True):
        super().__init__(message)
        self.in_item = in_item


_WHITE = " \t\n\r"
_SPACE = re.compile(r"[ \t\n\r]*")
_ENDS = re.compile(r"[\]}]")
MAX_DEEP_TRIES = 10_000
_DECODER = json.JSONDecoder()


def too_big_item(cap: int) -> str:
    return f"an item over the limit of {cap:,} bytes (EVENTVIEWER_MAX_EVENT_BYTES)"


class ArrayItems:
    """The top-level items of a JSON array (or of an object's "events" array, or the
    member named by ``keys``) as the text they were, read a chunk at a time. The
    standard library's decoder finds where each item ends (in C); orjson then parses
    the item as any event file's."""

    def __init__(self, f: IO[bytes], cap: int, keys: tuple[str, ...] = ARRAY_KEYS):
        self.f, self.cap, self.keys = f, cap, keys
        self.utf8 = codecs.getincrementaldecoder("utf-8")()
        self.text, self.pos, self.eof = "", 0, False
        self.in_object = False  # the array is an object's "events" member
        # Where self.text starts in the file: its line, and the characters before it on that line.
        self.lines_before, self.columns_before = 0, 0
        self.item_at = 0  # where in self.text the last item given starts

    def _more(self, size: int = READ_CHUNK) -> bool:
        if self.eof:
            return False
        data = self.f.read(size)
        try:
            decoded = self.utf8.decode(data, final=not data)
        except UnicodeDecodeError as e:
            raise BadItem(f"malformed JSON (not valid UTF-8: {e.reason})", in_item=False) from None
        self.eof = not data
        dropped = self.text[: self.pos]
        if (newlines := dropped.count("\n")) > 0:
            self.lines_before += newlines
            self.columns_before = len(dropped) - dropped.rfind("\n") - 1
        else:
            self.columns_before += len(dropped)
        self.text = self.text[self.pos :] + decoded
        self.pos = 0
        return True

    def _next_char(self) -> str:
        """The next character that is not white space ("" at the end), read up to."""
        text, pos = self.text, self.pos
        if pos < len(text) and text[pos] not in _WHITE:  # the usual case, without the regex
            return text[pos]
        while True:
            self.pos = _SPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]  # "…*" always matches
            if self.pos < len(self.text) or not self._more():
                return self.text[self.pos : self.pos + 1]

    def _value(self) -> str:
        """The text of the JSON value starting here (the caller checks what it holds)."""
        self._next_char()
        size = READ_CHUNK
        while True:
            try:
                _, end = _DECODER.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as e:
                if len(self.text) - self.pos > self.cap:
                    raise BadItem(too_big_item(self.cap)) from None
                if not self._more(size):
                    raise BadItem(malformed(e.msg, *self.place(e.pos))) from None
                size *= 2  # a big item: read more at a time, so it is decoded few times over
                continue
            except RecursionError:
                return self._deep_value()
            if end == len(self.text) and self._more(size):
                continue  # a number may go on in the next chunk
            value, self.pos = self.text[self.pos : end], end
            return value

    def place(self, pos: int) -> tuple[int, int]:
        """The line and column (from 1) of ``self.text[pos]`` in the file: worked out only
        for a problem, since it counts the lines of the text read so far."""
        line = self.lines_before + self.text.count("\n", 0, pos) + 1
        start = self.text.rfind("\n", 0, pos)
        return line, (pos - start if start >= 0 else self.columns_before + pos + 1)

    def _deep_value(self) -> str:
        """A value nested too deep for the standard library's decoder: the first end of
        an array or object up to which orjson parses (a value is never a prefix of
        another, so nothing shorter parses). Tried a bounded number of times."""
        searched, tries = 1, 0  # characters after self.pos already searched
        while True:
            for match in _ENDS.finditer(self.text, self.pos + searched):
                tries += 1
                if tries > MAX_DEEP_TRIES:
                    raise BadItem(_TOO_DEEP)
                try:
                    orjson.loads(self.text[self.pos : match.end()])
                except orjson.JSONDecodeError:
                    continue
                value, self.pos = self.text[self.pos : match.end()], match.end()
                return value
            searched = len(self.text) - self.pos
            if searched > self.cap or not self._more():
                raise BadItem(_TOO_DEEP)

    def items(self) -> Iterator[bytes]:
        first = self._next_char()
        if first == "{":
            self.in_object = True
            self._find_events()
        elif first != "[":
            raise NotAnArray
        self.pos += 1
        if self._next_char() == "]":
            self.pos += 1
        else:
            while True:
                self._next_char()
                self.item_at = self.pos
                item = self._value().encode()
                if len(item) > self.cap:
                    raise BadItem(too_big_item(self.cap))
                yield item
                separator = self._next_char()
                self.pos += 1
                if separator == "]":
                    break
                if separator != ",":
                    raise BadItem("malformed JSON (expected , or ] after an item)")
                self._next_char()
        if not self._rest_is_space():
            raise BadItem("malformed JSON (more after the end of the array)", in_item=False)

    def _find_events(self) -> None:
        """Move to the array of a top-level object named by one of ``keys``, skipping
        other members (each bounded like an item)."""
        self.pos += 1
        while self._next_char() == '"':
            key = json.loads(self._value())
            if self._next_char() != ":":
                raise BadItem("malformed JSON (expected : after a key)", in_item=False)
            self.pos += 1
            if key in self.keys and self._next_char() == "[":
                return
            self._value()
            if self._next_char() == ",":
                self.pos += 1
        raise NotAnArray

    def _rest_is_space(self) -> bool:
        if self.in_object:  # the object's other members, each bounded like an item
            while self._next_char() == ",":
                self.pos += 1
                if self._next_char() != '"':
                    return False
                self._value()
                if self._next_char() != ":":
                    return False
                self.pos += 1
                self._value()
            if self._next_char() != "}":
                return False
            self.pos += 1
        return self._next_char() == ""
