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
from collections import Counter
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
    Limits,
    RawEvent,
    SourceError,
    State,
    _json_array_events,
    _read_json,
    _too_big,
    derived_id,
)
from eventviewer.trajectory import masking, runs, v0
from eventviewer.trajectory.ids import normalize_conversation_id

V1_CONVERSATIONS = "v1_conversations"
EVENTS_BATCH = "events_batch"


@dataclass
class RunRow:
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


def is_row_like(data: Any) -> bool:
    """Whether a JSON line is meant as a row (of some run) rather than an event, even one
    that cannot be read: reading it as a row then names the fields it lacks."""
    return isinstance(data, dict) and "kind" not in data and any(k in data for k in ("instance_id", "history", "issue"))


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
    """Why the row cannot be read, or "" (a resolver row then has its instance id from
    its issue, and a legacy V0 history the later shape: the rest reads them as any row)."""
    if not isinstance(data, dict):
        return "a row must be a JSON object"
    if "instance_id" not in data and "issue" in data and "history" in data:
        resolved = runs.resolver_instance(data["issue"])
        if resolved is None:
            return 'a resolver output\'s "issue" must have "owner", "repo" (strings) and "number" (an integer)'
        data["instance_id"] = resolved
    if "instance_id" not in data or "history" not in data:
        missing = [f'"{k}"' for k in runs.ROW_FIELDS if k not in data and not (k == "instance_id" and "issue" in data)]
        has = ", ".join(f'"{k}"' for k in list(data)[:12]) or "no fields"
        return (
            f"not a row eventviewer can read: it has {has}; missing {' and '.join(missing)} "
            '(an evaluation output\'s row has "instance_id" and "history", a resolver output\'s "issue" and "history")'
        )
    instance_id = data.get("instance_id")
    if isinstance(instance_id, int) and not isinstance(instance_id, bool):
        data["instance_id"] = instance_id = str(instance_id)
    if not isinstance(instance_id, str) or not instance_id.strip() or len(instance_id) > 255:
        return '"instance_id" must be a non-empty string of at most 255 characters'
    if not isinstance(data.get("history"), list):
        return '"history" must be an array of events'
    return ""


def _verdict(data: dict[str, Any]) -> Any:
    """The row's test result: ``test_result``, or a resolver's own verdict (``success``
    and its explanation)."""
    if data.get("test_result") is not None or "issue" not in data:
        return data.get("test_result")
    return {k: data[k] for k in runs.RESOLVER_VERDICT if k in data} or None


