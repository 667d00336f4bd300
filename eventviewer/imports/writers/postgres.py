"""The import's writes on PostgreSQL: a binary COPY per table and batch."""

from __future__ import annotations

from typing import Any

from django.db import connection

from eventviewer import fulltext
from eventviewer.imports.writers import EVENT_COLUMNS, PAYLOAD_COLUMNS, Batch
from eventviewer.models import Event, EventPayload

INDEX_TERMS = True  # the index takes each event's words ready-made (a tsvector), made while parsing
ANALYZE_FROM = 1000  # events added by an import from which PostgreSQL's statistics are refreshed

_TYPES: dict[str, dict[str, int]] = {}  # table -> column -> PostgreSQL type, once per process


def prepare() -> None:
    """Nothing to set up."""


def insert(db: Any, batch: Batch, runs: fulltext.Runs) -> None:
    """Write the batch (on the importer's writer thread), gathering its search runs.

    COPY streams the batch in one statement; an INSERT per row would make the import
    wait on the server thousands of times. In binary, values go as the server stores
    them: nothing to write out as text and parse again (a payload's bytes would go as
    twice as many hex digits)."""
    with db.cursor() as cursor:
        tables = (
            (Event, EVENT_COLUMNS, [r.values() for r in batch.events]),
            (EventPayload, PAYLOAD_COLUMNS, batch.payloads),
        )
        for table, columns, rows in tables:
            name = table._meta.db_table
            names = ", ".join(db.ops.quote_name(c) for c in columns)
            types = _column_types(db, cursor, name, columns)
            with cursor.cursor.copy(f"COPY {name} ({names}) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types(types)
                for row in rows:
                    copy.write_row(row)
        fulltext.insert(db, cursor.cursor, batch.texts, runs)


def _column_types(db: Any, cursor: Any, table: str, columns: tuple[str, ...]) -> list[int]:
    """The PostgreSQL types of a table's columns, as a binary COPY needs them."""
    types = _TYPES.get(table)
    if types is None or not all(column in types for column in columns):  # not read yet, or migrated since
        description = db.introspection.get_table_description(cursor, table)
        types = _TYPES[table] = {column.name: column.type_code for column in description}
    return [types[column] for column in columns]


def reserve_ids(count: int, floor: int) -> list[int]:
    """Primary keys for rows not yet written, so a child can point at its parent in
    the same batch (the sequence never hands them out again; ``floor`` is not needed)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [Event._meta.db_table, count],
        )
        return [row[0] for row in cursor.fetchall()]


def finish(added: int) -> None:
    """After an import that grew the event table by a tenth or more (what autovacuum
    waits for, a minute or more): until then PostgreSQL would plan a page's lookups by
    parent as if each parent had hundreds of children (parallel scans and JIT: 100 ms
    instead of 1 ms). A small import into a big table changes no statistic that matters,
    and analyzing a big table costs up to a second."""
    table = Event._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples FROM pg_class WHERE oid = %s::regclass", [table])
        rows = max(0.0, cursor.fetchone()[0])  # -1: never analyzed
        if added >= ANALYZE_FROM and added >= rows / 10:
            cursor.execute(f"ANALYZE {table}")
