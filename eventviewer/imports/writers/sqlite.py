"""The import's writes on SQLite: multi-row INSERTs within the parameter limit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection

from eventviewer import fulltext
from eventviewer.imports.writers import EVENT_COLUMNS, PAYLOAD_COLUMNS, Batch
from eventviewer.models import Event, EventPayload

INDEX_TERMS = False  # FTS5 splits each event's text itself: parsing makes no words


def prepare() -> None:
    """A bigger page cache (16 MiB) keeps index pages in memory instead of re-reading
    and re-writing them through the WAL for every batch."""
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA cache_size = -16384")


def insert(db: Any, batch: Batch, runs: fulltext.Runs) -> None:
    """Write the batch (on the importer's writer thread); SQLite's FTS5 gathers no runs."""
    limit = db.features.max_query_params or 999
    with db.cursor() as cursor, db.wrap_database_errors:  # as Django's own cursor would: django.db errors
        _insert_many(cursor.cursor, Event._meta.db_table, EVENT_COLUMNS, [r.values() for r in batch.events], limit)
        _insert_many(cursor.cursor, EventPayload._meta.db_table, PAYLOAD_COLUMNS, batch.payloads, limit)
        fulltext.insert(db, cursor.cursor, batch.texts)


def _insert_many(cursor: Any, table: str, columns: tuple[str, ...], rows: Sequence[Sequence[Any]], limit: int) -> None:
    """Rows in as few INSERT statements as SQLite's parameter limit allows.

    Python's sqlite3 lets go of the GIL around each statement it runs; executemany
    runs one per row, and each time this thread would wait for the parsing thread to
    hand the GIL back (up to 5 ms). One statement per few hundred rows waits once."""
    per = max(1, min(len(rows), limit // len(columns)))
    head = f"INSERT INTO {table} ({', '.join(columns)}) VALUES "
    values = f"({', '.join(['?'] * len(columns))})"
    for start in range(0, len(rows), per):
        chunk = rows[start : start + per]
        cursor.execute(head + ", ".join([values] * len(chunk)), [value for row in chunk for value in row])


def reserve_ids(count: int, floor: int) -> list[int]:
    """Primary keys for rows not yet written, so a child can point at its parent in
    the same batch. ``floor`` is the highest key this import already holds. The
    import's transaction holds the database's write lock, so no other writer can take
    these ids before this import writes them."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COALESCE(MAX(id), 0) FROM {Event._meta.db_table}")
        start = max(cursor.fetchone()[0], floor)
    return list(range(start + 1, start + count + 1))


def finish(added: int) -> None:
    """Nothing to do: SQLite plans without statistics the import would change."""
