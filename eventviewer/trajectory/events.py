"""What eventviewer reads from one persisted SDK event.

``describe`` checks the fields it relies on (ids, kinds, parents, the identity triple)
and extracts the light columns; everything else stays in the verbatim JSON. Wrong
types raise ValueError with a message meant for the user.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from . import kinds

MAX_ID_LENGTH = 255
SUMMARY_LENGTH = 200  # characters of a summary shown
STORED_SUMMARY_LENGTH = 300  # Event.summary's max_length
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Control characters, and the invisible ones that reorder or hide text (bidi overrides).
_CONTROL_TO_SPACE = {
    c: " " for c in [*range(0x20), 0x7F, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]
}


class Light(NamedTuple):
    """An event's light columns: everything eventviewer reads of it without its JSON.

    The one shape of an event row: ``describe`` makes it from the JSON, the importer
    fills in where it is stored (the last five fields) and writes it, and reading a
    branch gets it back (``Event.objects.path_to``). The database columns are these
    fields' names (``Event.LIGHT_COLUMNS``)."""

    event_id: str
    kind: str
    parent_ref: str | None = None  # the raw parent_id: null (or absent) and "__root__" differ
    source: str = ""
    timestamp: str = ""  # verbatim
    tool_name: str = ""
    tool_call_id: str = ""
    action_id: str = ""
    llm_response_id: str = ""
    payload_kind: str = ""  # action.kind / observation.kind
    role: str = ""  # a MessageEvent's llm_message.role
    executable: bool = False  # an ActionEvent with an ``action``
    carries_text: bool = False  # thought, reasoning or thinking blocks
    is_error: bool = False
    summary: str = ""  # the start of its text
    failure: str = ""  # a failure it records about itself (kinds.*_FAILURE), or ""
    thinking: bool = False  # an action with thinking blocks (it opens a tool loop in the model's view)
    effect: str = ""  # what running its call may have done to the workspace (files.EDIT, files.COMMAND) or ""
    # Where it is stored:
    pk: int = 0
    seq: int = 0  # append position in the conversation's log
    parent_pk: int | None = None  # the resolved parent's pk
    depth: int | None = None  # None: not a tree node
    anchor: int | None = None  # a skip pointer: its ancestor at ``tree.anchor_depth(depth)`` (None: a root, unset)

    def placed(self, pk: int, parent_pk: int | None, depth: int | None, anchor: int | None) -> Light:
        """The event as stored: where it is, with what ``describe`` read. (``_replace``
        by keyword costs the import, which places every event, twice as much.)"""
        return _new_light(Light, (*self[:_WHERE], pk, self.seq, parent_pk, depth, anchor))


_WHERE = Light._fields.index("pk")  # the fields from here on say where the event is stored
_new_light = tuple.__new__


def describe(data: Any, seq: int = 0) -> Light:
    """The light columns of one event's JSON (``seq``: its append position, when known)."""
    # Runs once per imported event: positional arguments and few calls on purpose.
    if not isinstance(data, dict):
        raise ValueError(f"an event must be a JSON object, not {_type_name(data)}")
    if data.get("id") is None:
        raise ValueError('the event has no "id"')
    event_id = _identifier(data, "id")
    if not event_id:
        raise ValueError('"id" is empty')
    kind = _identifier(data, "kind")
    if not kind:
        raise ValueError('the event has no "kind"')
    if len(kind) > 100:
        raise ValueError('"kind" is longer than 100 characters')
    parent_ref = _identifier(data, "parent_id") or None
    if parent_ref is None and data.get("parent_id") == "":
        raise ValueError('"parent_id" is an empty string; use null for a root')

    action = _object_or_none(data, "action")
    observation = _object_or_none(data, "observation")
    message = _object_or_none(data, "llm_message")
    thought = _list_or_none(data, "thought")
    thinking = _list_or_none(data, "thinking_blocks")
    reasoning = _string(data, "reasoning_content", limit=None)
    payload = action if action is not None else observation
    payload_kind = "" if payload is None else _string(payload, "kind", limit=100, label="payload kind")
    role = _string(message, "role", limit=20, label="llm_message.role") if message else ""
    kind_rules = kinds.kind_of(kind)
    is_error = kind_rules.error or bool(observation is not None and observation.get("is_error") is True)
    return Light(
        event_id,
        kind,
        parent_ref,
        _string(data, "source", limit=40),
        _string(data, "timestamp", limit=64),
        _identifier(data, "tool_name"),
        _identifier(data, "tool_call_id"),
        _identifier(data, "action_id"),
        _identifier(data, "llm_response_id"),
        payload_kind,
        role,
        # executable; V0 wrote no result for its finish, so it waits for none
        kind_rules.call and action is not None and not (payload_kind == "FinishAction" and "v0" in data),
        bool(thinking or (thought and _has_text(thought)) or (reasoning and not reasoning.isspace())),  # carries_text
        is_error,
        _stored_summary(kind_rules.summarize(data)),
        kind_rules.failure(data),
        kind_rules.call and bool(thinking),
        kind_rules.effect(data),
        0,  # pk
        seq,
    )


def _stored_summary(text: str) -> str:
    """The start of an event's summary, as stored: ``one_line`` makes it one clean line
    where it shows, for the few events shown (for every event, it would cost more than
    the rest of describe)."""
    head = text[: STORED_SUMMARY_LENGTH * 4].lstrip()
    if not head and text:  # nothing but whitespace so far: rare enough to strip it all
        head = text.lstrip()
    if len(head) > STORED_SUMMARY_LENGTH:
        head = head[: STORED_SUMMARY_LENGTH - 1] + "…"  # shows that the text goes on
    return head.replace("\x00", " ") if "\x00" in head else head


def one_line(text: str, limit: int) -> str:
    # Only the head of a long text can show; cleaning all of it would cost per byte.
    text = " ".join(text.lstrip()[: limit * 4].split())
    if not text.isprintable():  # rare once whitespace is collapsed: skip the slow translate
        text = " ".join(text.translate(_CONTROL_TO_SPACE).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def title_of(data: dict[str, Any]) -> str:
    """A conversation's title from its first user message."""
    return one_line(kinds.kind_of(kinds.MESSAGE).summarize(data), 300)


def _has_text(content: list[Any]) -> bool:
    return any(isinstance(item, dict) and isinstance(item.get("text"), str) and item["text"] for item in content)


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _identifier(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if type(value) is str and len(value) <= MAX_ID_LENGTH and value.isprintable():
        return value  # the usual case, checked in one go
    if not isinstance(value, str):
        raise ValueError(f'"{key}" must be a string, not {_type_name(value)}')
    if len(value) > MAX_ID_LENGTH:
        raise ValueError(f'"{key}" is longer than {MAX_ID_LENGTH} characters')
    if not value.isprintable() and _CONTROL.search(value):
        raise ValueError(f'"{key}" contains control characters')
    return value


def _string(data: dict[str, Any], key: str, limit: int | None, label: str | None = None) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f'"{label or key}" must be a string, not {_type_name(value)}')
    if limit is not None and len(value) > limit:
        raise ValueError(f'"{label or key}" is longer than {limit} characters')
    return value.replace("\x00", "") if "\x00" in value else value


def _object_or_none(data: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = data.get(key)
    if value is not None and not isinstance(value, dict):
        raise ValueError(f'"{key}" must be an object, not {_type_name(value)}')
    return value


def _list_or_none(data: dict[str, Any], key: str) -> list[Any] | None:
    value = data.get(key)
    if value is not None and not isinstance(value, list):
        raise ValueError(f'"{key}" must be an array, not {_type_name(value)}')
    return value
