"""Importing conversations into the database: all of them, or nothing.

Events stream from their files in append order and go to the database in batches,
each row with its parent and depth already resolved (parents precede children in
an SDK log), so a 100,000-event conversation never sits in memory. The pure tree
rules then check the whole conversation; any problem rolls everything back.
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import orjson
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.models import Count, Q
from django.utils import timezone

from eventviewer import fulltext
from eventviewer.branch_queries import LIGHT_COLUMNS, light_row
from eventviewer.imports import reviews, writers
from eventviewer.imports.formats import RunRow
from eventviewer.imports.packing import pack, unpack
from eventviewer.imports.progress import Progress
from eventviewer.imports.sources import ConversationSource, Limits, Parsed, SourceError, find_conversations
from eventviewer.imports.writers import EventRow, PayloadRow, TextRow
from eventviewer.models import (
    Conversation,
    ConversationState,
    Event,
    EventPayload,
    HeadBranch,
    Instance,
    Run,
    TurnUsage,
)
from eventviewer.trajectory import kinds, usage
from eventviewer.trajectory.events import Light
from eventviewer.trajectory.pairing import pair, referenced_actions
from eventviewer.trajectory.skeleton import Node
from eventviewer.trajectory.subagents import match, task_call
from eventviewer.trajectory.tree import Entry, Problem, Tree, TreeBuilder, TreeError, anchor_from_parent

BATCH_SIZE = 250  # events per INSERT batch: small enough that parsing and writing overlap
SWITCH_INTERVAL = 0.0005  # seconds; see tuned_for_bulk_import
MAX_PROBLEMS = 50


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

    @property
    def unchanged(self) -> int:
        """Events that were already stored."""
        return self.conversation.event_count - self.added

    def describe(self) -> str:
        """What the import did to this conversation, in a few words."""
        if not self.added:
            return "nothing new"
        return f"{self.added:,} new event{'s' if self.added != 1 else ''}, {self.unchanged:,} unchanged"


def import_paths(
    paths: Iterable[tuple[Path, str]], progress: Progress | None = None, run: str | None = None
) -> list[Imported]:
    """Import every conversation found in ``paths`` ((path, label) pairs) in one
    transaction, or raise ImportFailed and write nothing. ``progress`` counts as it goes;
    ``run`` names the run of an evaluation output's rows."""
    problems: list[str] = []
    sources: list[ConversationSource] = []
    for path, label in paths:
        try:
            sources.extend(find_conversations(path, label, run, limits=Limits.of(settings)))
        except SourceError as e:
            problems.append(str(e))
    if problems:
        raise ImportFailed(problems)
    progress = progress if progress is not None else Progress()
    progress.conversations_total = len(sources)
    expected = [source.expected for source in sources]
    progress.events_total = None if None in expected else sum(e or 0 for e in expected)
    return _import_all(sources, problems, progress)


def import_sources(sources: list[ConversationSource]) -> list[Imported]:
    """Import conversations read from elsewhere (an agent-server, a folder being
    written) in one transaction, or raise ImportFailed and write nothing."""
    return _import_all(sources, [], Progress())


@contextmanager
def tuned_for_bulk_import() -> Iterator[None]:
    """Two process-wide settings for a command-line import, which has its process to
    itself (a web server's worker never changes them: its other threads would feel it).

    The cyclic garbage collector is off: an import holds a few objects per event for
    its whole run, which the collector would walk again and again, and they hold no
    cycles. The switch interval is short: the writer thread lets go of the GIL for
    every statement it runs and asks for it back afterwards; at the default 5 ms it
    would wait that long each time while the parsing thread holds it."""
    collecting, interval = gc.isenabled(), sys.getswitchinterval()
    gc.disable()
    sys.setswitchinterval(min(interval, SWITCH_INTERVAL))
    try:
        yield
    finally:
        sys.setswitchinterval(interval)
        if collecting:
            gc.enable()


