"""Downloads: a whole conversation as the SDK's folder (zipped), and one branch as its
events, as the model's messages, or as a Markdown review document.

Everything streams: events are read a few hundred at a time, in order, and written out
as they come, so a long branch or a big conversation never sits in memory whole."""

from __future__ import annotations

import re
import uuid
import zipfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from itertools import islice
from typing import Any

import orjson
from django.core.exceptions import BadRequest
from django.db.models import Q, QuerySet
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_safe

from eventviewer import fulltext
from eventviewer.forms import ConversationExportForm, ExportForm, RawForm, RunExportForm, RunReviewsForm
from eventviewer.imports import reviews
from eventviewer.imports.packing import unpack
from eventviewer.lookups import checked, get_conversation, get_leaf, valid
from eventviewer.models import PAYLOAD_CHUNK, Conversation, ConversationState, EventPayload, Instance, Run
from eventviewer.review_export import review_lines, review_rows
from eventviewer.scope import MAX_NESTING, PageScope, SharedScope
from eventviewer.trajectory import export, kinds, markdown, masking
from eventviewer.trajectory.events import Light, one_line
from eventviewer.trajectory.model_view import SUMMARY_SUFFIX
from eventviewer.trajectory.projection import Turn
from eventviewer.trajectory.reading import Reading
from eventviewer.trajectory.reviews import Note, Written, on_branch, threads
from eventviewer.views import HtmxHttpRequest
from eventviewer.views.conversations import listed_in_order, runs_named
from eventviewer.views.share import shared_view
from eventviewer.views.turns import MODEL


def stored_base_state(conversation: Conversation) -> str:
    """The conversation's base_state.json as imported ("" when it had none): kept apart
    from the conversation (ConversationState), read only for downloads."""
    packed = ConversationState.objects.filter(conversation=conversation).values_list("packed", flat=True).first()
    return unpack(packed).decode() if packed is not None else ""


