from __future__ import annotations

import secrets
import time
import uuid
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import orjson
from django.conf import settings
from django.core.cache import cache
from django.db import connection, models, transaction
from django.db.models.functions import Coalesce, NullIf
from django.http import Http404
from django.urls import reverse
from django.utils import timezone

from eventviewer import branch_queries, caches
from eventviewer.branch_queries import LIGHT_COLUMNS, columns_of, light_row
from eventviewer.fields import KeptJSONField
from eventviewer.imports.packing import unpack
from eventviewer.scope import event_path
from eventviewer.trajectory import failures, files, kinds, masking, naming, patterns, runs, serverstate
from eventviewer.trajectory.cards import Card
from eventviewer.trajectory.diff import Budget
from eventviewer.trajectory.events import SUMMARY_LENGTH, Light, one_line
from eventviewer.trajectory.model_view import Condensed
from eventviewer.trajectory.pairing import (
    Identity,
    LeafProblems,
    Pairing,
    focus,
    pair,
    problems_per_leaf,
    referenced_actions,
)
from eventviewer.trajectory.query import branch_leaves
from eventviewer.trajectory.reading import Reading, read
from eventviewer.trajectory.skeleton import Node, build_skeleton, event_label
from eventviewer.trajectory.tree import ANCHOR_SPACING
from eventviewer.trajectory.usage import Usage, total_of

PAYLOAD_CHUNK = 500  # payloads read per query
DRIFT_LISTED = 20  # events that ran on other branches listed (and kept) per fork point; all are counted
RUN_END_ERRORS_READ = 100  # tree events after HEAD read to find the conversation errors that ended its run


DELETE_BATCH = 2000  # events deleted per transaction
BRANCH_KEPT_EVENTS = 200_000  # longer branches are read again by each request: too big to keep


def read_whole(leaf: Event | Light) -> bool:
    """Whether pages read the branch ending at ``leaf`` whole: one of at most
    EVENTVIEWER_FULL_READ_MAX events. A longer one is read a stretch at a time
    (``EventQuerySet.on_branch``), and what would need all of it is not shown."""
    return (leaf.depth or 0) < settings.EVENTVIEWER_FULL_READ_MAX


class Described(NamedTuple):
    """What the skeleton shows of a kept event (``Conversation._describe_kept``)."""

    pk: int
    event_id: str
    timestamp: str
    summary: str
    kind: str
    source: str
    tool_name: str


class HeadBranch(NamedTuple):
    leaf: str  # the HEAD event's id
    length: int  # events on the branch
    pairing: Pairing


UNKNOWN_STATUS = "unknown"


def status_expression() -> models.Func:
    """The status a conversation is shown with (as ``Conversation.shown_status``), for the list's
    filter, sort and choices: the SDK's execution status, else an evaluation instance's
    outcome, else "unknown"."""
    return Coalesce(
        NullIf("execution_status", models.Value("")),
        "instance__outcome",
        models.Value(UNKNOWN_STATUS),
        output_field=models.CharField(),
    )


def started_expression() -> models.Subquery:
    """The timestamp (as recorded) of a conversation's first event that has one: where
    ``duration`` starts. One lookup per row in the (conversation, seq) index."""
    first = Event.objects.filter(conversation=models.OuterRef("pk")).exclude(timestamp="").order_by("seq")
    return models.Subquery(first.values("timestamp")[:1])


T = TypeVar("T")


class ConversationQuerySet(models.QuerySet["Conversation"]):
    def shown(self) -> ConversationQuerySet:
        """All but those being deleted: what any page, list or link may show."""
        return self.filter(deleting=False)

    def with_listed(self) -> ConversationQuerySet:
        return self.annotate(listed_status=status_expression(), listed_started=started_expression())

    def with_comment_figures(self) -> ConversationQuerySet:
        """``Conversation.comment_version``'s figures, read in the same query (the live page's 204)."""
        rows = Comment.objects.filter(conversation=models.OuterRef("pk")).order_by().values("conversation")

        def one(aggregate: models.Aggregate, field: models.Field[Any, Any]) -> models.Subquery:
            return models.Subquery(rows.annotate(v=aggregate).values("v"), output_field=field)

        return self.annotate(
            comments_n=one(models.Count("pk"), models.IntegerField()),
            comments_resolved=one(models.Count("pk", filter=models.Q(resolved=True)), models.IntegerField()),
            comments_last=one(models.Max("updated_at"), models.DateTimeField()),
        )