def _import_all(sources: list[ConversationSource], problems: list[str], progress: Progress) -> list[Imported]:
    # What finding the sources already refused (a repeated instance, a row that is not JSON)
    # refuses the import before any row is read again or written.
    problems.extend(p for source in sources for p in source.problems)
    if problems:
        raise ImportFailed(problems)
    results = []
    writes = writers.for_vendor(connection.vendor)
    writes.prepare()
    runs_seen: dict[str, Run] = {}
    with transaction.atomic():
        problems.extend(_moved_subagents(sources))
        if problems:
            raise ImportFailed(problems)
        imported: dict[str, Imported] = {}
        for source in sources:
            try:
                progress.source(source.where)
                with transaction.atomic():
                    imported[source.where] = result = _import(source, progress, writes)
                    _import_reviews(result.conversation, source)
                    if source.row is not None:
                        _record_instance(result.conversation, source.row, runs_seen)
                results.append(result)
            except ImportFailed as e:
                problems.extend(e.problems)
        if problems:
            raise ImportFailed(problems)
        children: dict[str, list[Conversation]] = {}
        for source in sources:
            if source.parent_where in imported:
                children.setdefault(source.parent_where, []).append(imported[source.where].conversation)
        for parent_where, kids in children.items():
            _link_subagents(imported[parent_where].conversation, kids)
        writes.finish(sum(r.added for r in results))
    return results


def _import_reviews(conversation: Conversation, source: ConversationSource) -> None:
    found = source.reviews()
    if found is None:
        return
    data, error = found
    where = f"{source.where}/{reviews.NAME}"
    problems = [f"{where}: {error}"] if error else reviews.store_reviews(conversation, data, where)
    if problems:
        raise ImportFailed(problems)


def _moved_subagents(sources: list[ConversationSource]) -> list[str]:
    """A sub-agent folder naming a conversation already stored elsewhere (on its own, or
    under another parent): linking it would move that conversation under this one, into
    this one's share links and its deletion. Refused, naming both."""
    by_where = {s.where: s for s in sources}
    parent_of = {
        s.conversation_id: by_where[s.parent_where].conversation_id for s in sources if s.parent_where in by_where
    }
    if not parent_of:
        return []
    stored = Conversation.objects.filter(conversation_id__in=parent_of).values_list(
        "conversation_id", "parent__conversation_id"
    )
    problems = []
    where_of = {s.conversation_id: s.where for s in sources}
    for conversation_id, parent_id in stored:
        if parent_id == parent_of[conversation_id]:
            continue  # already this parent's sub-agent: an import again
        already = "as a conversation of its own" if parent_id is None else f"as a sub-agent of {parent_id}"
        problems.append(
            f"{where_of[conversation_id]}: this sub-agent folder names conversation {conversation_id}, "
            f"already imported {already}; an import never moves a conversation under another "
            f"({parent_of[conversation_id]}): delete {conversation_id} first to import it as this one's sub-agent"
        )
    return problems


def _record_instance(conversation: Conversation, row: RunRow, runs_seen: dict[str, Run]) -> None:
    """The row's run (made on its first row, its metadata from that row) and instance."""
    run = runs_seen.get(row.slug)
    if run is None:
        run, _ = Run.objects.update_or_create(
            slug=row.slug,
            defaults={
                "name": row.run[:200],
                "source": row.source[:1000],
                "metadata": row.metadata,
                "imported_at": timezone.now(),
            },
        )
        runs_seen[row.slug] = run
    found, _ = Instance.objects.update_or_create(
        conversation=conversation,
        defaults={
            "run": run,
            "instance_id": row.instance_id,
            "outcome": row.outcome,
            "test_result": row.test_result,
            "error": row.error,
            "row": row.number,
            **conversation.events.aggregate(
                failures=Count("pk", filter=~Q(failure="")),
                # projection.assistant_turns, in SQL
                turns=Count("llm_response_id", distinct=True, filter=Q(kind=kinds.ACTION) & ~Q(llm_response_id="")),
            ),
        },
    )
    found.sign()
    found.save(update_fields=Instance.SIGNED)
    if conversation.title != row.instance_id[:300]:
        conversation.title = row.instance_id[:300]
        conversation.save(update_fields=["title"])


