"""Importing conversations into the database: all of them, or nothing.

Events stream from their files in append order and go to the database in batches,
each row with its parent and depth already resolved (parents precede children in
an SDK log), so a 100,000-event conversation never sits in memory. The pure tree
rules then check the whole conversation; any problem rolls everything back.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import orjson
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.utils import timezone

from eventviewer.imports.sources import ConversationSource, Parsed, SourceError, find_conversations
from eventviewer.models import Conversation, Event, EventPayload, HeadBranch, unpack
from eventviewer.trajectory import kinds
from eventviewer.trajectory.events import Light
from eventviewer.trajectory.pairing import Pairable, pair, referenced_actions
from eventviewer.trajectory.skeleton import Node
from eventviewer.trajectory.tree import Entry, Problem, TreeError, build_tree

BATCH_SIZE = 250  # events per INSERT batch: small enough that parsing and writing overlap
SWITCH_INTERVAL = 0.0005  # seconds; see _tuned_for_import
MAX_PROBLEMS = 50

# The row layout of the import's INSERT: building model instances and compiling an
# INSERT per batch cost more than parsing the events themselves. A row is a few
# resolved values followed by the event's Light tuple as it is.
COLUMNS = ("id", "conversation_id", "seq", "parent_id", "depth", "digest", *Light._fields)


class ImportFailed(Exception):
    """Nothing was imported; ``problems`` holds one line per problem."""

    def __init__(self, problems: list[str]):
        # One line each, even when a file name or an id holds line breaks.
        self.problems = problems = [" ".join(p.splitlines()) for p in problems]
        shown = problems[:MAX_PROBLEMS]
        if len(problems) > MAX_PROBLEMS:
            shown.append(f"... and {len(problems) - MAX_PROBLEMS} more problems")
        super().__init__("\n".join(shown))


@dataclass
class Imported:
    conversation: Conversation
    created: bool
    added: int


def import_paths(paths: Iterable[tuple[Path, str]]) -> list[Imported]:
    """Import every conversation found in ``paths`` ((path, label) pairs) in one
    transaction, or raise ImportFailed and write nothing."""
    problems: list[str] = []
    sources: list[ConversationSource] = []
    for path, label in paths:
        try:
            sources.extend(find_conversations(path, label))
        except SourceError as e:
            problems.append(str(e))
    if problems:
        raise ImportFailed(problems)
    with _tuned_for_import():
        return _import_all(sources, problems)


_tuning = threading.Lock()
_running = 0  # imports under way in this process
_saved: tuple[bool, float] = (True, 0.005)  # what the first of them found


@contextmanager
def _tuned_for_import() -> Iterator[None]:
    """Two process-wide settings for as long as any import runs (a threaded server may
    run several at once: the first changes them, the last puts them back).

    The cyclic garbage collector is off: an import holds a few objects per event for
    its whole run, which the collector would walk again and again, and they hold no
    cycles. The switch interval is short: the writer thread lets go of the GIL for
    every statement it runs and asks for it back afterwards; at the default 5 ms it
    would wait that long each time while the parsing thread holds it."""
    global _running, _saved
    with _tuning:
        if _running == 0:
            _saved = (gc.isenabled(), sys.getswitchinterval())
            gc.disable()
            sys.setswitchinterval(min(_saved[1], SWITCH_INTERVAL))
        _running += 1
    try:
        yield
    finally:
        with _tuning:
            _running -= 1
            if _running == 0:
                collecting, interval = _saved
                sys.setswitchinterval(interval)
                if collecting:
                    gc.enable()


def _import_all(sources: list[ConversationSource], problems: list[str]) -> list[Imported]:
    results = []
    if connection.vendor == "sqlite":
        # A bigger page cache (16 MiB) keeps index pages in memory instead of
        # re-reading and re-writing them through the WAL for every batch.
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA cache_size = -16384")
    with transaction.atomic():
        for source in sources:
            try:
                with transaction.atomic():
                    results.append(_import(source))
            except ImportFailed as e:
                problems.extend(e.problems)
        if problems:
            raise ImportFailed(problems)
    return results


class _Known(NamedTuple):
    pk: int
    seq: int
    depth: int | None
    digest: str


def _import(source: ConversationSource) -> Imported:
    if source.problems:
        raise ImportFailed(source.problems)
    conversation, created = Conversation.objects.get_or_create(conversation_id=source.conversation_id)
    if not created and connection.features.has_select_for_update:
        # Concurrent re-imports of one conversation queue here and each event lands once.
        # (A new row is this transaction's until it commits; SQLite has one writer at a time.)
        conversation = Conversation.objects.select_for_update().get(pk=conversation.pk)
    writer = _Writer(conversation, new=created)
    writer.consume(source.parsed())
    if writer.problems:
        raise ImportFailed(writer.problems)
    try:
        tree = build_tree(writer.entries)
        head = tree.head(*_head_hints(source.base_state))
    except TreeError as e:
        raise ImportFailed([_locate(p, source) for p in e.problems]) from None
    writer.fix_forward_references(tree)

    state = source.base_state or {}
    if created or writer.added or _leaf_hint(state) != _leaf_hint(_stored_state(conversation)):
        # The conversation moved on: follow its HEAD. Otherwise a HEAD picked in
        # eventviewer ("Make this the default branch") stays.
        conversation.head_id = writer.pk_of[head] if head is not None else None
    conversation.execution_status = _status(state, writer.last_status, conversation.execution_status)
    conversation.title = conversation.title or writer.title
    added = writer.added
    nodes = [
        Node(e.id, tree.parent[e.id], e.seq, tree.depth[e.id], e.kind, writer.outcome_of[e.id], "", "")
        for e in writer.entries
        if e.id in tree.parent
    ]
    head_branch = None
    if not writer.known and head is not None and conversation.head_id == writer.pk_of[head]:
        head_branch = writer.head_branch(tree, head)  # no need to read back what was just written
    event_count = len(writer.entries)
    del writer, tree  # the nodes (and the HEAD branch) are all the figures need
    agent = state.get("agent") if isinstance(state.get("agent"), dict) else {}
    llm = agent.get("llm") if isinstance(agent.get("llm"), dict) else {}
    conversation.agent_kind = _clean(agent.get("kind") or conversation.agent_kind, 100)
    conversation.model = _clean(llm.get("model") or conversation.model, 200)
    conversation.base_state = source.base_state_raw or conversation.base_state
    conversation.source = source.where[:1000]
    if not created and added:
        conversation.imported_at = timezone.now()
    conversation.refresh_figures(nodes, head_branch, event_count)
    return Imported(conversation, created, added)


class _Writer:
    """Streams new events into the database, checking them as they come."""

    def __init__(self, conversation: Conversation, new: bool = False):
        self.conversation = conversation
        self.problems: list[str] = []
        self.entries: list[Entry] = []
        self.known: dict[str, _Known] = {}
        self.pk_of: dict[str, int] = {}
        self.depth_of: dict[str, int | None] = {}
        self.written: dict[str, tuple[int | None, int | None]] = {}  # new event -> (parent pk, depth)
        self.id_at: dict[int, str] = {}
        self.previous: str | None = None  # the last tree event appended so far
        self.rows: list[tuple] = []
        self.payloads: list[tuple[int, bytes]] = []
        self.ids: Iterator[int] = iter(())
        self.reserved = 0  # the highest primary key handed out so far
        self.outcome_of: dict[str, str] = {}  # how a branch ending at each event ends
        self.pairable: dict[str, Pairable] = {}  # new events, for the HEAD branch's figures
        self.added = 0
        self.title = ""
        self.last_status = ""
        self.db = connections[DEFAULT_DB_ALIAS]
        self.inserter: ThreadPoolExecutor | None = None
        self.in_flight: Future | None = None
        if not new:
            self._load_known()

    def _load_known(self) -> None:
        """What the conversation already holds: a re-import adds only what is new."""
        rows = self.conversation.events.order_by("seq").values_list(
            "pk",
            "event_id",
            "seq",
            "depth",
            "digest",
            "kind",
            "parent_ref",
            "payload_kind",
            "is_error",
            "executable",
            "source",
        )
        for pk, event_id, seq, depth, digest, kind, parent_ref, payload_kind, is_error, executable, source in rows:
            self.outcome_of[event_id] = kinds.outcome(kind, payload_kind, is_error, executable, source)
            self.known[event_id] = _Known(pk, seq, depth, digest)
            self.pk_of[event_id] = pk
            self.depth_of[event_id] = depth
            self.id_at[seq] = event_id
            self.entries.append(Entry(seq, event_id, kind, parent_ref, "(imported before)"))
            if depth is not None:
                self.previous = event_id

    def consume(self, events: Iterable[Parsed]) -> None:
        try:
            for event in events:
                self._take(event)
            self._flush()
        finally:
            self.close()

    def _take(self, event: Parsed) -> None:
        light = event.light
        if light is None:
            self.problems.append(f"{event.where}: {event.error}")
            return
        known = self.known.get(light.event_id)
        if known is not None:
            if known.digest != event.digest and not self._same_content(known, event.packed):
                self.problems.append(
                    f"{event.where}: event {light.event_id}: its content differs from the copy imported before "
                    "(events never change once written)"
                )
            return
        if light.event_id in self.pk_of:
            self.problems.append(f"{event.where}: event {light.event_id}: duplicate event id")
            return
        if event.seq in self.id_at:
            self.problems.append(
                f"{event.where}: event {light.event_id}: "
                f"position {event.seq} already holds event {self.id_at[event.seq]}"
            )
            return
        self.id_at[event.seq] = light.event_id
        self.entries.append(Entry(event.seq, light.event_id, light.kind, light.parent_ref, event.where))
        self.pk_of[light.event_id] = self._next_id()
        self.outcome_of[light.event_id] = kinds.outcome(
            light.kind, light.payload_kind, light.is_error, light.executable, light.source
        )
        self.title = self.title or event.title
        self.last_status = event.status or self.last_status
        if self.problems:
            return  # keep checking, stop writing
        self._add(light, event)

    def _same_content(self, known: _Known, packed: bytes) -> bool:
        """Bytes differ (another export of the conversation): compare what they say."""
        self.settle()
        stored = EventPayload.objects.values_list("packed", flat=True).get(pk=known.pk)
        return orjson.loads(unpack(stored)) == orjson.loads(unpack(packed))

    def _add(self, light: Light, event: Parsed) -> None:
        parent_pk = depth = None
        if light.kind != kinds.STATE_UPDATE:
            if light.parent_ref == kinds.ROOT_PARENT_ID:
                parent = None
            elif light.parent_ref is not None:
                parent = light.parent_ref
            else:
                parent = self.previous
            if parent is None:
                depth = 0
            elif self.depth_of.get(parent) is not None:
                parent_pk, depth = self.pk_of[parent], self.depth_of[parent] + 1
            # else: a parent appended later (not SDK-made); fixed once the tree is known
            self.previous = light.event_id
        self.depth_of[light.event_id] = depth
        self.written[light.event_id] = (parent_pk, depth)
        if not self.known:  # a first import: the HEAD branch will be all new events
            self.pairable[light.event_id] = Pairable(
                light.event_id, light.kind, light.tool_name, light.tool_call_id, light.action_id, light.executable
            )
        pk = self.pk_of[light.event_id]
        self.rows.append((pk, self.conversation.pk, event.seq, parent_pk, depth, event.digest, *light))
        self.payloads.append((pk, event.packed))
        self.added += 1
        if len(self.rows) >= BATCH_SIZE:
            self._flush()

    def _flush(self) -> None:
        """Hand the batch to the writer thread: the database works (without the GIL)
        while this thread checks the next batch. One batch in flight at a time keeps
        the order, and this thread never uses the connection meanwhile."""
        if self.rows and not self.problems:
            self.settle()
            if self.inserter is None:
                self.inserter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="eventviewer-import")
                self.db.inc_thread_sharing()
            self.in_flight = self.inserter.submit(_insert, self.db, self.rows, self.payloads)
        self.rows = []
        self.payloads = []

    def settle(self) -> None:
        """Wait until the writer thread is done with the connection (and raise what it raised)."""
        in_flight, self.in_flight = self.in_flight, None
        if in_flight is not None:
            in_flight.result()

    def close(self) -> None:
        try:
            self.settle()
        finally:
            if self.inserter is not None:
                self.inserter.shutdown()
                self.db.dec_thread_sharing()
                self.inserter = None

    def _next_id(self) -> int:
        for pk in self.ids:
            return pk
        self.settle()  # reserving ids uses the connection
        ids = _reserve_ids(BATCH_SIZE * 10, self.reserved)
        self.reserved = ids[-1]
        self.ids = iter(ids)
        return next(self.ids)

    def head_branch(self, tree: Any, head: str) -> HeadBranch:
        """The branch ending at ``head`` measured and paired from what this import
        holds: all of its events must be new."""
        path = []
        node: str | None = head
        while node is not None:
            path.append(self.pairable[node])
            node = tree.parent[node]
        path.reverse()
        actions = self.pairable
        elsewhere = {a for a in referenced_actions(path) if a in actions and actions[a].kind == kinds.ACTION}
        return HeadBranch(head, len(path), pair(path, elsewhere))

    def fix_forward_references(self, tree: Any) -> None:
        """Correct the rows whose parent came later in the log than they did."""
        for event_id, (parent_pk, depth) in self.written.items():
            if event_id not in tree.parent:
                continue
            parent = tree.parent[event_id]
            want = (self.pk_of[parent] if parent is not None else None, tree.depth[event_id])
            if want != (parent_pk, depth):
                Event.objects.filter(pk=self.pk_of[event_id]).update(parent_id=want[0], depth=want[1])


def _insert(db: Any, rows: list[tuple], payloads: list[tuple[int, bytes]]) -> None:
    with db.cursor() as cursor:
        if db.vendor == "postgresql":
            # COPY streams the batch in one statement; an INSERT per row would make
            # the import wait on the server thousands of times.
            for table, columns, batch in ((Event, COLUMNS, rows), (EventPayload, ("event_id", "packed"), payloads)):
                names = ", ".join(db.ops.quote_name(c) for c in columns)
                with cursor.cursor.copy(f"COPY {table._meta.db_table} ({names}) FROM STDIN") as copy:
                    for row in batch:
                        copy.write_row(row)
        else:
            limit = db.features.max_query_params or 999
            with db.wrap_database_errors:  # as Django's own cursor would: django.db errors
                _insert_many(cursor.cursor, Event._meta.db_table, COLUMNS, rows, limit)
                _insert_many(cursor.cursor, EventPayload._meta.db_table, ("event_id", "packed"), payloads, limit)


def _insert_many(cursor: Any, table: str, columns: tuple[str, ...], rows: list[tuple], limit: int) -> None:
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


def _reserve_ids(count: int, floor: int) -> list[int]:
    """Primary keys for rows not yet written, so a child can point at its parent in
    the same batch. ``floor`` is the highest key this import already holds."""
    table = Event._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)", [table, count]
            )
            return [row[0] for row in cursor.fetchall()]
        # SQLite: the import's transaction holds the database's write lock, so no
        # other writer can take these ids before this import writes them.
        cursor.execute(f"SELECT COALESCE(MAX(id), 0) FROM {table}")
        start = max(cursor.fetchone()[0], floor)
        return list(range(start + 1, start + count + 1))


def _check_columns() -> None:
    fields = {f.column for f in Event._meta.concrete_fields}
    assert fields == set(COLUMNS), f"importer COLUMNS out of date: {fields ^ set(COLUMNS)}"


_check_columns()


def _leaf_hint(state: dict[str, Any]) -> Any:
    return state.get("leaf_event_id"), state.get("head_is_empty")


def _stored_state(conversation: Conversation) -> dict[str, Any]:
    try:
        state = orjson.loads(conversation.base_state) if conversation.base_state else {}
    except orjson.JSONDecodeError:
        return {}
    return state if isinstance(state, dict) else {}


def _head_hints(state: dict[str, Any] | None) -> tuple[str | None, bool]:
    if not state:
        return None, False
    return state.get("leaf_event_id"), bool(state.get("head_is_empty", False))


def _status(state: dict[str, Any], from_events: str, before: str) -> str:
    status = state.get("execution_status")
    if isinstance(status, str) and status:
        return _clean(status, 40)
    return from_events or before


def _clean(value: Any, limit: int) -> str:
    """A short text from base_state.json for a column: PostgreSQL refuses NUL characters."""
    return str(value).replace("\x00", "")[:limit]


def _locate(problem: Problem, source: ConversationSource) -> str:
    text = str(problem)
    if problem.where == "base_state.json":
        return f"{source.where}/{text}"
    return text if problem.where else f"{source.where}: {text}"