class Conversation(models.Model):
    conversation_id = models.CharField(max_length=32, unique=True)  # the SDK id, 32 hex digits
    title = models.CharField(max_length=300, blank=True)
    execution_status = models.CharField(max_length=40, blank=True)
    head = models.ForeignKey(
        "Event",
        null=True,
        blank=True,
        # The conversation goes with its events, so the database never sees a dangling HEAD.
        on_delete=models.DO_NOTHING,
        related_name="+",
    )
    agent_kind = models.CharField(max_length=100, blank=True)
    model = models.CharField(max_length=200, blank=True)
    source = models.CharField(max_length=1000, blank=True)  # where it was imported from
    imported_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    # Figures computed at import, so the list never walks a tree.
    event_count = models.PositiveIntegerField(default=0)
    leaf_count = models.PositiveIntegerField(default=0)
    head_path_length = models.PositiveIntegerField(default=0)  # events on the HEAD branch
    pending_count = models.PositiveIntegerField(default=0)
    mismatch_count = models.PositiveIntegerField(default=0)
    failure_count = models.PositiveIntegerField(default=0)  # events of any branch recording a failure
    skeleton = KeptJSONField(default=dict, blank=True)  # see trajectory.skeleton (read-only once read)
    # A sub-agent's conversation: the parent it ran for, and the `task` call that started it.
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="subagents")
    parent_call_id = models.CharField(max_length=255, blank=True)  # the task ActionEvent's id in the parent
    # What the run cost, from base_state.json's stats (null: not recorded, never 0).
    prompt_tokens = models.BigIntegerField(null=True, blank=True)
    completion_tokens = models.BigIntegerField(null=True, blank=True)
    cache_read_tokens = models.BigIntegerField(null=True, blank=True)
    reasoning_tokens = models.BigIntegerField(null=True, blank=True)
    cost = models.FloatField(null=True, blank=True)  # in US dollars, as the SDK accumulates it
    duration = models.FloatField(null=True, blank=True)  # seconds from the first event to the last
    # Lineage an agent-server reports (32-hex conversation ids; the origin may not be here).
    forked_from_conversation_id = models.CharField(max_length=32, blank=True)
    forked_from_event_id = models.CharField(max_length=255, blank=True)
    parent_conversation_id = models.CharField(max_length=32, blank=True)  # a sub-agent's owner
    # Set ahead by `manage.py sync --follow` or `watch` while they follow the conversation.
    live_until = models.DateTimeField(null=True, blank=True)
    # Set when its deletion starts: hidden everywhere from then on, while its rows go in batches.
    deleting = models.BooleanField(default=False)

    objects = ConversationQuerySet.as_manager()

    class Meta:
        ordering = ["-imported_at"]
        indexes = [
            # The list's default order: newest import first.
            models.Index(fields=["-imported_at"], name="conversation_imported_idx"),
        ]

    def __str__(self) -> str:
        return self.title or self.conversation_id

    def get_absolute_url(self) -> str:
        return reverse("eventviewer:conversation", args=[self.conversation_id])

    @property
    def synced(self) -> bool:
        """Copied from an agent-server by `sync` (its source is the server's URL for it)."""
        return self.source.startswith(("http://", "https://"))

    def base_state_file(self) -> bytes | None:
        """Its base_state.json (None: it had none), as stored; for a synced conversation,
        as the SDK writes it (a sync before the SDK's shape was written stored the
        server's description of the conversation instead)."""
        packed = ConversationState.objects.filter(conversation=self).values_list("packed", flat=True).first()
        if packed is None:
            return None
        raw = unpack(packed)
        if self.synced:
            return orjson.dumps(serverstate.sdk_state(orjson.loads(raw)))
        return raw

    @property
    def shown_status(self) -> str:
        """What ``status_expression`` says of this conversation."""
        annotated = getattr(self, "listed_status", None)
        if annotated is not None:
            return str(annotated)
        if self.execution_status:
            return self.execution_status
        instance = Instance.objects.filter(conversation=self).values_list("outcome", flat=True).first()
        return instance or UNKNOWN_STATUS

    @cached_property
    def started(self) -> str:
        """The first event's timestamp, as recorded ("" when none has one)."""
        if hasattr(self, "listed_started"):  # annotated by the list: None when no event has one
            return str(self.listed_started or "")
        first = self.events.exclude(timestamp="").order_by("seq").values_list("timestamp", flat=True).first()
        return first or ""

    @property
    def is_live(self) -> bool:
        return self.live_until is not None and self.live_until > timezone.now()

    @cached_property
    def live_version(self) -> str:
        """Changes whenever the page of this conversation would: an import or a HEAD
        change (``updated_at``), following it starting or stopping, or its comments. Read
        once per object (a page's turns each ask): a request reads the conversation afresh."""
        return f"{self.updated_at:%Y%m%d%H%M%S%f}-{int(self.is_live)}-{self.comment_version}"

    @cached_property
    def comment_version(self) -> str:
        """Changes when a comment is written, edited, resolved, reopened or deleted."""
        if hasattr(self, "comments_n"):  # ConversationQuerySet.with_comment_figures
            annotated: Any = self  # its figures are annotations, not fields
            n, resolved, last = annotated.comments_n or 0, annotated.comments_resolved or 0, annotated.comments_last
        else:
            found = self.comments.aggregate(
                n=models.Count("pk"),
                resolved=models.Count("pk", filter=models.Q(resolved=True)),
                last=models.Max("updated_at"),
            )
            n, resolved, last = found["n"], found["resolved"], found["last"]
        return f"{n}.{resolved}.{last:%Y%m%d%H%M%S%f}" if last else "0"

    def comment_counts(self) -> dict[str, int]:
        """How many comments each event has (its diagram node's mark)."""
        counted = self.comments.order_by().values("event_id").annotate(n=models.Count("pk"))
        return {row["event_id"]: row["n"] for row in counted}

    def lineage(self) -> list[tuple[str, str, Conversation | None]]:
        """(relation, conversation id, that conversation if it is here) for the fork
        origin and the owning conversation the agent-server reported."""
        ids = [
            ("forked from", self.forked_from_conversation_id),
            ("sub-conversation of", self.parent_conversation_id),
        ]
        here = Conversation.objects.only("conversation_id", "title").in_bulk(
            [i for _, i in ids if i], field_name="conversation_id"
        )
        return [(relation, i, here.get(i)) for relation, i in ids if i]

    def refresh_figures(
        self,
        nodes: list[Node] | None = None,
        head_branch: HeadBranch | None = None,
        event_count: int | None = None,
        failure_count: int | None = None,
    ) -> None:
        """Recompute the skeleton and the list's figures.

        Called after every import (which passes what it already holds: the tree as
        ``nodes``, the number of events and of failures, and the HEAD branch when all of
        it is new) and HEAD change (which reads the light columns of every event, and the branch).
        """
        if nodes is None:
            nodes = self._tree_nodes()
        head: str | None
        if head_branch is not None:
            head = head_branch.leaf
        else:
            head = Event.objects.values_list("event_id", flat=True).get(pk=self.head_id) if self.head_id else None
        skeleton = build_skeleton(nodes, head)
        del nodes
        self._describe_kept(skeleton)
        self.skeleton = skeleton
        self.event_count = self.events.count() if event_count is None else event_count
        self.leaf_count = sum(1 for node in skeleton["nodes"] if node["leaf"])
        if head_branch is None and self.head is not None:
            # Not kept (read_path): updated_at changes below, so no later request would find it.
            reading = self._read_path(self.head)
            head_branch = HeadBranch(self.head.event_id, len(reading.path), reading.pairing)
        self.head_path_length = head_branch.length if head_branch else 0
        self.pending_count = len(head_branch.pairing.pending) if head_branch else 0
        self.mismatch_count = len(head_branch.pairing.mismatched) if head_branch else 0
        if failure_count is None:
            failure_count = self.events.exclude(failure="").count()
        self.failure_count = failure_count
        self.updated_at = timezone.now()
        self.save()

    def _describe_kept(self, skeleton: dict[str, Any]) -> None:
        """Only the kept events show a timestamp, a summary (made one clean line here) and a
        label saying what happened; a run shows its first and last events' labels."""
        kept = {node["id"]: node for node in skeleton["nodes"]}
        ends = {node["run"][end] for node in skeleton["nodes"] if node["run"] for end in ("first", "last")}
        labels: dict[str, str] = {}
        ids = list(kept.keys() | ends)
        columns = columns_of(Described)
        for start in range(0, len(ids), 500):
            chunk = self.events.filter(event_id__in=ids[start : start + 500]).values_list(*columns)
            rows = [Described._make(row) for row in chunk]
            actions = [row.pk for row in rows if row.kind == kinds.ACTION]
            commands = {}
            if actions:
                for pk, packed in EventPayload.objects.filter(pk__in=actions).values_list("pk", "packed"):
                    commands[pk] = kinds.card_for(orjson.loads(unpack(packed))).command
            for row in rows:
                summary = one_line(row.summary, SUMMARY_LENGTH)
                command = one_line(commands.get(row.pk, ""), 200)
                labels[row.event_id] = event_label(row.kind, row.source, row.tool_name, summary, command)
                if row.event_id in kept:
                    kept[row.event_id].update(timestamp=row.timestamp, summary=summary, label=labels[row.event_id])
        for node in skeleton["nodes"]:
            if node["run"]:
                node["run"]["first_label"] = labels.get(node["run"]["first"], "")
                node["run"]["last_label"] = labels.get(node["run"]["last"], "")

    @cached_property
    def branch_names(self) -> dict[str, str]:
        """Each leaf's name, by leaf id (``trajectory.naming``)."""
        return naming.branch_names(self.skeleton)

    def branch_name(self, leaf_id: str) -> str:
        return self.branch_names.get(leaf_id) or leaf_id

    def leaf_problems(self) -> dict[str, LeafProblems]:
        """Each leaf's pending actions and mismatched results, for the branch list. One
        walk of the tree's identity columns (``pairing.problems_per_leaf``), kept per
        process until the conversation changes; a lone branch that is HEAD's has them
        stored already. Counted on the first page that lists the branches, not at
        import: most conversations never need it, and it would weigh on every import."""
        leaves = [node["id"] for node in self.skeleton.get("nodes", []) if node["leaf"]]
        if leaves == [self.skeleton.get("head")]:
            return {leaves[0]: LeafProblems(self.pending_count, self.mismatch_count)}
        return caches.cached(f"leaf-problems:{self.pk}:{self.updated_at.timestamp()}", self._count_leaf_problems)

    def _count_leaf_problems(self) -> dict[str, LeafProblems]:
        rows = self.events.filter(depth__isnull=False).values_list(*columns_of(Identity)).order_by()
        # The ORM's SQL on a plain cursor: Django's per-row converters would cost more
        # than the walk (a flag comes back as 0/1 on SQLite, which counts the same).
        with connection.cursor() as cursor:
            cursor.execute(*rows.query.sql_with_params())
            return problems_per_leaf(map(Identity._make, cursor))

    def _tree_nodes(self) -> list[Node]:
        rows = self.events.filter(depth__isnull=False).light_rows()
        event_id: dict[int | None, str] = {row.pk: row.event_id for row in rows}  # a root's parent_pk: None
        return [Node.of(row, event_id.get(row.parent_pk)) for row in rows]

    def subagent_conversations(self) -> list[Conversation]:
        """The conversations of the sub-agents this one ran, and theirs, deepest last.
        (Read through a ``subagents`` relation when Conversation has one.)"""
        found: list[Conversation] = []
        level = [self]
        while level:
            relation = [getattr(c, "subagents", None) for c in level]
            level = [child for r in relation if r is not None for child in r.all()]
            found.extend(level)
        return found

    def delete_in_batches(self, batch: int = DELETE_BATCH, timed: Callable[[float], None] | None = None) -> int:
        """Delete this conversation and its sub-agents' with their events, payloads,
        base_state and share links, ``batch`` events per transaction, so that no reader
        or importer waits long on the database. Returns the number of events deleted.

        It is hidden at once (``deleting``: no page, list or link shows it); if this
        stops half-way, running it again finishes the job. ``timed`` hears how long
        each transaction took."""
        deleted = 0
        for conversation in [*reversed(self.subagent_conversations()), self]:
            with transaction.atomic():
                Conversation.objects.filter(pk=conversation.pk).update(deleting=True, head=None)
                conversation.share_links.all().delete()
            while True:
                started = time.perf_counter()
                with transaction.atomic():
                    # Newest first, so children go before their parents: the batch is every
                    # event from the batch-th highest seq up (those above are gone already).
                    events = Event.objects.filter(conversation=conversation).order_by("-seq")
                    lowest = events.values_list("seq", flat=True)[batch - 1 : batch].first()
                    if lowest is None:
                        lowest = events.values_list("seq", flat=True).last()
                    if lowest is None:
                        break
                    doomed = Event.objects.filter(conversation=conversation, seq__gte=lowest)
                    # A child written before its parent (never in an SDK log) is cut loose first.
                    Event.objects.filter(parent__in=doomed).exclude(pk__in=doomed).update(parent=None)
                    deleted += _delete_rows(doomed)
                if timed is not None:
                    timed(time.perf_counter() - started)
            with transaction.atomic():
                ConversationState.objects.filter(conversation=conversation).delete()
                Conversation.objects.filter(pk=conversation.pk).delete()
        return deleted

    def read_path(self, leaf: Event) -> Reading:
        """The branch ending at ``leaf``: path, turns, pending and mismatched."""
        if (leaf.depth or 0) < BRANCH_KEPT_EVENTS:
            return caches.branch_memo(self, leaf.pk, "reading", lambda: self._read_path(leaf))
        return self._read_path(leaf)

    def _read_path(self, leaf: Event) -> Reading:
        path = Event.objects.path_to(leaf)
        wanted = referenced_actions(path)
        elsewhere = set()
        if wanted:
            elsewhere = set(
                self.events.filter(kind=kinds.ACTION, event_id__in=wanted).values_list("event_id", flat=True)
            )
        return read(path, elsewhere, self.condensations(path))

    def pairing_of(self, leaf: Event, events: Sequence[Light], known: Sequence[Light] = ()) -> tuple[Pairing, set[str]]:
        """How ``events`` (on the branch ending at ``leaf``) pair on that branch, read
        without the branch: only its events that decide it (``pairing.focus``), found by
        their ids and tool calls and kept when they are ``leaf``'s ancestors (``known``:
        a stretch of the branch already read). Returns the pairing, exact for ``events``,
        and the ids of the branch's events it read."""
        decides = focus(events)
        if not decides:
            return Pairing(), set()
        match = models.Q(event_id__in=decides.ids) | models.Q(action_id__in=decides.ids)
        if decides.calls:
            match |= models.Q(tool_call_id__in=decides.calls)
        found = self.events.filter(match).light_rows()
        depth = leaf.depth or 0
        above = [e for e in found if e.depth is not None and e.depth <= depth]
        branch = {e.depth or 0: e.pk for e in known}  # leaf's ancestors: each has a depth
        wanted = {e.depth or 0 for e in above} - branch.keys()
        if wanted and len(wanted) * 2 * ANCHOR_SPACING < depth - min(wanted):
            branch.update(Event.objects.at_depths(leaf, wanted))  # a few, far up a long branch
        elif wanted:
            branch.update(branch_queries.ancestors(Event._meta.db_table, leaf, min(wanted)))
        path = sorted((e for e in above if branch.get(e.depth or 0) == e.pk), key=lambda e: e.depth or 0)
        on_path = {e.event_id for e in path}
        elsewhere = {e.event_id for e in found if e.kind == kinds.ACTION and e.event_id not in on_path}
        return pair(path, elsewhere), on_path

    def kept_below(self, event: Event) -> str | None:
        """The skeleton's kept event at or below ``event`` on its branches: the event itself
        when it is kept, else the one whose run (the events folded into it) holds it, found
        without reading the branch (whether it is the one is asked of anchors)."""
        nodes = {node["id"]: node for node in self.skeleton.get("nodes", [])}
        if event.event_id in nodes:
            return event.event_id
        depth = event.depth or 0
        below = [n["id"] for n in nodes.values() if n["run"] and n["depth"] - n["run"]["count"] <= depth < n["depth"]]
        for kept in self.events.only("pk", "depth", "event_id").filter(event_id__in=below):
            if Event.objects.at_depths(kept, [depth]).get(depth) == event.pk:
                return kept.event_id
        return None

    def kept_on_branch(self, leaf: Event) -> list[str]:
        """The skeleton's kept events on the branch ending at ``leaf``, leaf end first: all
        that the branch list needs of a branch, found without reading it: the leaf's kept
        ancestors, by their ``up`` links from the leaf or from the kept event below it."""
        nodes = {node["id"]: node for node in self.skeleton.get("nodes", [])}
        start = self.kept_below(leaf)
        if start is not None and start != leaf.event_id:
            start = nodes[start]["up"]
        chain = []
        while start is not None:
            chain.append(start)
            start = nodes[start]["up"]
        return chain

    def side_events(self, parent_pks: list[int], leaf_pk: int) -> dict[int, list[Light]]:
        """The side events hanging on these events (see ``skeleton.side_events``): their
        dead-end children of a side kind, neither the branch's leaf nor HEAD. Their parents
        are on a branch, so each has another child beside them."""
        if not parent_pks:
            return {}
        has_children = Event.objects.filter(parent_id=models.OuterRef("pk"))
        # By parent alone (they are this conversation's): with the conversation in the
        # filter too, SQLite walks the whole conversation instead of the parent index.
        rows = (
            Event.objects.filter(parent_id__in=parent_pks, kind__in=kinds.SIDE_KINDS)
            .exclude(pk__in=[leaf_pk, self.head_id or 0])
            .exclude(models.Exists(has_children))
            .order_by("seq")
        )
        found: dict[int, list[Light]] = {}
        for light in rows.light_rows():
            found.setdefault(light.parent_pk or 0, []).append(light)
        return found

    def usage_of(self, path: Sequence[Light]) -> Usage | None:
        """What a branch cost: the figures of the LLM responses on it (None: none recorded)."""
        responses = {e.llm_response_id for e in path if e.llm_response_id}
        if not responses:
            return None
        # A conversation's usages change only with an import: kept per process until then.
        key = f"usage:{self.pk}:{self.updated_at.timestamp()}"
        by_response = cache.get(key)
        if by_response is None:
            by_response = {u.response_id: Usage(**{f: getattr(u, f) for f in USAGE_FIELDS}) for u in self.usages.all()}
            cache.set(key, by_response, settings.EVENTVIEWER_DIAGRAM_CACHE_SECONDS)
        found = [by_response[r] for r in responses if r in by_response]
        return total_of(found) if found else None

    def side_failures(self, path: list[Light]) -> list[Light]:
        """Failing side events beside ``path`` (a hook that blocked a call or a prompt):
        failures are rare, so all of the conversation's are read and those kept whose
        parent is on the path."""
        on_path = {e.pk for e in path}
        rows = caches.cached(f"side-failures:{self.pk}:{self.updated_at.timestamp()}", self._dead_end_side_failures)
        return [r for r in rows if r.parent_pk in on_path and r.pk not in on_path]

    def run_end_errors(self, leaf: Light) -> list[Light]:
        """``failures.run_end_errors`` when ``leaf`` is HEAD: the conversation errors that
        ended the run below it. Only the first few tree events after HEAD are read: a run
        that went on past them did not end there."""
        if leaf.pk != self.head_id:
            return []
        after = self.events.filter(seq__gt=leaf.seq, depth__isnull=False).order_by("seq")
        rows = after[: RUN_END_ERRORS_READ + 1].light_rows()
        return [] if len(rows) > RUN_END_ERRORS_READ else failures.run_end_errors(leaf, rows)

    def side_failures_beside(self, path: Sequence[Light]) -> list[Light]:
        """``side_failures`` for a stretch of a branch: asked of the parents' index for these
        events only, not of the whole conversation (which a branch too long to read whole
        would make long to scan)."""
        on_path = {e.pk for e in path}
        has_children = Event.objects.filter(parent_id=models.OuterRef("pk"))
        rows = (
            Event.objects.filter(parent_id__in=list(on_path), kind__in=kinds.SIDE_KINDS)
            .exclude(failure="")
            .exclude(models.Exists(has_children))
            .order_by("seq")
        )
        return [r for r in rows.light_rows() if r.pk not in on_path]

    def _dead_end_side_failures(self) -> list[Light]:
        rows = self.events.filter(kind__in=kinds.SIDE_KINDS).exclude(failure="").light_rows()
        has_children = set(Event.objects.filter(parent_id__in=[r.pk for r in rows]).values_list("parent_id", flat=True))
        return [r for r in rows if r.pk not in has_children]

    def condensations(self, path: list[Light]) -> dict[str, Condensed]:
        """What each Condensation on ``path`` says (forgotten events, summary offset)."""
        pks = [e.pk for e in path if e.kind == kinds.CONDENSATION]
        if not pks:
            return {}
        rows = EventPayload.objects.filter(pk__in=pks).values_list("event__event_id", "packed")
        return {event_id: Condensed.of(orjson.loads(unpack(packed))) for event_id, packed in rows}

    def cards(self, pks: Iterable[int]) -> dict[int, Card]:
        """These events' cards by pk. A page asks for some several times (its turns, its
        problem list, its first failure): each event's JSON is read and parsed once per
        request (this object lives as long as the request), which matters for huge events.
        Raises Http404 when one is gone (the conversation deleted meanwhile)."""
        memo: dict[int, Card] = self.__dict__.setdefault("_cards", {})
        wanted = [pk for pk in set(pks) if pk not in memo]
        memo.update(caches.kept_cards(self, wanted))
        wanted = [pk for pk in wanted if pk not in memo]
        built: dict[int, Card] = {}
        for start in range(0, len(wanted), PAYLOAD_CHUNK):
            chunk = EventPayload.objects.filter(pk__in=wanted[start : start + PAYLOAD_CHUNK])
            built.update(
                (pk, kinds.card_for(orjson.loads(unpack(packed)))) for pk, packed in chunk.values_list("pk", "packed")
            )
        if len(built) < len(wanted):
            raise Http404("This conversation is being deleted.")
        memo.update(built)
        caches.keep_cards(self, built)
        return memo

    def payloads(self, pks: Iterable[int]) -> dict[int, Any]:
        """These events' JSON by pk, read a few hundred at a time."""
        pks = list(pks)
        found: dict[int, Any] = {}
        for start in range(0, len(pks), PAYLOAD_CHUNK):
            chunk = EventPayload.objects.filter(pk__in=pks[start : start + PAYLOAD_CHUNK])
            found.update((pk, orjson.loads(unpack(packed))) for pk, packed in chunk.values_list("pk", "packed"))
        return found

    def file_changes(self, path: Sequence[Light], budget: Budget | None = None) -> list[files.Change]:
        """Every file change the results among ``path`` record, in order (see trajectory.files),
        their diffs matched within ``budget`` (one page's)."""
        edits = [e for e in path if e.effect == files.EDIT]
        data = self.payloads(e.pk for e in edits)
        return [change for e in edits for change in files.changes(e.event_id, data.get(e.pk, {}), budget=budget)]

    def workspace_drift(self, path: Sequence[Light]) -> files.Drift:
        """The edits and commands that ran on other branches after ``path`` forked from
        them (see ``files.drift``). Only an import changes it: kept per process until then,
        with what it is made of (the conversation's edits and commands, every event's parent)."""
        if not path:
            return files.Drift()
        version = f"{self.pk}:{self.updated_at.timestamp()}"

        def compute() -> files.Drift:
            ran = caches.cached(f"ran:{version}", self._ran)
            on_path = {e.pk for e in path}
            if not any(r.pk not in on_path for r in ran):
                return files.Drift()
            parents = caches.cached(f"parents:{version}", self._parents)
            return files.drift(path, ran, parents, {e.pk: e.timestamp for e in path}, keep=DRIFT_LISTED)

        return caches.branch_memo(self, path[-1].pk, "drift", compute)

    def _ran(self) -> list[files.Ran]:
        columns = ("event_id", "pk", "parent_id", "effect", "timestamp")
        return [files.Ran(*row) for row in self.events.exclude(effect="").order_by("seq").values_list(*columns)]

    def search_leaves(self, pks: Iterable[int]) -> dict[int, int]:
        """Of these events, each tree event's pk -> the pk of the leaf whose branch a search
        result on it opens (see ``search.branch_leaves``). The whole map is kept per process
        until the next import, as two arrays: the cache copies what it hands out."""
        key = f"leaves:{self.pk}:{self.updated_at.timestamp()}:{self.head_id}"
        keys, leaves = caches.cached(key, self._search_leaves)
        found = {}
        for pk in pks:
            at = bisect_left(keys, pk)
            if at < len(keys) and keys[at] == pk:
                found[pk] = leaves[at]
        return found

    def _search_leaves(self) -> tuple[array[int], array[int]]:
        rows = self.events.filter(depth__isnull=False).values_list("pk", "parent_id", "seq", "kind")
        nodes = [(pk, parent, seq, kind in kinds.SIDE_KINDS) for pk, parent, seq, kind in rows]
        leaf_of = branch_leaves(nodes, self.head_id)
        keys = sorted(leaf_of)
        return array("q", keys), array("q", (leaf_of[k] for k in keys))

    def _parents(self) -> dict[int, int | None]:
        return dict(self.events.filter(depth__isnull=False).values_list("pk", "parent_id"))