def _fill_row_source(source: ConversationSource, data: dict[str, Any], run_name: str, label: str, number: int) -> None:
    instance_id = data["instance_id"]
    history = data["history"]
    error = data.get("error")
    metadata = data.get("metadata")
    metrics = data.get("metrics")
    test_result = _verdict(data)
    if not isinstance(metrics, dict) and v0.is_v0_history(history):
        metrics = v0.metrics_of(history)
    slug = run_slug(run_name)
    source.conversation_id = uuid.uuid5(uuid.NAMESPACE_URL, f"eventviewer:run:{slug}:{instance_id}").hex
    source.expected = len(history) + (_needs_instruction(data) is not None)
    source.row = RunRow(
        run=run_name,
        slug=slug,
        source=label,
        number=number,
        instance_id=instance_id,
        outcome=runs.outcome(test_result, error, len(history)),
        test_result=runs.storable(test_result) if test_result is not None else {},
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
    for event in v0.from_legacy(history) if v0.is_legacy_history(history) else history:
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
        legacy = v0.is_legacy_history(history)
        if legacy or v0.is_v0_history(history):
            del line
            for index, event in enumerate(v0.convert_legacy(history) if legacy else v0.convert_all(history)):
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
        data: dict[str, Any] = {"agent": {"llm": {"model": model if isinstance(model, str) else ""}}}
        data["stats"] = {"usage_to_metrics": {"agent": metrics}}
        return State(data, b"")

    source._events = events
    source._state = state


V0_METADATA = "metadata.json"


def _v0_number(base: str) -> int | None:
    """The event id a V0 session store's file name gives, ``<n>.json``."""
    stem = base[:-5] if base.endswith(".json") else ""
    return int(stem) if stem.isdecimal() and len(stem) < 16 else None


def is_v0_session(names: list[str]) -> bool:
    """Whether an events/ folder is a V0 session store's (``sessions/<sid>/events/<n>.json``)."""
    bases = [name.rpartition("/")[2] for name in names]
    return any(_v0_number(b) is not None for b in bases) and not any(b.startswith("event-") for b in bases)


def v0_session_source(files: Files, folder: str, names: list[str], label: str) -> ConversationSource:
    """A V0 session, ``<sid>/events/<n>.json`` (one V0 event per file, named by its id)
    beside ``metadata.json`` (title, model, cost), read as a V0 trajectory is."""
    prefix = f"{folder}/" if folder else ""
    where = f"{label}/{folder}" if folder else label
    folder_name = PurePosixPath(folder).name if folder else files.name
    metadata: dict[str, Any] = {}
    source = ConversationSource(conversation_id=normalize_conversation_id(folder_name) or "", where=where)
    if _exists(files, prefix + V0_METADATA):
        data, _, error = _read_json(
            files, prefix + V0_METADATA, settings.EVENTVIEWER_MAX_BASE_STATE_BYTES, "EVENTVIEWER_MAX_BASE_STATE_BYTES"
        )
        if error:
            source.problems.append(f"{where}/{V0_METADATA}: {error}")
        elif isinstance(data, dict):
            metadata = data
    numbered = sorted((n, name) for name in names if (n := _v0_number(name.rpartition("/")[2])) is not None)
    if not source.conversation_id and isinstance(metadata.get("conversation_id"), str):
        source.conversation_id = normalize_conversation_id(metadata["conversation_id"]) or ""
    if not source.conversation_id:
        source.conversation_id = derived_id(folder_name, numbered[0][0] if numbered else "")
    if isinstance(metadata.get("title"), str):
        source.title = metadata["title"].replace("\x00", "").strip()[:300]
    source.expected = len(numbered)
    if len(numbered) > settings.EVENTVIEWER_MAX_EVENTS:
        source.problems.append(
            f"{where}: {len(numbered):,} events, over the limit of {settings.EVENTVIEWER_MAX_EVENTS:,} "
            "(EVENTVIEWER_MAX_EVENTS)"
        )
    cap = settings.EVENTVIEWER_MAX_EVENT_BYTES

    def read() -> Iterator[RawEvent]:
        # Always from the first: an observation takes its tool call from the action before it.
        for seq, (number, name) in enumerate(numbered):
            base = name.rpartition("/")[2]
            data, raw, error = _read_json(files, name, cap, "EVENTVIEWER_MAX_EVENT_BYTES")
            if not error and not v0.is_v0_event(data):
                error = 'not a V0 event (expected an integer "id" and an "action" or "observation")'
            elif not error and data["id"] != number:
                error = f"the file name says event {number} but the file holds event {data['id']!r}"
            yield RawEvent(seq, f"{where}/events/{base}", data, raw, error)

    v0_trajectory(source, read)
    model = metadata.get("llm_model")
    if isinstance(model, str) and model:
        # The events' metrics name the model "default"; the session says which it was.
        figures = source._state

        def state() -> State:
            found = figures()
            data = found.data or {}
            return State({**data, "agent": {"llm": {"model": model}}}, found.raw, found.problems)

        source._state = state
    return source


def _exists(files: Files, name: str) -> bool:
    try:
        files.size(name)
    except (KeyError, OSError):  # not in the zip; not on disk
        return False
    return True


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
    source._events = AppServerEvents(files, members, label)
    return source


class AppServerEvents:
    """A conversation's events in the app server's layout, in the order it reads them back
    (by timestamp), in two passes: every file's timestamps first, then each event read
    again when its turn comes. Memory holds their order, not the events (a batch file's
    events are kept from its first event's turn to its last's)."""

    def __init__(self, files: Files, members: list[str], label: str):
        self.files, self.members, self.label = files, members, label
        self.cap = settings.EVENTVIEWER_MAX_EVENT_BYTES
        self.known: frozenset[str] = frozenset()  # files stored before (see since)
        self.known_count, self.known_last = 0, ""
        self.count, self.last = 0, ""  # after a whole read: how many events, the latest timestamp

    def since(self, known: frozenset[str], count: int, last: str) -> None:
        """Read only the files not in ``known``, which hold the first ``count`` events (the
        latest stamped ``last``), as a watch stored them: unless a new one sorts before
        ``last``, when all are read again, as a first import would."""
        self.known, self.known_count, self.known_last = known, count, last

    def _order(self, names: list[str]) -> list[tuple[str, str, int]]:
        keys = []
        for name in names:
            for index, event in enumerate(self._read(name)):
                stamp = event.data.get("timestamp") if isinstance(event.data, dict) else ""
                keys.append((stamp if isinstance(stamp, str) else "", name, index))
        keys.sort()
        return keys

    def _read(self, name: str) -> Iterable[RawEvent]:
        where = f"{self.label}/{name}"
        if f"/{EVENTS_BATCH}/" in f"/{name}" and not _holds_an_object(self.files, name):
            return _json_array_events(self.files, name, where, Limits.of(settings))
        return [_app_server_event(self.files, name, where, self.cap)]

    def __call__(self) -> Iterator[RawEvent]:
        start, keys = 0, []
        if self.known:
            keys = self._order([n for n in self.members if n not in self.known])
            if all(stamp >= self.known_last for stamp, _, _ in keys if stamp):
                start = self.known_count
            else:
                keys = []
        if not start:
            keys = self._order(self.members)
        self.last = self.known_last if start else ""
        left = Counter(name for _, name, _ in keys)
        batches: dict[str, list[RawEvent]] = {}
        seq = start
        for stamp, name, index in keys:
            if left[name] == 1 and name not in batches:
                event = next(iter(self._read(name)))  # one event to a file: the usual case
            else:
                held = batches.setdefault(name, list(self._read(name)))
                event = (
                    held[index]
                    if index < len(held)
                    else RawEvent(0, f"{self.label}/{name}", None, b"", "changed while it was read")
                )
                left[name] -= 1
                if not left[name]:
                    del batches[name]
            yield event._replace(seq=seq)
            seq += 1
            self.last = max(self.last, stamp)
        self.count = seq


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