def _store_usage(conversation: Conversation, state: dict[str, Any]) -> None:
    """The run's totals on the conversation, and each LLM response's figures (replaced:
    the stats only ever grow)."""
    totals = usage.totals(state)
    for name in ("prompt_tokens", "completion_tokens", "cache_read_tokens", "reasoning_tokens", "cost"):
        setattr(conversation, name, getattr(totals, name))
    if conversation.pk:
        TurnUsage.objects.filter(conversation=conversation).delete()
    TurnUsage.objects.bulk_create(
        [TurnUsage(conversation=conversation, **asdict(u)) for u in usage.responses(state)], batch_size=500
    )


def _seconds_between(first: str, last: str) -> float | None:
    try:
        seconds = (datetime.fromisoformat(last) - datetime.fromisoformat(first)).total_seconds()
    except (ValueError, TypeError, OverflowError):  # missing, or not ISO, or one naive and one not
        return None
    return seconds if seconds >= 0 else None


def _link_subagents(parent: Conversation, children: list[Conversation]) -> None:
    """Hang each sub-agent conversation under its parent, by the task call that started it."""
    calls = []
    task_events = parent.events.filter(kind=kinds.ACTION, tool_name="task").order_by("seq")
    for event_id, packed in task_events.values_list("event_id", "payload__packed"):
        call = task_call(event_id, orjson.loads(unpack(packed)).get("action"))
        if call is not None:
            calls.append(call)
    first_seen = {c.pk: c.events.order_by("seq").values_list("timestamp", flat=True).first() or "" for c in children}
    children.sort(key=lambda c: (first_seen[c.pk], c.conversation_id))
    started_by = match(calls, [(c.conversation_id, c.title) for c in children])
    for child in children:
        child.parent = parent
        child.parent_call_id = started_by.get(child.conversation_id, "")
        child.save(update_fields=["parent", "parent_call_id"])


def _import(source: ConversationSource, progress: Progress, writes: ModuleType) -> Imported:
    source_state = source.state()
    if source_state.problems:  # it changed since it was found
        raise ImportFailed(source_state.problems)
    conversation, created = Conversation.objects.get_or_create(conversation_id=source.conversation_id)
    if conversation.deleting:
        raise ImportFailed(
            [
                f"{source.where}: conversation {conversation.conversation_id} is being deleted; "
                "import it again once that is done"
            ]
        )
    if not created and connection.features.has_select_for_update:
        # Concurrent re-imports of one conversation queue here and each event lands once.
        # (A new row is this transaction's until it commits; SQLite has one writer at a time.)
        conversation = Conversation.objects.select_for_update().get(pk=conversation.pk)
    writer = _Writer(conversation, writes, new=created, expected=source.expected, where_of=source.where_of)
    writer.consume(source.parsed(terms=writes.INDEX_TERMS), progress, source.event_files)
    if writer.problems:
        raise ImportFailed(writer.problems)
    try:
        tree = writer.builder.finish()
        head = tree.head(*_head_hints(source_state.data))
    except TreeError as e:
        raise ImportFailed([_locate(p, source) for p in e.problems]) from None
    writer.place_late_events(tree)

    state = source_state.data or {}
    if created or writer.added or _leaf_hint(state) != _leaf_hint(stored_state(conversation)):
        # The conversation moved on: follow its HEAD. Otherwise a HEAD picked in
        # eventviewer ("Make this the default branch") stays.
        conversation.head_id = writer.pk_of[head] if head is not None else None
    conversation.execution_status = _status(state, writer.last_status, conversation.execution_status)
    conversation.title = source.title or conversation.title or writer.title
    for name, value in source.described.items():  # meta.json's title and lineage
        setattr(conversation, name, value)
    added = writer.added
    head_branch = None
    if created and head is not None and conversation.head_id == writer.pk_of[head]:
        head_branch = writer.head_branch(tree, head)  # no need to read back what was just written
    writer.paired.clear()  # read by head_branch only: its memory goes before the nodes are made
    seq_of, outcome_of = writer.builder.seq, writer.outcome_of
    nodes = [
        Node(event_id, parent, seq_of[event_id], tree.depth[event_id], tree.kind[event_id], outcome_of[event_id])
        for event_id, parent in tree.parent.items()
    ]
    event_count = len(writer.pk_of)
    failure_count = writer.failures if created else None  # a re-import's earlier events count too
    conversation.duration = _seconds_between(writer.first_timestamp, writer.last_timestamp)
    del writer, tree  # the nodes (and the HEAD branch) are all the figures need
    found = state.get("agent")
    agent: dict[str, Any] = found if isinstance(found, dict) else {}
    found = agent.get("llm")
    llm: dict[str, Any] = found if isinstance(found, dict) else {}
    conversation.agent_kind = _clean(agent.get("kind") or conversation.agent_kind, 100)
    conversation.model = _clean(llm.get("model") or conversation.model, 200)
    if source_state.raw:
        ConversationState.objects.update_or_create(
            conversation=conversation, defaults={"packed": pack(source_state.raw)}
        )
    if source_state.data is not None:
        _store_usage(conversation, source_state.data)
    del source_state
    conversation.source = source.where[:1000]
    if not created and added:
        conversation.imported_at = timezone.now()
    conversation.refresh_figures(nodes, head_branch, event_count, failure_count)
    return Imported(conversation, created, added)