class EventQuerySet(models.QuerySet["Event"]):
    def light(self) -> EventQuerySet:
        return self.only("conversation_id", *LIGHT_COLUMNS)

    def light_rows(self) -> list[Light]:
        """These events as Lights: model instances cost more than what reading a
        branch does with them."""
        return [light_row(row) for row in self.values_list(*LIGHT_COLUMNS)]

    # The recursive queries of a branch (eventviewer.branch_queries), on the manager
    # where the views ask for them.
    def on_branch(self, leaf: Light | Event, start: int, stop: int) -> list[Light]:
        return branch_queries.on_branch(self.model._meta.db_table, leaf, start, stop)

    def at_depths(self, leaf: Light | Event, depths: Iterable[int]) -> dict[int, int]:
        return branch_queries.at_depths(self.model._meta.db_table, leaf, depths)

    def path_to(self, leaf: Event) -> list[Light]:
        return branch_queries.path_to(self.model._meta.db_table, leaf)


class Event(models.Model):
    conversation = models.ForeignKey(
        Conversation,
        on_delete=models.CASCADE,
        related_name="events",
        db_index=False,  # the unique (conversation, event_id) index serves these lookups
    )
    event_id = models.CharField(max_length=255)  # the SDK id, unique per conversation only
    seq = models.PositiveIntegerField()  # append position in the conversation's log
    # The raw parent_id: null (or absent) and "__root__" mean different things to the SDK.
    parent_ref = models.CharField(max_length=255, null=True, blank=True)  # noqa: DJ001
    parent = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        # Events are only ever deleted with their whole conversation.
        on_delete=models.DO_NOTHING,
        related_name="children",
    )
    depth = models.PositiveIntegerField(null=True, blank=True)  # null: not a tree node
    # Its ancestor at tree.anchor_depth(depth), by pk: a skip pointer for reading any part
    # of a long branch (``on_branch``). A plain column (no foreign key): it is only followed,
    # never looked up by, and goes with its conversation. Null: a root, or not known.
    anchor = models.BigIntegerField(null=True, blank=True)
    kind = models.CharField(max_length=100)
    source = models.CharField(max_length=40, blank=True)
    timestamp = models.CharField(max_length=64, blank=True)  # verbatim
    tool_name = models.CharField(max_length=255, blank=True)
    tool_call_id = models.CharField(max_length=255, blank=True)
    action_id = models.CharField(max_length=255, blank=True)
    llm_response_id = models.CharField(max_length=255, blank=True)
    payload_kind = models.CharField(max_length=100, blank=True)  # action.kind / observation.kind
    role = models.CharField(max_length=20, blank=True)  # a MessageEvent's llm_message.role
    executable = models.BooleanField(default=False)  # an ActionEvent with an `action`
    carries_text = models.BooleanField(default=False)  # thought, reasoning or thinking blocks
    is_error = models.BooleanField(default=False)
    summary = models.CharField(max_length=300, blank=True)  # the start of its text; made one line where shown
    failure = models.CharField(max_length=20, blank=True)  # a failure it records about itself (kinds.*_FAILURE)
    thinking = models.BooleanField(default=False)  # an action with thinking blocks
    effect = models.CharField(max_length=10, blank=True)  # a result's call changed files (files.EDIT, files.COMMAND)
    digest = models.CharField(max_length=32)  # of the original bytes: re-imports compare it

    objects = EventQuerySet.as_manager()

    class Meta:
        constraints = [
            # Lookups by SDK id, and re-imports that must add each event once.
            models.UniqueConstraint(fields=["conversation", "event_id"], name="event_id_per_conversation"),
            # Append order within a conversation (legacy parents, HEAD fallback).
            models.UniqueConstraint(fields=["conversation", "seq"], name="event_seq_per_conversation"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.event_id}"

    def get_absolute_url(self) -> str:
        return self.conversation.get_absolute_url() + event_path(self.event_id)

    def as_light(self) -> Light:
        return light_row(tuple(getattr(self, column) for column in LIGHT_COLUMNS))

    @property
    def is_tree_node(self) -> bool:
        return self.depth is not None

    @property
    def when(self) -> datetime | None:
        try:
            return datetime.fromisoformat(self.timestamp)
        except ValueError:
            return None


class EventPayload(models.Model):
    """An event's original JSON, verbatim (compressed by ``pack``). It lives apart from
    Event so that walking a branch reads small rows only; the payload is fetched for
    the events shown."""

    event = models.OneToOneField(Event, primary_key=True, on_delete=models.CASCADE, related_name="payload")
    packed = models.BinaryField()

    def __str__(self) -> str:
        return f"payload of event {self.event_id}"

    @property
    def raw(self) -> str:
        """The event's JSON text, exactly as imported."""
        return unpack(self.packed).decode()


USAGE_FIELDS = [f.name for f in fields(Usage)]


class TurnUsage(models.Model):
    """What one LLM response cost, from base_state.json's stats, joined to the events by
    ``response_id`` (their ``llm_response_id``). Figures the stats do not hold are null."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="usages")
    response_id = models.CharField(max_length=255)
    usage_id = models.CharField(max_length=100, blank=True)  # which LLM of the agent: "agent", "condenser" …
    model = models.CharField(max_length=200, blank=True)
    prompt_tokens = models.BigIntegerField(null=True, blank=True)
    completion_tokens = models.BigIntegerField(null=True, blank=True)
    cache_read_tokens = models.BigIntegerField(null=True, blank=True)
    cache_write_tokens = models.BigIntegerField(null=True, blank=True)
    reasoning_tokens = models.BigIntegerField(null=True, blank=True)
    cost = models.FloatField(null=True, blank=True)
    latency = models.FloatField(null=True, blank=True)  # seconds

    class Meta:
        constraints = [
            # A branch page joins its turns to their usage by response id.
            models.UniqueConstraint(fields=["conversation", "response_id"], name="usage_per_response"),
        ]

    def __str__(self) -> str:
        return f"usage of {self.response_id}"


def _delete_rows(events: models.QuerySet[Event]) -> int:
    """Delete these events and their payloads in two statements. Raw SQL: Django's
    delete() would load every event to cascade by hand what the caller already handles."""
    sql, params = events.values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {EventPayload._meta.db_table} WHERE event_id IN ({sql})", params)
        cursor.execute(f"DELETE FROM {Event._meta.db_table} WHERE id IN ({sql})", params)
        deleted: int = cursor.rowcount
        return deleted


class ConversationState(models.Model):
    """A conversation's base_state.json, verbatim (packed), apart from Conversation so
    that no page, list or API answer ever reads it (the API's list asks only whether
    there is one): what they show of it (status, agent, model) is extracted into
    Conversation's columns at import. Served only as a download."""

    conversation = models.OneToOneField(
        Conversation, primary_key=True, on_delete=models.CASCADE, related_name="stored_state"
    )
    packed = models.BinaryField()

    def __str__(self) -> str:
        return f"base_state.json of {self.conversation_id}"

    @property
    def raw(self) -> bytes:
        return unpack(self.packed)


class Upload(models.Model):
    """Files sent from the Import page, imported in the background: the task's
    outcome, for the page that follows it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)  # not guessable
    names = models.JSONField(default=list)  # the files' names, as uploaded
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    task_id = models.CharField(max_length=64, blank=True)  # the background task importing them
    finished_at = models.DateTimeField(null=True, blank=True)
    results = models.JSONField(default=list)  # one {conversation_id, title, url, created, added, unchanged} each
    problems = models.JSONField(default=list)  # why nothing was imported, one line each
    run = models.CharField(max_length=200, blank=True)  # an evaluation output's run name, as given

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"upload of {', '.join(self.names)[:200]}"

    def get_absolute_url(self) -> str:
        return reverse("eventviewer:import-progress", args=[self.id])

    @property
    def folder(self) -> Path:
        """Where its files wait for the worker (a folder both must see)."""
        return Path(settings.EVENTVIEWER_UPLOAD_DIR) / str(self.id)

    def stored_name(self, number: int) -> str:
        """The name its ``number``th file is saved under (the sent name may be anything)."""
        return f"upload-{number}{Path(self.names[number]).suffix.lower()}"

    def paths(self) -> list[tuple[Path, str]]:
        """(saved file, the name it was sent under) for each file, as import_paths takes them."""
        return [(self.folder / self.stored_name(n), name) for n, name in enumerate(self.names)]


class ShareLink(models.Model):
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="share_links")
    token = models.CharField(max_length=64, unique=True, editable=False)
    leaf_event_id = models.CharField(max_length=255, blank=True)
    focus_event_id = models.CharField(max_length=255, blank=True)
    note = models.CharField(max_length=500, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    can_comment = models.BooleanField(default=False)  # the reviewer may comment, label and give a verdict

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"share link {self.token[:8]}… for {self.conversation_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self.token:
            self.token = secrets.token_urlsafe(32)  # 256 random bits
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("eventviewer:share", args=[self.token])

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    @property
    def is_expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()

    @property
    def is_active(self) -> bool:
        return not self.is_revoked and not self.is_expired


class Run(models.Model):
    """An evaluation run: one output file of a benchmark harness, its rows the instances."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=200, unique=True)
    source = models.CharField(max_length=1000, blank=True)  # the file it was imported from
    metadata = models.JSONField(default=dict, blank=True)  # the first row's, secrets masked at import
    imported_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-imported_at"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("eventviewer:run", args=[self.slug])

    @property
    def shown_metadata(self) -> Any:
        """The metadata as a reader sees it: masked again on the way out, so a run
        imported before a masking rule existed does not show what the rule hides."""
        return masking.masked(self.metadata)


def signed(
    event_model: type[Event], payload_model: type[EventPayload], conversation_id: int, outcome: str, error: str
) -> dict[str, str]:
    """An instance's first failure and pattern (its ``Instance.SIGNED`` fields): the first
    failing event in append order, its JSON read for the whole text of its error. The
    models are passed in so that the migration that adds these fields signs the rows
    already there with its own historical models."""
    events = event_model.objects.filter(conversation_id=conversation_id)
    first = events.exclude(failure="").order_by("seq").first()
    found = None
    if first is not None:
        packed = payload_model.objects.filter(pk=first.pk).values_list("packed", flat=True).first()
        card = kinds.card_for(orjson.loads(unpack(packed)) if packed is not None else {}, full=True)
        text = (card.output.text if card.output else "") or card.text or first.summary
        code = card.exit_code if isinstance(card.exit_code, int) and not isinstance(card.exit_code, bool) else None
        found = patterns.FirstFailure(first.event_id, first.failure, first.tool_name, text, code)
    last = events.filter(kind=kinds.ACTION).order_by("-seq").values_list("payload_kind", flat=True).first()
    return {
        "pattern": patterns.signature(outcome, found, last in patterns.FINISH_ACTIONS, error),
        "first_failure": found.event_id if found else "",
        "first_failure_kind": found.kind if found else "",
        "first_failure_tool": found.tool[:255] if found else "",
        "first_failure_text": patterns.error_line(found.text)[:300] if found else "",
    }


class Instance(models.Model):
    """One row of a run: the instance it ran and how it ended, beside its conversation."""

    conversation = models.OneToOneField(
        Conversation, primary_key=True, on_delete=models.CASCADE, related_name="instance"
    )
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="instances")
    instance_id = models.CharField(max_length=255)
    outcome = models.CharField(max_length=20, choices=list(runs.OUTCOME_LABELS.items()))
    test_result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    row = models.PositiveIntegerField(default=0)  # its line in the file
    # Counted at import, so the run page reads one row per instance.
    failures = models.PositiveIntegerField(default=0)  # events recording a failure (kinds.*_FAILURE)
    turns = models.PositiveIntegerField(default=0)  # assistant turns: LLM responses that made tool calls
    # What went wrong first (trajectory.patterns), found at import; null: not yet
    # (a row imported before patterns existed, signed when its run page is first read).
    pattern = models.CharField(max_length=patterns.SIGNATURE_CHARS, null=True, blank=True)  # noqa: DJ001
    first_failure = models.CharField(max_length=255, blank=True)  # its event id
    first_failure_kind = models.CharField(max_length=20, blank=True)
    first_failure_tool = models.CharField(max_length=255, blank=True)
    first_failure_text = models.CharField(max_length=300, blank=True)  # its error line
    SIGNED = ("pattern", "first_failure", "first_failure_kind", "first_failure_tool", "first_failure_text")
    # Where the review issue's labels and verdicts belong: columns beside these.

    class Meta:
        ordering = ["instance_id"]
        constraints = [
            # A run's page and its comparison look instances up by id.
            models.UniqueConstraint(fields=["run", "instance_id"], name="instance_per_run"),
        ]
        indexes = [
            # A run's page counts its patterns and filters its table by one.
            models.Index(fields=["run", "pattern"], name="instance_run_pattern"),
        ]

    def __str__(self) -> str:
        return f"{self.instance_id} in {self.run_id}"

    def sign(self) -> None:
        """Finds its first failure and pattern (the caller saves)."""
        for name, value in signed(Event, EventPayload, self.conversation_id, self.outcome, self.error).items():
            setattr(self, name, value)