def _download(chunks: Iterable[bytes], filename: str, content_type: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(chunks, content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


def _name(text: str) -> str:
    """A file-name-safe rendering of an id."""
    return re.sub(r"[^A-Za-z0-9_-]", "", text)[:36] or "event"


# --- the conversation as the SDK keeps it ------------------------------------------------------


class _Sink:
    """A write-only file whose content a generator takes away as it grows: zipfile
    writes into it, the response streams out of it."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.chunks.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:  # zipfile's writable file has one (it closes only a file it opened)
        pass

    def take(self) -> bytes:
        out = b"".join(self.chunks)
        self.chunks.clear()
        return out


def sdk_files(
    conversation: Conversation, folder: str, depth: int = 0, raw: bool = False, with_reviews: bool = True
) -> Iterator[tuple[str, bytes]]:
    """The conversation's folder as the SDK writes it, file by file: ``base_state.json``
    (its secrets masked unless ``raw``), ``events/event-NNNNN-<id>.json`` with each event's
    bytes as imported, and each sub-agent's folder under ``subagents/<id>/``."""
    state = conversation.base_state_file()
    if not state:  # imported from a JSON or JSONL file: no state to give back but the id and HEAD
        minimal = {"id": str(uuid.UUID(conversation.conversation_id))}
        head = conversation.skeleton.get("head")
        if head:
            minimal["leaf_event_id"] = head
        state = orjson.dumps(minimal)
    yield f"{folder}/base_state.json", state if raw else masking.masked_json(state)
    if with_reviews and reviews.has_reviews(conversation):  # eventviewer's own file, read back by its import
        yield f"{folder}/{reviews.NAME}", reviews.reviews_file(conversation)
    last = -1
    while True:
        rows = list(
            conversation.events.filter(seq__gt=last)
            .order_by("seq")
            .values_list("seq", "event_id", "payload__packed")[:PAYLOAD_CHUNK]
        )
        if not rows:
            break
        for seq, event_id, packed in rows:
            yield f"{folder}/events/event-{seq:05d}-{event_id}.json", unpack(packed)
        last = rows[-1][0]
    if depth < MAX_NESTING:
        for child in conversation.subagents.order_by("conversation_id"):
            yield from sdk_files(child, f"{folder}/subagents/{child.conversation_id}", depth + 1, raw, with_reviews)


def _zip(files: Iterable[tuple[str, bytes]]) -> Iterator[bytes]:
    sink = _Sink()
    moment = datetime.now().timetuple()[:6]
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, content in files:
            info = zipfile.ZipInfo(name, date_time=moment)
            archive.writestr(info, content, zipfile.ZIP_DEFLATED)
            yield sink.take()
    yield sink.take()


def _unwritable_id(conversation: Conversation, depth: int = 0) -> str | None:
    """An event id that cannot be a file name (it holds a slash), here or in a sub-agent."""
    found = conversation.events.filter(Q(event_id__contains="/") | Q(event_id__contains="\\"))
    event_id = found.values_list("event_id", flat=True).first()
    if event_id is not None or depth >= MAX_NESTING:
        return event_id
    for child in conversation.subagents.all():
        if (event_id := _unwritable_id(child, depth + 1)) is not None:
            return event_id
    return None


def conversation_zip(request: HtmxHttpRequest, scope: PageScope, raw: bool = False) -> StreamingHttpResponse:
    conversation = scope.conversation
    bad = _unwritable_id(conversation)
    if bad is not None:
        raise BadRequest(
            f"Event {bad!r} has an id that cannot be a file name, so this conversation cannot be written as "
            "the SDK's folder; export its branches as JSON events instead."
        )
    folder = conversation.conversation_id
    # A read-only link's reviewer cannot read the comments: its zip leaves them out.
    with_reviews = scope.share is None or scope.share.can_comment
    files = sdk_files(conversation, folder, raw=raw, with_reviews=with_reviews)
    return _download(_zip(files), f"{folder}.zip", "application/zip")


@require_safe
def export_zip(request: HtmxHttpRequest, conversation_id: str) -> StreamingHttpResponse:
    """The owner's zip: base_state.json masked unless ``?raw=1`` (a share link's never is)."""
    raw = valid(RawForm, request.GET)["raw"]
    return conversation_zip(request, PageScope(get_conversation(conversation_id)), raw=raw)


# --- one branch ---------------------------------------------------------------------------------


def _payloads(conversation: Conversation, events: list[Light]) -> Iterator[tuple[Light, bytes]]:
    """The events with their stored bytes, in their order, a chunk at a time."""
    for start in range(0, len(events), PAYLOAD_CHUNK):
        chunk = events[start : start + PAYLOAD_CHUNK]
        packed = dict(EventPayload.objects.filter(pk__in=[e.pk for e in chunk]).values_list("pk", "packed"))
        for event in chunk:
            yield event, unpack(packed[event.pk])


def _events_json(conversation: Conversation, reading: Reading) -> Iterator[bytes]:
    yield b"["
    for i, (_, raw) in enumerate(_payloads(conversation, list(reading.path))):
        yield (b",\n" if i else b"\n") + raw
    yield b"\n]\n"


def _messages_json(conversation: Conversation, reading: Reading, view: str) -> Iterator[bytes]:
    if view == MODEL:
        events, messages = reading.view.events, reading.view.messages
    else:
        events, messages = list(reading.path), reading.messages
    by_id = {e.event_id: e for e in events}
    condensation = {e.event_id: e for e in reading.path if e.kind == kinds.CONDENSATION}

    def bodies() -> Iterator[dict[str, Any]]:
        """Every message's events' JSON in order, read a chunk of events at a time: one
        message can be a whole branch (a user's messages are sent as one)."""
        ids = (i for m in messages for i in m.event_ids)
        while chunk := list(islice(ids, PAYLOAD_CHUNK // 4)):
            pks = {by_id[i].pk for i in chunk if by_id[i].pk} | {
                condensation[i.removesuffix(SUMMARY_SUFFIX)].pk for i in chunk if i.endswith(SUMMARY_SUFFIX)
            }
            data = conversation.payloads(pks)
            yield from (_event_data(by_id[i], data, condensation) for i in chunk)

    stream = bodies()
    yield b"["
    for i, message in enumerate(messages):
        own = islice(stream, len(message.event_ids))
        yield b",\n" if i else b"\n"
        yield from export.chat_message_json(message, own)
        deque(own, maxlen=0)  # what the message did not need (a tool message reads one event)
    yield b"\n]\n"


def _event_data(event: Light, data: dict[int, Any], condensation: dict[str, Light]) -> dict[str, Any]:
    if event.kind == kinds.CONDENSATION_SUMMARY:  # the user message a condensation's summary became
        written = data.get(condensation[event.event_id.removesuffix(SUMMARY_SUFFIX)].pk, {})
        return {"kind": kinds.CONDENSATION_SUMMARY, "summary": written.get("summary")}
    written_by_pk: dict[str, Any] = data.get(event.pk, {})
    return written_by_pk


def _markdown(request: HtmxHttpRequest, scope: PageScope, reading: Reading) -> Iterator[bytes]:
    conversation = scope.conversation
    leaf = reading.path[-1]
    branch_url = request.build_absolute_uri(scope.url(leaf=leaf.event_id))

    def link(event_id: str) -> str:
        return markdown.destination(request.build_absolute_uri(scope.at_url(leaf.event_id, event_id)))

    title = conversation.title or conversation.conversation_id
    usage = conversation.usage_of(reading.path)
    figures = [
        f"{len(reading.path):,} events",
        f"{len(reading.turns):,} turns",
        f"{reading.tool_call_count:,} tool calls",
    ]
    if usage is not None and usage.prompt_tokens is not None:
        figures.append(f"{usage.prompt_tokens:,} prompt and {usage.completion_tokens or 0:,} completion tokens")
    if usage is not None and usage.cost is not None:
        figures.append(f"${usage.cost:,.4f}")
    head = [
        f"# {markdown.escape(title)}\n\n",
        f"- Conversation: `{conversation.conversation_id}`"
        + (f", status {markdown.escape(conversation.execution_status)}" if conversation.execution_status else "")
        + "\n",
        f"- Branch: to {markdown.escape(leaf.kind)} {markdown.escape(leaf.event_id)}"
        + (" (HEAD)" if leaf.pk == conversation.head_id else "")
        + f", outcome **{kinds.outcome(leaf)}**\n",
        f"- {', '.join(figures)}\n",
        f"- Read it in eventviewer: <{markdown.destination(branch_url)}>\n\n",
    ]
    yield "".join(head).encode()
    yield _problems(reading, link).encode()
    yield b"## Turns\n\n"
    result_for = reading.pairing.result_for
    threads = _threads_on(scope, reading) if scope.share is None or scope.share.can_comment else {}

    def ids_of(turn: Turn) -> list[str]:
        ids = [e.event_id for e in turn.events]
        return ids + [result_for[i] for i in ids if i in result_for]

    shown = {result_for[e.event_id] for t in reading.turns if t.is_batch for e in t.events if e.event_id in result_for}
    turns = [t for t in reading.turns if not (len(t.events) == 1 and t.events[0].event_id in shown)]
    by_id = {e.event_id: e for e in reading.path}
    step = PAYLOAD_CHUNK // 4
    for start in range(0, len(turns), step):
        chunk = turns[start : start + step]
        ids = [e.event_id for t in chunk for e in t.events]
        ids += [result_for[i] for i in ids if i in result_for]
        loaded = conversation.payloads(by_id[i].pk for i in ids)
        data = {i: loaded.get(by_id[i].pk, {}) for i in ids}
        for number, turn in enumerate(chunk, start=start + 1):
            yield export.review_turn(number, turn, data, result_for, link).encode()
            if threads:
                at = [t for i in ids_of(turn) for t in threads.get(i, [])]
                if at:
                    yield export.comment_threads(at).encode()


def _threads_on(scope: PageScope, reading: Reading) -> dict[str, list[tuple[Written, list[Written]]]]:
    """The review threads shown on this branch, by event, as the export writes them."""
    comments = {c.pk: c for c in scope.conversation.comments.prefetch_related("labels")}
    notes = (Note(c.pk, c.event_id, c.leaf_event_id, c.parent_id, c.resolved) for c in comments.values())

    def written(note: Note) -> Written:
        c = comments[note.id]
        when = c.created_at.strftime("%Y-%m-%d %H:%M UTC")
        return Written(c.author, when, c.body, tuple(label.name for label in c.labels.all()), c.resolved)

    placed = on_branch(threads(notes), reading.position, reading.path[-1].event_id)
    return {
        event_id: [(written(p.thread.root), [written(r) for r in p.thread.replies]) for p in found]
        for event_id, found in placed.items()
    }


def _problems(reading: Reading, link: Callable[[str], str]) -> str:
    pairing = reading.pairing
    lines = [
        f"- pending: {markdown.escape(e)} has no result on this branch ([event]({link(e)}))" for e in pairing.pending
    ]
    lines += [
        f"- mismatched: {markdown.escape(eid)}: {markdown.escape(m.reason)} ([event]({link(eid)}))"
        for eid, m in pairing.mismatched.items()
    ]
    lines += [
        f"- {markdown.escape(e.failure.replace('_', ' '))}: {markdown.escape(one_line(e.summary, 120) or e.kind)} "
        f"([event]({link(e.event_id)}))"
        for e in reading.path
        if e.failure
    ]
    if not lines:
        return "## Problems\n\nNone: no pending actions, no mismatched results, no failures recorded.\n\n"
    return "## Problems\n\n" + "\n".join(lines) + "\n\n"


def branch_export(request: HtmxHttpRequest, scope: PageScope) -> StreamingHttpResponse:
    params = valid(ExportForm, request.GET)
    scope = scope.viewing(params["view"])
    conversation = scope.conversation
    leaf = get_leaf(conversation, params["leaf"])
    if leaf is None:
        raise BadRequest("This conversation has no HEAD: name the branch to export with ?leaf=.")
    reading = conversation.read_path(leaf)
    name = f"{conversation.conversation_id}-{_name(leaf.event_id)[:13]}"
    if params["format"] == "events":
        return _download(_events_json(conversation, reading), f"{name}.events.json", "application/json")
    if params["format"] == "messages":
        chunks = _messages_json(conversation, reading, params["view"] or "full")
        return _download(chunks, f"{name}.messages.json", "application/json")
    return _download(_markdown(request, scope, reading), f"{name}.md", "text/markdown; charset=utf-8")


@require_safe
def export_branch(request: HtmxHttpRequest, conversation_id: str) -> StreamingHttpResponse:
    return branch_export(request, PageScope(get_conversation(conversation_id)))


@require_safe
@shared_view
def shared_export_zip(request: HtmxHttpRequest, scope: SharedScope) -> StreamingHttpResponse:
    return conversation_zip(request, scope)


@require_safe
@shared_view
def shared_export(request: HtmxHttpRequest, scope: SharedScope) -> StreamingHttpResponse:
    return branch_export(request, scope)


# --- a run, one line per instance ---------------------------------------------------------------


RUN_LINE_FIELDS = ("instance_id", "outcome", "test_result", "pattern", "turns")


def _run_lines(run: Run, what: str) -> Iterator[bytes]:
    """One JSON line per instance of ``run``, read one conversation at a time (the rows
    themselves by ``iterator``), so memory holds one conversation whatever the run's size."""
    rows = (
        run.instances.filter(conversation__deleting=False)
        .select_related("conversation")
        .defer("conversation__skeleton")  # read with its conversation, if at all: it can be megabytes
        .order_by("instance_id")
        .iterator(chunk_size=50)
    )
    for instance in rows:
        yield export_line(instance.conversation, instance, run.slug, what)


def export_line(conversation: Conversation, instance: Instance | None, run: str | None, what: str) -> bytes:
    """One conversation as a JSON line: its instance's fields (null outside a run), and for
    ``messages`` or ``events`` its HEAD branch as the model's messages or verbatim events."""
    line: dict[str, Any] = {
        "instance_id": instance.instance_id if instance else None,
        "run": run,
        "conversation_id": conversation.conversation_id,
        "outcome": instance.outcome if instance else None,
        "test_result": instance.test_result if instance else None,
        "pattern": (instance.pattern or None) if instance else None,
        "turns": instance.turns if instance else None,
        "tokens": (conversation.prompt_tokens or 0) + (conversation.completion_tokens or 0),
        "cost": conversation.cost,
        "labels": [],  # the review issue's labels go here
    }
    if what != RUN_SUMMARY:
        leaf = conversation.head
        reading = conversation.read_path(leaf) if leaf is not None else None
        if what == "events":
            line["events"] = (
                [orjson.loads(raw) for _, raw in _payloads(conversation, list(reading.path))] if reading else []
            )
        else:
            line["messages"] = orjson.loads(b"".join(_messages_json(conversation, reading, MODEL))) if reading else []
    return orjson.dumps(line) + b"\n"


RUN_SUMMARY = "summary"


@require_safe
def run_export(request: HtmxHttpRequest, slug: str) -> StreamingHttpResponse:
    """``/runs/<slug>/export.jsonl?format=summary|messages|events``: streamed, one line an instance."""
    run = get_object_or_404(Run, slug=slug)
    what = valid(RunExportForm, request.GET)["format"]
    return _download(_run_lines(run, what), f"{_name(run.slug)}.{what}.jsonl", "application/x-ndjson")


REVIEW_TYPES = {"jsonl": "application/x-ndjson", "csv": "text/csv; charset=utf-8"}


@require_safe
def run_reviews(request: HtmxHttpRequest, slug: str) -> StreamingHttpResponse:
    """``/runs/<slug>/export-reviews/?format=jsonl|csv``: every comment, label and verdict on
    the run's instances, the rows ``manage.py export_reviews --run`` writes, streamed."""
    run = get_object_or_404(Run, slug=slug)
    what = valid(RunReviewsForm, request.GET)["format"]
    lines = (line.encode() for line in review_lines(review_rows(run), what))
    return _download(lines, f"{_name(run.slug)}.reviews.{what}", REVIEW_TYPES[what])


def _list_lines(found: QuerySet[Conversation], what: str, pks: list[int] | None = None) -> Iterator[bytes]:
    """A line per conversation: of ``found`` in its order, or of ``pks`` in theirs. A branch
    format reads few conversations at a time: each brings its skeleton (every event's id)."""
    size = 200 if what == RUN_SUMMARY else 10
    if pks is None:
        chunks: Iterable[Iterable[Conversation]] = [found.iterator(chunk_size=size)]
    else:
        chunks = (_in_order(pks[i : i + size], summary=what == RUN_SUMMARY) for i in range(0, len(pks), size))
    for chunk in chunks:
        for conversation in chunk:
            instance = getattr(conversation, "instance", None)
            yield export_line(conversation, instance, instance.run.slug if instance else None, what)


def _in_order(pks: list[int], summary: bool) -> list[Conversation]:
    found = Conversation.objects.filter(pk__in=pks).select_related("instance__run")
    by_pk = {c.pk: c for c in (found.defer("skeleton") if summary else found)}
    return [by_pk[pk] for pk in pks if pk in by_pk]


@require_safe
def list_export(request: HtmxHttpRequest) -> StreamingHttpResponse:
    """``/export.jsonl?<the list's query>&format=summary|messages|events``: the conversations
    the list shows, in its order, streamed one line each."""
    form = checked(ConversationExportForm(request.GET))
    params = form.cleaned_data
    runs_named(params["run"])
    what = params["format"]
    found = listed_in_order(form).select_related("instance__run")
    if what == RUN_SUMMARY:
        found = found.defer("skeleton")  # a summary line reads no branch
    pks = None
    if params["q"].strip():
        # The words are searched now, within the search's budget, not while the file streams.
        with fulltext.budget():
            pks = list(found.values_list("pk", flat=True))
    return _download(_list_lines(found, what, pks), f"conversations.{what}.jsonl", "application/x-ndjson")
