"""The full-text index of events: SQLite FTS5 on the embedded default, PostgreSQL
tsvector + GIN for teams, chosen by the connection's vendor.

One table, ``eventviewer_eventtext``, holds each event's searchable text
(``trajectory.query.event_text``), written by the importer in the same transaction as
the events and deleted with them. SQLite's FTS5 splits the text into words; for
PostgreSQL the import's parser workers do (``trajectory.query.tsvector``), and the
import COPYs the words in with the text. Raw SQL throughout: an FTS5 virtual table is no
model, nor is a tsvector column.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.core.exceptions import BadRequest
from django.db import OperationalError, connection, transaction
from django.db.models import BooleanField
from django.db.models.expressions import RawSQL

from eventviewer.trajectory.query import FTS5_TOKENIZER, Query, QueryError, fts5_body, parse_query, tsvector

TABLE = "eventviewer_eventtext"
WORDS = "eventviewer_conversationwords"  # PostgreSQL only
MAX_HITS = 2000  # matches read per search, best first; more are counted as "2,000+"

_OWNERS = (("eventtext", "eventviewer_event"), ("conversationwords", "eventviewer_conversation"))


def _deleted_with(table: str, key: str, owner: str, name: str) -> list[str]:
    """PostgreSQL triggers deleting ``table``'s rows whose ``key`` names a deleted (or
    truncated) row of ``owner``."""
    return [
        f"""CREATE FUNCTION {name}_delete() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        DELETE FROM {table} WHERE {key} IN (SELECT id FROM gone);
        RETURN NULL;
    END $$""",
        f"""CREATE TRIGGER {name}_delete AFTER DELETE ON {owner}
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION {name}_delete()""",
        f"""CREATE FUNCTION {name}_truncate() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        TRUNCATE {table};
        RETURN NULL;
    END $$""",
        f"""CREATE TRIGGER {name}_truncate AFTER TRUNCATE ON {owner}
        FOR EACH STATEMENT EXECUTE FUNCTION {name}_truncate()""",
    ]


# An event's row goes with the event however it is deleted (in batches, by the ORM's
# cascade, in the admin, by a test database's flush): triggers on the event table.
SQLITE_SCHEMA = [
    # rowid: the event's pk; conversation: "c<its pk>", so that a search in one conversation
    # is an intersection in the index, not a join. body: ``fts5_body``, the text with its
    # symbols written as words.
    f"CREATE VIRTUAL TABLE {TABLE} USING fts5(body, conversation, tokenize = '{FTS5_TOKENIZER}')",
    f"""CREATE TRIGGER eventtext_delete AFTER DELETE ON eventviewer_event BEGIN
        DELETE FROM {TABLE} WHERE rowid = old.id;
    END""",
]
POSTGRESQL_SCHEMA = [
    f"""CREATE TABLE {TABLE} (
        event_id bigint PRIMARY KEY,
        conversation_id bigint NOT NULL,
        body text NOT NULL,
        -- The body's words with their positions, split as queries split them (made by the
        -- import: trajectory.query.tsvector), and a lexeme no word can be, "_c<conversation
        -- pk>": a search in one conversation is then an intersection in the index (GIN
        -- skips through the longer list), not a filter.
        tsv tsvector NOT NULL
    )""",
    # Searches: tsv @@ query, within a conversation or across all of them.
    f"CREATE INDEX eventtext_tsv_idx ON {TABLE} USING gin (tsv)",
    # No foreign key: a TRUNCATE of the events (Django's flush) would refuse to run.
    *_deleted_with(TABLE, "event_id", "eventviewer_event", "eventtext"),
    # The list's search asks which conversations hold a match: answered from the events'
    # rows, a common word would read hundreds of thousands of them. Each row here holds
    # the words (no positions) of a run of one conversation's events (up to CHUNK_CHARS
    # of their text): a few thousand small rows for a million events.
    f"""CREATE TABLE {WORDS} (
        id bigserial PRIMARY KEY,
        conversation_id bigint NOT NULL,
        tsv tsvector NOT NULL
    )""",
    f"CREATE INDEX conversationwords_tsv_idx ON {WORDS} USING gin (tsv)",
    f"CREATE INDEX conversationwords_conversation_idx ON {WORDS} (conversation_id)",
    *_deleted_with(WORDS, "conversation_id", "eventviewer_conversation", "conversationwords"),
]
CHUNK_CHARS = 200_000  # a tsvector must stay under 1 MB while it is built
RUN_WORDS = f"INSERT INTO {WORDS} (conversation_id, tsv) VALUES (%s, %s::tsvector)"
_LEXEME = re.compile(r"'([^']*)'")  # a word of a tsvector literal (``tsvector``: nothing quoted inside)
UNDO = {
    "sqlite": ["DROP TRIGGER eventtext_delete", f"DROP TABLE {TABLE}"],
    "postgresql": [
        *(f"DROP TRIGGER {name}_{what} ON {owner}" for name, owner in _OWNERS for what in ("delete", "truncate")),
        *(f"DROP FUNCTION {name}_{what}" for name, _ in _OWNERS for what in ("delete", "truncate")),
        f"DROP TABLE {TABLE}",
        f"DROP TABLE {WORDS}",
    ],
}


def parsed(text: str) -> Query:
    """The query, or a 400 saying what is wrong with it."""
    try:
        return parse_query(text)
    except QueryError as e:
        raise BadRequest(f"Bad query: q: {e}") from None


class OutOfTime(BadRequest):
    """A search that ran past its time budget (EVENTVIEWER_SEARCH_MS)."""


def _too_long(limit_ms: int) -> OutOfTime:
    return OutOfTime(
        f"Bad query: q: the search took longer than its limit of {limit_ms:,} ms (EVENTVIEWER_SEARCH_MS): "
        "look for longer prefixes or fewer of them, or add a rarer word"
    )


@contextmanager
def budget(limit_ms: int | None = None) -> Iterator[None]:
    """Run the searches inside within a time budget, or end them with a 400 saying so.
    A prefix of a common start expands over the index's whole vocabulary, once per term
    and (on SQLite, the list) once per conversation: no query shape bounds that alone.
    SQLite: a progress handler interrupts the statement; PostgreSQL: statement_timeout."""
    limit = settings.EVENTVIEWER_SEARCH_MS if limit_ms is None else limit_ms
    deadline = time.monotonic() + limit / 1000
    connection.ensure_connection()
    postgresql = connection.vendor == "postgresql"
    try:
        # A savepoint: on PostgreSQL a cancelled statement aborts the transaction around it.
        with transaction.atomic():
            if postgresql:
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL statement_timeout = %s", [max(1, limit)])
            else:
                connection.connection.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
            yield
            if postgresql:
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL statement_timeout = DEFAULT")
    except OperationalError as e:
        if "interrupted" not in str(e) and "statement timeout" not in str(e):
            raise
        raise _too_long(limit) from None
    finally:
        if not postgresql and connection.connection is not None:
            connection.connection.set_progress_handler(None, 0)
    if time.monotonic() > deadline:  # several statements, each within it
        raise _too_long(limit)


def schema(vendor: str) -> list[str]:
    return POSTGRESQL_SCHEMA if vendor == "postgresql" else SQLITE_SCHEMA


class Runs:
    """The runs of consecutive events whose words PostgreSQL keeps together for the list's
    search (``WORDS``): one conversation's, up to CHUNK_CHARS of text each, their words
    gathered here from the events' (the database would read every event's row back to
    unnest them). An import passes one for all its batches, so that a run spans them."""

    def __init__(self) -> None:
        self.conversation: int | None = None
        self.words: set[str] = set()
        self.size = 0
        self.full: list[tuple[int | None, str]] = []  # runs to store: (conversation pk, tsvector)

    def add(self, conversation: int, text: str, terms: str) -> None:
        """Take one event's text and its ``tsvector``."""
        if self.size and (conversation != self.conversation or self.size + len(text) > CHUNK_CHARS):
            self.end()
        self.conversation = conversation
        self.words.update(_LEXEME.findall(terms))
        self.size += len(text) + 1

    def end(self) -> None:
        """End the run so far (a run without words has no row)."""
        if self.words:
            self.full.append((self.conversation, " ".join([f"'{word}'" for word in self.words])))
        self.words, self.size = set(), 0

    def store(self, cursor: Any) -> None:
        """Store the runs that ended (not during a COPY: the connection is busy with it)."""
        for run in self.full:
            cursor.execute(RUN_WORDS, run)
        self.full = []