COMMENT_MAX_LENGTH = 20_000  # characters of Markdown in one comment


class Label(models.Model):
    """A team-wide label for an event or a whole conversation, managed in the admin."""

    name = models.CharField(max_length=100, unique=True)
    colour = models.CharField(max_length=7, default="#6b7280")  # #rrggbb
    description = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Comment(models.Model):
    """A reviewer's comment pinned to an event of a conversation, remembering the branch
    (leaf) it was written on. Events are named by id, not by row, so a re-sync or a
    re-import (which may rewrite event rows) keeps every comment at its event."""

    uid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)  # the same comment in a zip
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="comments")
    event_id = models.CharField(max_length=255)
    leaf_event_id = models.CharField(max_length=255, blank=True)
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="replies")
    body = models.TextField(blank=True)  # Markdown; empty for a label without words
    # Who wrote it, as shown: a user's name, or "name (via share link: note)".
    author = models.CharField(max_length=700)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    share = models.ForeignKey(ShareLink, null=True, blank=True, on_delete=models.SET_NULL, related_name="comments")
    labels = models.ManyToManyField(Label, blank=True, related_name="comments")
    resolved = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            # A conversation's threads, in the order they were written (its page, the API).
            models.Index(fields=["conversation", "created_at"], name="comment_conversation_idx"),
            # The rate limit: comments a link wrote in the last minute.
            models.Index(fields=["share", "created_at"], name="comment_share_recent_idx"),
            # The rate limit: comments a user wrote in the last minute.
            models.Index(fields=["user", "created_at"], name="comment_user_recent_idx"),
        ]
        constraints = [
            # Every comment says who wrote it, even after its user or link is gone.
            models.CheckConstraint(condition=~models.Q(author=""), name="comment_has_author"),
        ]

    def __str__(self) -> str:
        return f"comment by {self.author} on {self.event_id}"


