"""The other places OpenHands trajectories live, read as conversation sources:

- an evaluation output (``output.jsonl``: one row per instance, its ``history`` the
  run's SDK events or V0 events), each row a conversation of a run;
- a V0 trajectory file (a JSON array of V0 events, as OpenHands' "export trajectory"
  writes it);
- the app server's layout, ``v1_conversations/<conversation-hex>/<event-hex>.json``
  (and ``events_batch/`` files), which has no base_state.json.
"""

from __future__ import annotations

import io
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import orjson
from django.conf import settings
from django.utils.text import slugify

from eventviewer.imports.jsontext import ArrayItems, BadItem, NotAnArray, parse_json, too_big_item
from eventviewer.imports.sources import (
    UNREADABLE,
    ConversationSource,
    Files,
    RawEvent,
    SourceError,
    State,
    _json_array_events,
    _read_json,
    _too_big,
)
from eventviewer.trajectory import masking, runs, v0
from eventviewer.trajectory.ids import normalize_conversation_id

V1_CONVERSATIONS = "v1_conversations"
EVENTS_BATCH = "events_batch"


@dataclass
class Row:
    """What a run keeps of one evaluation row besides its events."""

    run: str  # the run's name
    slug: str  # names the run in URLs and its instances' ids: names differing in case or punctuation are one run
    source: str  # the file, as labelled
    number: int  # its line in the file
    instance_id: str
    outcome: str
    test_result: Any
    error: str
    metadata: Any  # secrets masked
    extra: dict[str, Any] = field(default_factory=dict)


def first_line(files: Files, name: str) -> Any:
    """The first JSON line of a .jsonl file, parsed (None when it is not JSON, or the file
    is over the size limit: reading it as events then says so)."""
    try:
        if files.size(name) > settings.EVENTVIEWER_MAX_FILE_BYTES:
            return None
        with files.open(name) as f:
            for line in iter(lambda: f.readline(settings.EVENTVIEWER_MAX_FILE_BYTES + 1), b""):
                if line.strip():
                    # A row with a repeated key or nested too deep is still a row: reading it names the problem.
                    return parse_json(line.strip())[0]
    except UNREADABLE:
        return None
    return None


def evaluation_sources(files: Files, name: str, label: str, run: str | None) -> list[ConversationSource]:
    """One source per row of an evaluation output; a row that cannot be read is a
    source whose problems say why (so the import refuses, naming the row)."""
    path = PurePosixPath(label)
    run_name = run or runs.run_name(path.stem, path.parent.name)
    cap = settings.EVENTVIEWER_MAX_FILE_BYTES
    if files.size(name) > cap:
        raise SourceError(f"{label}: {_too_big(files.size(name), cap, 'EVENTVIEWER_MAX_FILE_BYTES')}")
    sources: list[ConversationSource] = []
    seen: dict[str, int] = {}
    offset = 0
    with files.open(name) as f:
        for number, line in enumerate(iter(lambda: f.readline(cap + 1), b""), start=1):
            start, offset = offset, offset + len(line)
            if not line.strip():
                continue
            where = f"{label}: row {number}"
            source = ConversationSource(conversation_id="", where=where)
            sources.append(source)
            data, _, error = parse_json(line.strip())
            del line
            if error:
                source.problems.append(f"{where}: {error}")
                continue
            problem = _row_problem(data)
            if problem:
                source.problems.append(f"{where}: {problem}")
                continue
            instance_id = data["instance_id"]
            source.where = where = f"{label}: row {number} (instance {instance_id})"
            if instance_id in seen:
                source.problems.append(f"{where}: instance {instance_id} is also row {seen[instance_id]}")
                continue
            seen[instance_id] = number
            _fill_row_source(source, data, run_name, label, number)
            source._events = _row_reader(files, name, start, offset - start, where)
    if not sources:
        raise SourceError(f"{label}: holds no rows")
    return sources


def _row_problem(data: Any) -> str:
    if not isinstance(data, dict):
        return "a row must be a JSON object"
    instance_id = data.get("instance_id")
    if isinstance(instance_id, int) and not isinstance(instance_id, bool):
        data["instance_id"] = instance_id = str(instance_id)
    if not isinstance(instance_id, str) or not instance_id.strip() or len(instance_id) > 255:
        return '"instance_id" must be a non-empty string of at most 255 characters'
    if not isinstance(data.get("history"), list):
        return '"history" must be an array of events'
    return ""


