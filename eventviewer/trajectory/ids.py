"""Conversation ids: the SDK names each conversation by a UUID, written as 32 hex digits
in folder names and with dashes in its API."""

from __future__ import annotations

import re

HEX_ID = re.compile(r"^[0-9a-f]{32}$")


def normalize_conversation_id(value: str) -> str | None:
    """The 32-hex form of a conversation id given as hex or dashed UUID, else None."""
    candidate = value.strip().lower().replace("-", "")
    return candidate if HEX_ID.match(candidate) else None