class ConversationLabel(models.Model):
    """A label on a whole conversation."""

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="conversation_labels")
    label = models.ForeignKey(Label, on_delete=models.CASCADE, related_name="conversation_labels")
    author = models.CharField(max_length=700)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["label__name"]
        constraints = [
            # A label is on a conversation once; the list's ?label= filter joins on it.
            models.UniqueConstraint(fields=["conversation", "label"], name="conversation_label_once"),
        ]

    def __str__(self) -> str:
        return f"{self.label} on {self.conversation_id}"


class Verdict(models.Model):
    """One reviewer's verdict on a conversation: pass, fail or unsure, with a note."""

    class Outcome(models.TextChoices):
        PASS = "pass", "pass"
        FAIL = "fail", "fail"
        UNSURE = "unsure", "unsure"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="verdicts")
    reviewer = models.CharField(max_length=700)  # as a comment's author: the reviewer's identity
    outcome = models.CharField(max_length=10, choices=Outcome.choices)
    note = models.TextField(blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    share = models.ForeignKey(ShareLink, null=True, blank=True, on_delete=models.SET_NULL, related_name="verdicts")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            # One verdict per reviewer per conversation: giving another replaces it.
            models.UniqueConstraint(fields=["conversation", "reviewer"], name="verdict_per_reviewer"),
        ]

    def __str__(self) -> str:
        return f"{self.outcome} by {self.reviewer} on {self.conversation_id}"