def _fill_row_source(source: ConversationSource, data: dict[str, Any], run_name: str, label: str, number: int) -> None:
    instance_id = data["instance_id"]
    history = data["history"]
    error = data.get("error")
    metadata = data.get("metadata")
    metrics = data.get("metrics")
    if not isinstance(metrics, dict) and v0.is_v0_history(history):
        metrics = v0.metrics_of(history)
    slug = run_slug(run_name)
    source.conversation_id = uuid.uuid5(uuid.NAMESPACE_URL, f"eventviewer:run:{slug}:{instance_id}").hex
    source.expected = len(history) + (_needs_instruction(data) is not None)
    source.row = Row(
        run=run_name,
        slug=slug,
        source=label,
        number=number,
        instance_id=instance_id,
        outcome=runs.outcome(data.get("test_result"), error, len(history)),
        test_result=runs.storable(data.get("test_result")) if data.get("test_result") is not None else {},
        error=error.replace("\x00", "") if isinstance(error, str) else "",
        metadata=runs.storable(masking.masked(metadata)) if isinstance(metadata, dict) else {},
    )
    state: dict[str, Any] = {"agent": {"llm": {"model": runs.model_of(metadata, metrics)}}}
    if isinstance(metrics, dict):
        state["stats"] = {"usage_to_metrics": {"agent": metrics}}
    # Figures only: no base_state.json is stored for a row (raw stays empty).
    source._state = lambda: State(state, b"")


def run_slug(name: str) -> str:
    return slugify(name)[:200] or "run"


def _needs_instruction(data: dict[str, Any]) -> dict[str, Any] | None:
    """The row's instruction as a first user message, when its history holds none."""
    instruction = data.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        return None
    history = data["history"]
    for event in history:
        if not isinstance(event, dict):
            continue
        if event.get("kind") == "MessageEvent" and event.get("source") == "user":
            return None
        if event.get("action") == "message" and event.get("source") == "user":  # V0
            return None
    first = next((e for e in history if isinstance(e, dict)), {})
    return {
        "kind": "MessageEvent",
        "id": f"instruction-{data['instance_id']}"[:255],
        "timestamp": first.get("timestamp") if isinstance(first.get("timestamp"), str) else "",
        "source": "user",
        "llm_message": {"role": "user", "content": [{"type": "text", "text": instruction}]},
    }


def _row_reader(files: Files, name: str, start: int, length: int, where: str) -> Callable[[], Iterator[RawEvent]]:
    def read() -> Iterator[RawEvent]:
        try:
            with files.open(name) as f:
                f.seek(start)
                line = f.read(length).strip()
        except UNREADABLE as e:
            yield RawEvent(0, where, None, b"", f"cannot be read ({e})")
            return
        data, _, error = parse_json(line)
        if error or _row_problem(data):  # it changed since it was found
            yield RawEvent(0, where, None, b"", error or _row_problem(data))
            return
        history = data["history"]
        instruction = _needs_instruction(data)
        seq = 0
        if instruction is not None:
            yield RawEvent(0, f"{where}, instruction", instruction, orjson.dumps(instruction))
            seq = 1
        if v0.is_v0_history(history):
            del line
            for index, event in enumerate(v0.convert_all(history)):
                yield RawEvent(seq + index, f"{where}, history[{index}]", event, orjson.dumps(event))
        else:
            del data, history
            yield from _history_items(line, seq, where)

    return read


def _history_items(line: bytes, seq: int, where: str) -> Iterator[RawEvent]:
    """The SDK events of a row's history as the bytes the file holds, read as a JSON
    array file's items are (the row's other members may be bigger than an event)."""
    cap = settings.EVENTVIEWER_MAX_EVENT_BYTES
    index = 0
    try:
        for item in ArrayItems(io.BytesIO(line), len(line), keys=("history",)).items():
            item_where = f"{where}, history[{index}]"
            if len(item) > cap:
                yield RawEvent(seq + index, item_where, None, b"", too_big_item(cap))
            else:
                data, raw, error = parse_json(item)
                yield RawEvent(seq + index, item_where, data, raw, error)
            index += 1
    except (NotAnArray, BadItem) as e:  # the row parsed whole: never, unless it changed since
        yield RawEvent(seq + index, where, None, b"", str(e) or '"history" must be an array of events')