class Paired(NamedTuple):
    """What pairing reads of a new event, kept for the HEAD branch's figures: a whole
    Light per event (and the strings parsing made for it) would double the import's memory."""

    kind: str
    tool_name: str
    tool_call_id: str
    action_id: str
    executable: bool

    def light(self, event_id: str) -> Light:
        return Light(
            event_id,
            self.kind,
            tool_name=self.tool_name,
            tool_call_id=self.tool_call_id,
            action_id=self.action_id,
            executable=self.executable,
        )


class _Writer:
    """Streams new events into the database, placing each in the tree by the SDK's
    rules (``TreeBuilder``, the same code that reads a tree anywhere else) as it comes."""

    def __init__(
        self,
        conversation: Conversation,
        writes: ModuleType,
        new: bool = False,
        expected: int | None = None,
        where_of: Callable[[int], str] | None = None,
    ):
        self.conversation = conversation
        self.writes = writes  # writers.sqlite or writers.postgres
        self.conversation_pk = conversation.pk  # read per event: a model's pk is a property
        self.new = new
        self.unreserved = expected  # events still to come when the source says how many
        self.builder = TreeBuilder(where_of)
        self.problems: list[str] = []
        self.digest_of: dict[str, str] = {}  # events imported before: what re-imports compare
        self.pk_of: dict[str, int] = {}
        # Positions the conversation already holds. A source never gives two new events one
        # position, so new events need no such map (100,000 entries on a big import).
        self.id_at: dict[int, str] = {}
        self.late: list[str] = []  # new events written before their parent was placed
        self.anchor_of: dict[str, int] = {}  # each tree event's anchor (see tree.anchor_depth), for its children
        self.batch = writers.Batch()
        self.runs = fulltext.Runs()  # PostgreSQL's runs of words, across batches
        self.ids: Iterator[int] = iter(())
        self.reserved = 0  # the highest primary key handed out so far
        self.outcome_of: dict[str, str] = {}  # how a branch ending at each event ends
        # A new conversation's events as pairing reads them, for the HEAD branch's figures.
        self.paired: dict[str, Paired] = {}
        self.added = 0
        self.failures = 0  # new events that record a failure (Light.failure)
        self.first_timestamp = self.last_timestamp = ""  # of the first and the last event appended
        self.title = ""
        self.last_status = ""
        self.db = connections[DEFAULT_DB_ALIAS]
        self.inserter: ThreadPoolExecutor | None = None
        self.in_flight: Future[None] | None = None
        if not new:
            self._load_known()

    def _load_known(self) -> None:
        """What the conversation already holds: a re-import adds only what is new."""
        for *columns, digest in self.conversation.events.order_by("seq").values_list(*LIGHT_COLUMNS, "digest"):
            light = light_row(columns)
            self._remember(light, "(imported before)")
            self.digest_of[light.event_id] = digest
            self.id_at[light.seq] = light.event_id
            if light.anchor is not None:
                self.anchor_of[light.event_id] = light.anchor

    def _remember(self, light: Light, where: str, outcome: str = "") -> str | None:
        """The event's id (interned) once the tree builder placed it, or None when it
        refused it (its problems say why)."""
        # An id is held (as a key, a parent, an action a result names) for the whole
        # import: interned, each is one string however many times it is named.
        event_id = sys.intern(light.event_id)
        parent_ref = sys.intern(light.parent_ref) if light.parent_ref else light.parent_ref
        if not self.builder.add(Entry(light.seq, event_id, light.kind, parent_ref, where)):
            return None
        self.pk_of[event_id] = light.pk or self._next_id()
        self.outcome_of[event_id] = outcome or kinds.outcome(light)
        self.first_timestamp = self.first_timestamp or light.timestamp
        self.last_timestamp = light.timestamp or self.last_timestamp
        return event_id

    def consume(self, events: Iterable[Parsed], progress: Progress, file_each: bool) -> None:
        """Take every event; ``file_each``: each came from a file of its own."""
        try:
            for event in events:
                self._take(event)
                progress.event(file_each)
            self._flush()
            self.settle()
            self.runs.end()
            if self.runs.full and not self.problems and not self.builder.problems:
                with self.db.cursor() as cursor:
                    self.runs.store(cursor.cursor)
        finally:
            self.close()

    def _take(self, event: Parsed) -> None:
        light = event.light
        if light is None:
            self.problems.append(f"{event.where}: {event.error}")
            return
        digest = self.digest_of.get(light.event_id)
        if digest is not None:
            if digest != event.digest and not self._same_content(light.event_id, event.packed):
                self.problems.append(
                    f"{event.where}: event {light.event_id}: its content differs from the copy imported before "
                    "(events never change once written)"
                )
            return
        if event.seq in self.id_at:
            self.problems.append(
                f"{event.where}: event {light.event_id}: "
                f"position {event.seq} already holds event {self.id_at[event.seq]}"
            )
            return
        event_id = self._remember(light, event.where, event.outcome)
        if event_id is None:
            return  # the tree builder says why (a duplicate or reserved id)
        self.title = self.title or event.title
        self.last_status = event.status or self.last_status
        if self.problems or self.builder.problems:
            return  # keep checking, stop writing
        self._add(event_id, light, event)

    def _same_content(self, event_id: str, packed: bytes) -> bool:
        """Bytes differ (another export of the conversation): compare what they say."""
        self.settle()
        stored = EventPayload.objects.values_list("packed", flat=True).get(pk=self.pk_of[event_id])
        return same_meaning(unpack(stored), unpack(packed))

    def _add(self, event_id: str, light: Light, event: Parsed) -> None:
        tree = self.builder.tree
        parent_pk = depth = anchor = None
        if event_id in tree.parent:  # a tree node, placed by the builder
            depth = tree.depth.get(event_id)
            parent = tree.parent[event_id]
            if depth is None:
                self.late.append(event_id)  # its parent comes later in the log (not SDK-made)
            elif parent is not None:
                parent_pk = self.pk_of[parent]
                anchor = anchor_from_parent(parent_pk, depth - 1, self.anchor_of.get(parent))
                if anchor is not None:
                    self.anchor_of[event_id] = anchor
        pk = self.pk_of[event_id]
        if self.new:  # a first import: the HEAD branch will be all new events
            # The few kinds and tool names shared, one string each.
            self.paired[event_id] = Paired(
                sys.intern(light.kind),
                sys.intern(light.tool_name),
                sys.intern(light.tool_call_id),  # an action's, and its result's: one string
                sys.intern(light.action_id),
                light.executable,
            )
        batch = self.batch
        batch.events.append(EventRow(self.conversation_pk, event.digest, light.placed(pk, parent_pk, depth, anchor)))
        batch.payloads.append(PayloadRow(pk, event.packed))
        if event.text:
            batch.texts.append(TextRow(pk, self.conversation_pk, event.text, event.terms))
        self.added += 1
        if light.failure:
            self.failures += 1
        if len(batch) >= BATCH_SIZE:
            self._flush()

    def _flush(self) -> None:
        """Hand the batch to the writer thread: the database works (without the GIL)
        while this thread checks the next batch. One batch in flight at a time keeps
        the order, and this thread never uses the connection meanwhile."""
        if self.batch and not self.problems and not self.builder.problems:
            self.settle()
            if self.inserter is None:
                self.inserter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="eventviewer-import")
                self.db.inc_thread_sharing()
            self.in_flight = self.inserter.submit(self.writes.insert, self.db, self.batch, self.runs)
        self.batch = writers.Batch()

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
        # As many as the events still to come, when known: PostgreSQL hands ids out one
        # at a time (2,500 cost a 1,000-event import a third of its fixed costs).
        count = BATCH_SIZE * 10
        if self.unreserved is not None:
            count = max(1, min(count, self.unreserved))
            self.unreserved = max(0, self.unreserved - count)
        ids = self.writes.reserve_ids(count, self.reserved)
        self.reserved = ids[-1]
        self.ids = iter(ids)
        return next(self.ids)

    def head_branch(self, tree: Tree, head: str) -> HeadBranch:
        """The branch ending at ``head`` measured and paired from what this import
        holds: all of its events must be new."""
        paired = self.paired
        path = [paired[event_id].light(event_id) for event_id in tree.path(head)]
        elsewhere = {a for a in referenced_actions(path) if a in paired and paired[a].kind == kinds.ACTION}
        return HeadBranch(head, len(path), pair(path, elsewhere))

    def place_late_events(self, tree: Tree) -> None:
        """Give the rows written before their parent was placed their parent, depth and anchor."""
        for event_id in sorted(self.late, key=tree.depth.__getitem__):  # parents first
            parent = tree.parent[event_id]
            depth = tree.depth[event_id]
            anchor = None
            if parent is not None:
                anchor = anchor_from_parent(self.pk_of[parent], depth - 1, self.anchor_of.get(parent))
                if anchor is not None:
                    self.anchor_of[event_id] = anchor
            Event.objects.filter(pk=self.pk_of[event_id]).update(
                parent_id=self.pk_of[parent] if parent is not None else None, depth=depth, anchor=anchor
            )


def _number(literal: str) -> tuple[str, Decimal]:
    return ("number", Decimal(literal))


def same_meaning(a: bytes, b: bytes) -> bool:
    """Whether two JSON texts say the same thing, whatever their layout or key order.
    Numbers compare exactly, at any size (a float would round an integer beyond 2**53
    and miss a change of 1), and never equal to true or false."""
    same: bool = json.loads(a, parse_int=_number, parse_float=_number) == json.loads(
        b, parse_int=_number, parse_float=_number
    )
    return same


def _leaf_hint(state: dict[str, Any]) -> Any:
    return state.get("leaf_event_id"), state.get("head_is_empty")


def stored_state(conversation: Conversation) -> dict[str, Any]:
    packed = ConversationState.objects.filter(conversation=conversation).values_list("packed", flat=True).first()
    try:
        state = orjson.loads(unpack(packed)) if packed else {}
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