def insert(db: Any, cursor: Any, rows: Sequence[tuple[int, int, str, str]], runs: Runs | None = None) -> None:
    """Index (event pk, conversation pk, text, words) rows, on the import's raw cursor.
    ``words``: the text's as PostgreSQL's index holds them (``tsvector``), made by the
    parser worker; "" to make them here (and on SQLite, whose FTS5 splits the text).
    ``runs``: where an import that inserts in batches gathers its runs (it stores the
    last one); without it, the runs of these rows are stored now."""
    if not rows:
        return
    if db.vendor == "postgresql":
        whole = runs is None
        runs = Runs() if runs is None else runs
        with cursor.copy(f"COPY {TABLE} (event_id, conversation_id, body, tsv) FROM STDIN") as copy:
            for pk, conversation, body, terms in rows:
                terms = terms or tsvector(body)
                copy.write_row((pk, conversation, body, f"{terms} '_c{conversation}'"))
                runs.add(conversation, body, terms)
        if whole:
            runs.end()
        runs.store(cursor)
        return
    per = max(1, (db.features.max_query_params or 999) // 3)
    for start in range(0, len(rows), per):
        chunk = rows[start : start + per]
        cursor.execute(
            f"INSERT INTO {TABLE} (rowid, body, conversation) VALUES " + ", ".join(["(?, ?, ?)"] * len(chunk)),
            [value for pk, conversation, body, _ in chunk for value in (pk, fts5_body(body), f"c{conversation}")],
        )


def hits(
    conversation_pk: int,
    query: Query,
    kind: str = "",
    tool: str = "",
    failures_only: bool = False,
    limit: int = MAX_HITS + 1,
) -> list[int]:
    """The pks of the conversation's events that match, best first (at most ``limit``)."""
    where: list[str] = []
    params: list[str | int] = []
    if kind:
        where.append("e.kind = %s")
        params.append(kind)
    if tool:
        where.append("e.tool_name = %s")
        params.append(tool)
    if failures_only:
        where.append("(e.failure <> '' OR e.is_error)")
    if connection.vendor == "postgresql":
        if where:
            sql = f"""
                SELECT e.id FROM {TABLE} t JOIN eventviewer_event e ON e.id = t.event_id
                WHERE t.tsv @@ %s::tsquery AND t.conversation_id = %s {"".join(" AND " + w for w in where)}
                ORDER BY ts_rank_cd(t.tsv, %s::tsquery) DESC, e.seq LIMIT {int(limit)}
            """
        else:
            # Without a filter the events' rows are not needed: a common word's 40,000
            # matches would each be looked up only to order ties by position, which
            # their pks already follow (the import numbers events in append order).
            sql = f"""
                SELECT t.event_id FROM {TABLE} t
                WHERE t.tsv @@ %s::tsquery AND t.conversation_id = %s
                ORDER BY ts_rank_cd(t.tsv, %s::tsquery) DESC, t.event_id LIMIT {int(limit)}
            """
        words = query.tsquery()
        params = [f"({words}) & _c{conversation_pk}", conversation_pk, *params, words]
    else:
        # FTS5 names its table in MATCH and bm25() (no alias); bm25 weighs the body alone.
        match = f'conversation : "c{conversation_pk}" AND body : ({query.fts5()})'
        best = f"bm25({TABLE}, 1.0, 0.0)"
        if where:
            sql = f"""
                SELECT e.id FROM {TABLE} JOIN eventviewer_event e ON e.id = {TABLE}.rowid
                WHERE {TABLE} MATCH %s AND {" AND ".join(where)}
                ORDER BY {best}, e.seq LIMIT {int(limit)}
            """
        else:
            sql = f"SELECT rowid FROM {TABLE} WHERE {TABLE} MATCH %s ORDER BY {best} LIMIT {int(limit)}"
        params = [match, *params]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


def conversation_matches(query: Query) -> RawSQL:
    """Whether a conversation (the outer query's row) has an event that matches, for the
    list: on PostgreSQL from the runs of its words, which hold no positions (a phrase
    matches a conversation whose run of events holds its words); on SQLite asked of each
    conversation in the list's order."""
    table = "eventviewer_conversation"
    if connection.vendor == "postgresql":
        sql = f"{table}.id IN (SELECT conversation_id FROM {WORDS} WHERE tsv @@ to_tsquery('simple', %s))"
        return RawSQL(sql, [query.tsquery(phrases=False)], output_field=BooleanField())
    sql = f"""EXISTS (SELECT 1 FROM {TABLE} WHERE {TABLE} MATCH
        'conversation : "c' || {table}.id || '" AND body : (' || %s || ')')"""
    return RawSQL(sql, [query.fts5()], output_field=BooleanField())