def v0_trajectory(source: ConversationSource, read: Callable[[], Iterator[RawEvent]]) -> None:
    """Make a JSON-array source of V0 events read as SDK events."""

    def events() -> Iterator[RawEvent]:
        converter = v0.Converter()
        for event in read():
            if event.error:
                yield event
                continue
            data = converter.convert(event.data)
            yield event._replace(data=data, raw=orjson.dumps(data) if data is not event.data else event.raw)

    def state() -> State:
        metrics = v0.metrics_of(e.data for e in read() if not e.error)
        if metrics is None:
            return State()
        model = metrics.get("accumulated_token_usage", {}).get("model") if isinstance(metrics, dict) else ""
        data = {"agent": {"llm": {"model": model if isinstance(model, str) else ""}}}
        data["stats"] = {"usage_to_metrics": {"agent": metrics}}
        return State(data, b"")

    source._events = events
    source._state = state


def app_server_sources(files: Files, names: list[str], label: str) -> list[ConversationSource]:
    """Every ``v1_conversations/<hex>/`` conversation among ``names``, whether PATH holds
    that folder, is it, or is one conversation's folder in it."""
    above = PurePosixPath(label).parts[-2:]  # PATH's own place: it may be the layout's folder
    groups: dict[str, list[str]] = {}
    anywhere = V1_CONVERSATIONS in above
    for name in names:
        if not anywhere and V1_CONVERSATIONS not in name:
            continue  # most names (100,000 event files), at a glance
        parts = [*above, *name.split("/")]
        if V1_CONVERSATIONS not in parts[:-2] or not name.endswith(".json"):
            continue
        at = len(parts) - 1 - parts[::-1].index(V1_CONVERSATIONS)
        rest = parts[at + 1 :]
        if len(rest) == 2 or (len(rest) == 3 and rest[1] == EVENTS_BATCH):
            folder = "/".join(parts[len(above) : at + 2])  # relative to PATH; "" when PATH is it
            groups.setdefault(f"{folder}|{rest[0]}", []).append(name)
    return [
        _app_server_source(files, folder, hex_id, members, label)
        for key, members in sorted(groups.items())
        for folder, hex_id in [key.split("|")]
    ]


def _app_server_source(files: Files, folder: str, hex_id: str, members: list[str], label: str) -> ConversationSource:
    where = f"{label}/{folder}" if folder else label
    source = ConversationSource(conversation_id=normalize_conversation_id(hex_id) or "", where=where)
    source.files = len(members)
    if not source.conversation_id:
        source.problems.append(f"{where}: the folder name is not a 32-hex conversation id")
    cap = settings.EVENTVIEWER_MAX_EVENT_BYTES

    def events() -> Iterator[RawEvent]:
        # The app server reads a conversation's events back sorted by timestamp.
        found: list[tuple[str, str, int, RawEvent]] = []
        for name in members:
            member_where = f"{label}/{name}"
            read: Iterable[RawEvent]
            if f"/{EVENTS_BATCH}/" in f"/{name}" and not _holds_an_object(files, name):
                read = _json_array_events(files, name, member_where)
            else:
                read = [_app_server_event(files, name, member_where, cap)]
            for index, event in enumerate(read):
                stamp = event.data.get("timestamp") if isinstance(event.data, dict) else ""
                found.append((stamp if isinstance(stamp, str) else "", name, index, event))
        found.sort(key=lambda f: f[:3])
        for seq, (*_, event) in enumerate(found):
            yield event._replace(seq=seq)

    source._events = events
    return source


def _holds_an_object(files: Files, name: str) -> bool:
    """Whether a batch file holds one event rather than an array of them."""
    try:
        with files.open(name) as f:
            return f.read(4096).lstrip()[:1] == b"{"
    except UNREADABLE:
        return False  # reading it as an array says why


def _app_server_event(files: Files, name: str, where: str, cap: int) -> RawEvent:
    """One event file, named by its id's hex (a batch file holding one event is not)."""
    data, raw, error = _read_json(files, name, cap, "EVENTVIEWER_MAX_EVENT_BYTES")
    stem = PurePosixPath(name).stem
    batch = f"/{EVENTS_BATCH}/" in f"/{name}"
    if not error and not batch and isinstance(data, dict) and isinstance(data.get("id"), str):
        if data["id"].replace("-", "") != stem:
            error = f"the file name says event {stem} but the file holds {data['id']!r}"
    return RawEvent(0, where, data, raw, error)
