"""The import's bulk writes, one module per database (``sqlite``, ``postgres``), and
the rows they write.

Building model instances and compiling an INSERT per batch cost more than parsing the
events themselves: the importer hands each batch over as plain rows, in the order of
the columns below, and the database's module writes them its fastest way. Each module
has the same four functions: ``prepare`` (before an import), ``insert`` (a batch, on
the importer's writer thread), ``reserve_ids`` and ``finish`` (after an import), and
``INDEX_TERMS``: whether parsing makes each event's index words for ``insert``."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, NamedTuple

from eventviewer.branch_queries import LIGHT_COLUMNS
from eventviewer.trajectory.events import Light


class EventRow(NamedTuple):
    """One Event row: the conversation and the digest, then the event's Light as stored."""

    conversation_id: int
    digest: str
    light: Light

    def values(self) -> tuple[Any, ...]:
        """In the order of EVENT_COLUMNS."""
        return (self.conversation_id, self.digest, *self.light)


class PayloadRow(NamedTuple):
    """One EventPayload row."""

    event_id: int
    packed: bytes


class TextRow(NamedTuple):
    """What the search index holds of one event (``search.insert``)."""

    pk: int
    conversation_pk: int
    text: str
    words: str  # its words as a PostgreSQL tsvector, "" when not made by the parser


EVENT_COLUMNS = ("conversation_id", "digest", *LIGHT_COLUMNS)
PAYLOAD_COLUMNS = PayloadRow._fields


@dataclass
class Batch:
    """The rows of a batch of events, written in one go."""

    events: list[EventRow] = field(default_factory=list)
    payloads: list[PayloadRow] = field(default_factory=list)
    texts: list[TextRow] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.events)


def for_vendor(vendor: str) -> ModuleType:
    """The module that writes to this database (Django's ``connection.vendor``)."""
    from eventviewer.imports.writers import postgres, sqlite

    return postgres if vendor == "postgresql" else sqlite
