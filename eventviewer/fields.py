"""Model fields of our own."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from cachetools import LRUCache
from django.db import models

# The texts decoded last and what they decoded to, shared by a process's threads.
SKELETONS_KEPT = 16
_lock = threading.Lock()
_decoded: LRUCache[str, Any] = LRUCache(maxsize=SKELETONS_KEPT)


class KeptJSONField(models.JSONField):
    """A JSONField whose big values are decoded once per process: a conversation's
    skeleton (trajectory.skeleton) is read by every page of it, and decoding one of a
    100,000-event conversation costs about 20 ms. Kept by the stored text itself (no hash
    can collide), so a changed value is decoded afresh; what it returns is shared by the
    requests that read the same text, so it must never be changed in place (assign a new
    value instead, as ``Conversation.refresh_figures`` does)."""

    MIN_KEPT = 4096  # characters: smaller values decode faster than they are looked up

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        if not isinstance(value, str) or len(value) < self.MIN_KEPT:
            return super().from_db_value(value, expression, connection)
        with _lock:
            found = _decoded.get(value, _MISSING)
        if found is _MISSING:
            found = super().from_db_value(value, expression, connection)
            with _lock:
                _decoded[value] = found
        return found

    def deconstruct(self) -> tuple[str, str, Sequence[Any], dict[str, Any]]:
        # Stored as a JSONField: no migration, and the column is the same.
        name, _path, args, kwargs = super().deconstruct()
        return name, "django.db.models.JSONField", args, kwargs


_MISSING = object()
