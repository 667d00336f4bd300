"""Finding conversations in what a user hands us, within the configured limits.

A PATH is a conversation folder (``base_state.json`` + ``events/event-NNNNN-<id>.json``),
a persistence root holding such folders, a ``.zip`` of either, or a ``.json`` (array)
or ``.jsonl`` file of events. Files are read one at a time, so memory does not grow
with the size of a conversation.
"""

from __future__ import annotations

import ctypes
import hashlib
import marshal
import multiprocessing
import os
import re
import signal
import stat
import uuid
import zipfile
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any, NamedTuple, Protocol

from eventviewer.imports.jsontext import (
    ARRAY_KEYS,
    MALFORMED,
    READ_CHUNK,
    ArrayItems,
    BadItem,
    NotAnArray,
    parse_json,
)
from eventviewer.imports.packing import pack
from eventviewer.trajectory import kinds, runs
from eventviewer.trajectory.events import Light, describe, title_of
from eventviewer.trajectory.ids import normalize_conversation_id
from eventviewer.trajectory.query import event_text, tsvector
from eventviewer.trajectory.v0 import is_v0_event

SEARCH_DEPTH = 4  # how deep below PATH to look for conversation folders
CHUNK = 256  # event files per task for the worker
READ_AHEAD = 65536  # bytes read before asking a file's size


class SourceError(Exception):
    """A problem with the input itself; the message names the file."""


class Limits(NamedTuple):
    """How much a source may hold, and when its events are parsed in worker processes:
    the EVENTVIEWER_MAX_* settings (docs/configuration.md), handed in by the caller."""

    file_bytes: int
    event_bytes: int
    base_state_bytes: int
    events: int
    zip_members: int
    zip_bytes: int
    parallel_from: int  # events in a folder from which worker processes parse them

    @classmethod
    def of(cls, settings: Any) -> Limits:
        """The limits that Django's ``settings`` set."""
        return cls(
            file_bytes=settings.EVENTVIEWER_MAX_FILE_BYTES,
            event_bytes=settings.EVENTVIEWER_MAX_EVENT_BYTES,
            base_state_bytes=settings.EVENTVIEWER_MAX_BASE_STATE_BYTES,
            events=settings.EVENTVIEWER_MAX_EVENTS,
            zip_members=settings.EVENTVIEWER_MAX_ZIP_MEMBERS,
            zip_bytes=settings.EVENTVIEWER_MAX_ZIP_BYTES,
            parallel_from=settings.EVENTVIEWER_PARALLEL_FROM,
        )


class RawEvent(NamedTuple):
    seq: int
    where: str
    data: Any  # parsed JSON, or None when ``error`` is set
    raw: bytes  # the event's JSON as read
    error: str = ""


class State(NamedTuple):
    data: dict[str, Any] | None = None
    raw: bytes = b""
    problems: list[str] = []


class Parsed(NamedTuple):
    """One event read and checked: what the importer stores, or why it cannot."""

    seq: int
    where: str
    light: Light | None  # None when ``error`` says why the event is refused
    error: str
    packed: bytes  # the event's JSON as read, packed for EventPayload
    digest: str
    title: str = ""  # a user message's text: the conversation's title if it is the first
    status: str = ""  # a state update's execution_status
    text: str = ""  # what the search index holds of it (trajectory.query.event_text)
    outcome: str = ""  # how a branch ending at it ends (kinds.outcome)
    terms: str = ""  # its text's words as a PostgreSQL tsvector (trajectory.query.tsvector), for PostgreSQL


def parse(event: RawEvent, terms: bool = False) -> Parsed:
    """The event read and checked; ``terms``: with its words for PostgreSQL's index."""
    data = event.data
    if event.error:
        return Parsed(event.seq, event.where, None, _named(data) + event.error, b"", "")
    try:
        light = describe(data, event.seq)
    except ValueError as e:
        return Parsed(event.seq, event.where, None, f"{_named(data)}{e}", b"", "")
    # sha256 runs in hardware on current CPUs: the cheapest strong hash here.
    digest = hashlib.sha256(event.raw).hexdigest()[:32]
    title = status = ""
    if light.kind == kinds.MESSAGE and light.source == "user":
        title = title_of(data)
    elif light.kind == kinds.STATE_UPDATE and data.get("key") == "execution_status":
        status = str(data.get("value") or "").replace("\x00", "")[:40]
    text = event_text(data)
    return Parsed(
        event.seq,
        event.where,
        light,
        "",
        pack(event.raw),
        digest,
        title,
        status,
        text,
        kinds.outcome(light),
        tsvector(text) if terms and text else "",
    )


def _named(data: Any) -> str:
    """ "event <id>: " when the event's id can be read, for problem lines."""
    if isinstance(data, dict) and isinstance(data.get("id"), str) and data["id"]:
        return f"event {data['id'][:100]}: "
    return ""


@dataclass
class ConversationSource:
    conversation_id: str
    where: str
    problems: list[str] = field(default_factory=list)  # found before reading events
    expected: int | None = None  # events to read, when known before reading (a folder's files)
    start: int = 0  # a folder's events before this position are not read (a watch stored them)
    files: int = 0  # the app server layout's: how many files its events come from (a watch looks when it grows)
    parent_where: str = ""  # a sub-agent's: where its parent conversation is (``where`` of that source)
    where_of: Callable[[int], str] | None = None  # where the event at a position comes from, when worked out
    row: Any = None  # an evaluation row's instance (formats.RunRow), when it is one
    title: str = ""  # the title the layout itself gives the conversation (a V0 session's metadata.json)
    described: dict[str, str] = field(default_factory=dict)  # Conversation fields it names (described_by)
    _events: Any = None  # () -> Iterator[RawEvent]
    _parsed: Any = None  # (terms) -> Iterator[Parsed], when a worker process reads the events
    _state: Any = None  # () -> State, when there is a base_state.json
    _reviews: Any = None  # () -> (parsed, error), when there is a reviews.json (imports.reviews)

    def state(self) -> State:
        """base_state.json, read when the conversation is imported (not when it is
        found: a root of many conversations never holds all of their states at once)."""
        return self._state() if self._state is not None else State()

    def set_state(self, data: dict[str, Any], raw: bytes) -> None:
        """A base state that comes from elsewhere than a file (an agent-server's answer)."""
        self._state = lambda: State(data, raw)

    def events(self) -> Iterator[RawEvent]:
        events: Iterator[RawEvent] = self._events()
        return events

    def reviews(self) -> tuple[Any, str] | None:
        """reviews.json, parsed (or why not), or None when the folder has none."""
        return self._reviews() if self._reviews is not None else None

    @property
    def event_files(self) -> bool:
        """Whether each event comes from a file of its own (what progress counts as files)."""
        return self.expected is not None and self.row is None

    def parsed(self, terms: bool = False) -> Iterator[Parsed]:
        """Every event, read and checked, in append order; ``terms``: with each event's
        index words made (PostgreSQL's index takes them ready-made, SQLite's FTS5 splits
        the text itself)."""
        if self._parsed is not None:
            parsed: Iterator[Parsed] = self._parsed(terms)
            return parsed
        return (parse(event, terms) for event in self.events())


class Files(Protocol):
    """A read-only tree of files: a directory on disk or a zip archive."""

    label: str
    name: str  # what the tree is called: a folder's name, a zip's name without .zip

    def names(self) -> list[str]: ...  # posix paths relative to the root, files only

    def size(self, name: str) -> int: ...

    def open(self, name: str) -> IO[bytes]: ...


class TooBig(Exception):
    def __init__(self, size: int):
        self.size = size


def read_capped(files: Files, name: str, limit: int) -> bytes:
    """The file's bytes, or TooBig when it claims or turns out to hold more than
    ``limit``: a zip bomb may lie about its size, so no more than limit + 1 bytes are read.

    Reads the size the file claims first: asking for limit + 1 bytes up front would
    allocate the whole limit for every small file."""
    if isinstance(files, DirectoryFiles):
        return files.read(name, limit)
    claimed = files.size(name)
    if claimed > limit:
        raise TooBig(claimed)
    with files.open(name) as f:
        content = f.read(claimed + 1)
        if len(content) > claimed:  # it grew past its claimed size
            content += f.read(limit + 1 - len(content))
    if len(content) > limit:
        raise TooBig(len(content))
    return content


class DirectoryFiles:
    def __init__(self, root: Path):
        self.root = root
        self._root = str(root)
        self.label = str(root)
        # An events/ folder is named by the conversation folder it is in.
        absolute = root.absolute()
        self.name = absolute.name if absolute.name != "events" else absolute.parent.name
        self._sizes: dict[str, int] = {}  # filled on demand: listing 100,000 files needs no stat
        self._names: list[str] = []

    def names(self) -> list[str]:
        if not self._names:
            self._walk(self.root, "", 0)
            self._names.sort()
        return self._names

    def _walk(self, folder: Path, prefix: str, depth: int) -> None:
        with_events = folder.name == "events"
        with os.scandir(folder) as entries:
            for entry in entries:
                name = prefix + entry.name
                if with_events and entry.is_file(follow_symlinks=False):
                    self._names.append(name)  # an event file: the usual entry, one check
                    continue
                wanted = with_events or entry.name.endswith((".json", ".jsonl"))
                if entry.is_symlink():
                    if wanted or entry.name in ("events", "subagents"):
                        raise SourceError(f"{self.label}/{name}: a symbolic link; eventviewer never follows links")
                    continue
                # A conversation found at the search depth still has its events and sub-agents below.
                deeper = depth < SEARCH_DEPTH or entry.name in ("events", "subagents") or folder.name == "subagents"
                if entry.is_dir(follow_symlinks=False):
                    if deeper:
                        self._walk(Path(entry.path), name + "/", depth + 1)
                elif wanted and entry.is_file(follow_symlinks=False):
                    self._names.append(name)
                elif wanted and not entry.name.startswith("."):
                    # A FIFO would block the reader forever, a device read without end.
                    raise SourceError(f"{self.label}/{name}: not a regular file")

    def size(self, name: str) -> int:
        size = self._sizes.get(name)
        if size is None:
            size = self._sizes[name] = os.stat(os.path.join(self._root, name)).st_size
        return size

    def open(self, name: str) -> IO[bytes]:
        return open(os.path.join(self._root, name), "rb")

    def read(self, name: str, limit: int) -> bytes:
        """read_capped for files on disk, without the buffered-file machinery: this
        runs once per event."""
        fd = os.open(f"{self._root}/{name}", os.O_RDONLY)
        try:
            # Most events fit one read (a short read of a file is its end): no need to
            # ask for the size first.
            want = min(READ_AHEAD, limit + 1)
            content = os.read(fd, want)
            if len(content) == want:
                claimed = os.fstat(fd).st_size
                if claimed > limit:
                    raise TooBig(claimed)
                if claimed >= len(content):
                    content += os.read(fd, claimed + 1 - len(content))
                while claimed < len(content) <= limit:  # it grew past its claimed size
                    more = os.read(fd, limit + 1 - len(content))
                    if not more:
                        break
                    content += more
        finally:
            os.close(fd)
        if len(content) > limit:
            raise TooBig(len(content))
        return content


class ZipFiles:
    def __init__(self, path: Path, label: str, limits: Limits):
        self.label = label
        self.limits = limits
        self.name = PurePosixPath(label).name.removesuffix(".zip").removesuffix(".ZIP")
        try:
            self.zip = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as e:
            raise SourceError(f"{label}: not a readable zip archive ({e})") from None
        self._members: dict[str, zipfile.ZipInfo] = {}
        self._check()

    def _check(self) -> None:
        infos = self.zip.infolist()
        if len(infos) > self.limits.zip_members:
            raise SourceError(
                f"{self.label}: {len(infos):,} members, over the limit of "
                f"{self.limits.zip_members:,} (EVENTVIEWER_MAX_ZIP_MEMBERS)"
            )
        total = 0
        for info in infos:
            name = info.filename
            mode = info.external_attr >> 16
            if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
                raise SourceError(f"{self.label}: member {name!r} has an absolute path")
            if "\\" in name or any(part == ".." for part in PurePosixPath(name).parts):
                raise SourceError(f"{self.label}: member {name!r} would land outside its folder")
            if stat.S_ISLNK(mode):
                raise SourceError(f"{self.label}: member {name!r} is a symbolic link")
            if info.is_dir():
                continue
            total += info.file_size
            if total > self.limits.zip_bytes:
                raise SourceError(
                    f"{self.label}: uncompressed contents exceed {self.limits.zip_bytes:,} bytes "
                    "(EVENTVIEWER_MAX_ZIP_BYTES)"
                )
            self._members[name] = info

    def names(self) -> list[str]:
        return sorted(self._members)

    def size(self, name: str) -> int:
        return self._members[name].file_size

    def open(self, name: str) -> IO[bytes]:
        return self.zip.open(self._members[name])


def find_conversations(
    path: Path, label: str | None = None, run: str | None = None, *, limits: Limits
) -> list[ConversationSource]:
    """Every conversation in PATH, or SourceError when there is none or PATH is unusable.
    ``run`` names the run an evaluation output's rows import into (default: from its name)."""
    label = label or str(path)
    if path.is_symlink() and not path.exists():
        raise SourceError(f"{label}: a broken symbolic link")
    if not path.exists():
        raise SourceError(f"{label}: no such file or folder")
    if path.is_dir() and path.absolute().name == "events" and _is_conversation_folder(path.absolute().parent):
        # A conversation's events/ folder: the conversation is its parent.
        path = path.absolute().parent
        label = str(PurePosixPath(label).parent) if PurePosixPath(label).name == "events" else str(path)
    if path.is_dir():
        files: Files = DirectoryFiles(path)
    elif path.suffix.lower() == ".zip":
        _check_size(path.stat().st_size, label, limits.file_bytes, "EVENTVIEWER_MAX_FILE_BYTES")
        files = ZipFiles(path, label, limits)
    elif _event_file_name(PurePosixPath(label).name) is not None:
        raise SourceError(
            f"{label}: one SDK event file (event-NNNNN-<id>.json): pass the folder holding the "
            "conversation's events, or a .zip of it"
        )
    elif path.suffix.lower() in (".json", ".jsonl"):
        # The label's name, not the path's: an upload is saved under a temporary name.
        return _file_sources(_SingleFile(path, label), PurePosixPath(label).name, label, run, limits)
    else:
        raise SourceError(f"{label}: expected a conversation folder, a .zip, a .json or a .jsonl file")
    return _sources_in(files, label, run, limits)


def _is_conversation_folder(folder: Path) -> bool:
    """Whether a folder holding events/ is one conversation's: an SDK one (base_state.json)
    or a V0 session (metadata.json)."""
    return any((folder / name).is_file() for name in ("base_state.json", "metadata.json"))


class _SingleFile:
    def __init__(self, path: Path, label: str):
        self.path, self.label = path, label
        self.name = PurePosixPath(label).name

    def names(self) -> list[str]:
        return [self.path.name]

    def size(self, name: str) -> int:
        return self.path.stat().st_size

    def open(self, name: str) -> IO[bytes]:
        return open(self.path, "rb")


def _file_sources(files: Files, name: str, where: str, run: str | None, limits: Limits) -> list[ConversationSource]:
    """The conversations of one .json or .jsonl file: an evaluation output's rows, or
    the file's events as one conversation."""
    from eventviewer.imports import formats  # it builds on this module

    if not name.endswith(".jsonl"):
        return [_event_file_source(files, name, where, limits)]
    first = formats.first_line(files, name)
    if runs.is_row(first) or formats.is_row_like(first):
        return formats.evaluation_sources(files, name, where, run)
    if isinstance(first, dict) and not any(key in first for key in ("id", "kind", "action", "observation")):
        fields = ", ".join(f'"{k}"' for k in list(first)[:12]) or "no fields"
        raise SourceError(
            f'{where}: line 1 is neither an event (it has no "id" or "kind") nor an evaluation row '
            f'(no "instance_id" or "issue", and "history"): it has {fields}'
        )
    return [_event_file_source(files, name, where, limits)]


def _sources_in(files: Files, label: str, run: str | None, limits: Limits) -> list[ConversationSource]:
    from eventviewer.imports import formats  # it builds on this module

    names = files.names()
    folders: dict[str, list[str]] = {}
    loose: dict[str, list[str]] = {}  # folders holding SDK event files themselves, with no events/ below
    with_state: set[str] = set()
    with_meta: set[str] = set()  # an agent-server's conversation folders: its title and lineage
    with_reviews: set[str] = set()
    for name in names:
        folder, _, base = name.rpartition("/")
        if base == "reviews.json":
            with_reviews.add(folder)
        elif base == "base_state.json":
            with_state.add(folder)
            folders.setdefault(folder, [])
        elif base == "meta.json":
            with_meta.add(folder)
        elif folder == "events" or folder.endswith("/events"):
            folders.setdefault(folder[:-7], []).append(name)
        elif _event_file_name(base) is not None:
            loose.setdefault(folder, []).append(name)
    for folder, event_names in loose.items():
        if not folders.get(folder):  # OpenHands-CLI keeps its test trajectories so
            folders[folder] = event_names
    found = formats.app_server_sources(files, names, label)
    if folders or found:
        return [
            formats.v0_session_source(files, folder, event_names, label)
            if folder not in with_state and formats.is_v0_session(event_names)
            else _folder_source(
                files,
                folder,
                event_names,
                label,
                folder in with_state,
                limits,
                has_meta=folder in with_meta,
                has_reviews=folder in with_reviews,
            )
            for folder, event_names in sorted(folders.items())
        ] + found
    event_files = _event_files([n for n in names if n.endswith((".json", ".jsonl"))], files, limits)
    if not event_files:
        raise SourceError(f"{label}: no conversation found {_found(names)}")
    return [
        source
        for name in event_files
        for source in _file_sources(files, name, f"{label}/{name}" if name != label else label, run, limits)
    ]


EVENTS_FILES = ("events.jsonl", "events.json")  # what a folder of one conversation calls its events


def _event_files(names: list[str], files: Files, limits: Limits) -> list[str]:
    """The files that hold events: in a folder holding an events.jsonl (an editor's or
    a tool's conversation folder), that file alone; elsewhere, every file but the
    neighbours that are JSON objects without events (a state.json, a metadata.json)."""
    by_folder: dict[str, list[str]] = {}
    for name in names:
        by_folder.setdefault(name.rpartition("/")[0], []).append(name)
    kept = []
    for members in by_folder.values():
        named = [n for n in members if n.rpartition("/")[2] in EVENTS_FILES]
        kept.extend(named[:1] or [n for n in members if not _is_neighbour(files, n, limits)])
    return sorted(kept)


def _is_neighbour(files: Files, name: str, limits: Limits) -> bool:
    """Whether a .json file is a small JSON object holding no array of events (a state or
    metadata file), not a file of events."""
    if not name.endswith(".json"):
        return False
    try:
        with files.open(name) as f:
            if f.read(4096).lstrip()[:1] != b"{":
                return False  # an array of events, or something reading it names
    except UNREADABLE:
        return False
    data, _, error = _read_json(files, name, limits.base_state_bytes, "EVENTVIEWER_MAX_BASE_STATE_BYTES")
    return not error and isinstance(data, dict) and not any(key in data for key in ARRAY_KEYS)


def _found(names: list[str]) -> str:
    """What PATH holds instead of a conversation, and what was expected, in a few words."""
    expected = (
        "expected a conversation folder (base_state.json and events/event-NNNNN-<id>.json), "
        "a folder of event-NNNNN-<id>.json files, a V0 session (events/<n>.json), "
        "or .json/.jsonl files of events"
    )
    if not names:
        return f"(it holds no .json or .jsonl file; {expected})"
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    return f"(it holds {shown}, none of them events: JSON objects without an array of events; {expected})"


def _folder_source(
    files: Files,
    folder: str,
    event_names: list[str],
    label: str,
    has_state: bool,
    limits: Limits,
    has_meta: bool = False,
    has_reviews: bool = False,
) -> ConversationSource:
    prefix = f"{folder}/" if folder else ""
    where = f"{label}/{folder}" if folder else label
    source = ConversationSource(conversation_id="", where=where)
    if has_reviews:  # written by an eventviewer export: its comments, labels and verdicts
        source._reviews = lambda: _read_reviews(files, prefix + "reviews.json")
    parent, subagents, _ = f"/{folder}".rpartition("/subagents/")
    if subagents:  # the SDK keeps a sub-agent's conversation in <parent>/subagents/<child-id>/
        source.parent_where = f"{label}{parent}"
    state = State()
    if has_state:
        source._state = lambda: _read_state(
            files, prefix + "base_state.json", f"{where}/base_state.json", limits.base_state_bytes
        )
        state = source.state()
        source.problems.extend(state.problems)
    if has_meta:
        cap = limits.base_state_bytes
        meta, _, error = _read_json(files, prefix + "meta.json", cap, "EVENTVIEWER_MAX_BASE_STATE_BYTES")
        if error or not isinstance(meta, dict):
            source.problems.append(f"{where}/meta.json: {error or 'expected a JSON object'}")
        else:
            source.described = described_by(meta)

    folder_name = PurePosixPath(folder).name if folder else files.name
    source.conversation_id = normalize_conversation_id(folder_name) or ""
    if not source.conversation_id and state.data and isinstance(state.data.get("id"), str):
        source.conversation_id = normalize_conversation_id(state.data["id"]) or ""
    del state
    if not source.conversation_id and has_state:
        source.problems.append(
            f"{where}: cannot tell the conversation id "
            "(the folder name is not a 32-hex id and base_state.json has no id)"
        )

    numbered: dict[int, tuple[int, str]] = {}  # seq -> (seq, name)
    # events/ below the folder, or the folder itself (a folder of event files)
    in_folder = event_names[0].rpartition("/")[0] if event_names else f"{prefix}events"
    events_where = f"{label}/{in_folder}/" if in_folder else f"{label}/"
    for name in event_names:
        base = name.rpartition("/")[2]
        parts = _event_file_name(base)
        if parts is not None and parts[0] not in numbered:  # the usual case, in one look
            numbered[parts[0]] = (parts[0], name)
            continue
        if base.startswith("."):
            continue  # the SDK's lock and length-marker sidecars
        if parts is None:
            if base.startswith("event-"):
                source.problems.append(f"{events_where}{base}: not named event-NNNNN-<id>.json")
            continue
        seq = parts[0]
        if seq in numbered:
            taken = numbered[seq][1].rpartition("/")[2]
            source.problems.append(f"{events_where}{base}: position {seq} is also taken by {taken}")
            continue
        numbered[seq] = (seq, name)
    items = [numbered[seq] for seq in sorted(numbered)]
    if not items and not source.problems:
        source.problems.append(f"{events_where.rstrip('/')}: {_no_events(event_names)}")
    if not source.conversation_id and items:
        # Not named by its id and no base_state.json: derived as for a file of events.
        source.conversation_id = derived_id(folder_name, items[0][1].rpartition("/")[2][6:-5].partition("-")[2])
    if len(items) > limits.events:
        source.problems.append(
            f"{where}: {len(items):,} events, over the limit of {limits.events:,} (EVENTVIEWER_MAX_EVENTS)"
        )
        return source
    if items and items[-1][0] != len(items) - 1:  # distinct and sorted: 0 to n-1 unless one is missing
        expected, seq = next((n, seq) for n, (seq, _) in enumerate(items) if seq != n)
        source.problems.append(f"{where}/events: event-{expected:05d}-*.json is missing (the files jump to {seq:05d})")

    source.expected = len(items)
    cap = limits.event_bytes
    source._events = lambda: (_read_event(files, item, cap, events_where) for item in items[source.start :])
    if isinstance(files, DirectoryFiles) and len(items) >= limits.parallel_from:
        source._parsed = lambda terms: _parse_in_workers(files._root, items[source.start :], cap, events_where, terms)
    # Where each event comes from, worked out when a message needs it: kept for every
    # event, the paths would be a fifth of a big import's memory.
    source.where_of = lambda seq: events_where + items[seq][1].rpartition("/")[2]
    return source


def _no_events(names: list[str]) -> str:
    """Why a conversation folder gives no event, naming what it holds instead."""
    expected = "expected SDK event files named event-NNNNN-<id>.json"
    shown = sorted(
        (n.rpartition("/")[2] for n in names if not n.rpartition("/")[2].startswith(".")), key=lambda b: (len(b), b)
    )
    if not shown:
        return f"holds no event file ({expected})"
    named = shown[0] if len(shown) == 1 else f"{shown[0]}…{shown[-1]}"
    return f"holds {len(shown)} file{'s' if len(shown) != 1 else ''} named {named}: {expected}"


def derived_id(name: str, first_id: Any) -> str:
    """A stable conversation id for events not named by one: from the name they come
    under and their first event's id, so importing them again re-syncs them."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"eventviewer:{name}:{first_id}").hex


def _read_reviews(files: Files, name: str) -> tuple[Any, str]:
    from eventviewer.imports.reviews import MAX_BYTES

    data, _, error = _read_json(files, name, MAX_BYTES, "reviews.json's limit")
    return data, error


def _read_state(files: Files, name: str, where: str, cap: int) -> State:
    data, raw, error = _read_json(files, name, cap, "EVENTVIEWER_MAX_BASE_STATE_BYTES")
    if error:
        return State(problems=[f"{where}: {error}"])
    if not isinstance(data, dict):
        return State(problems=[f"{where}: expected a JSON object"])
    return State(data, raw, [f"{where}: {p}" for p in _check_base_state(data)])


def _event_file_name(base: str) -> tuple[int, str] | None:
    """(position, event id) from an SDK event file's name, event-NNNNN-<id>.json
    (string methods: a regular expression costs more over 100,000 names)."""
    if not (base.startswith("event-") and base.endswith(".json")):
        return None
    seq, _, event_id = base[6:-5].partition("-")
    if not seq.isdecimal() or not event_id or "\n" in event_id:
        return None
    return int(seq), event_id


def _read_event(files: Files, item: tuple[int, str], cap: int, events_where: str) -> RawEvent:
    seq, name = item
    # The id the file's name says, read again here rather than kept for every file.
    base = name.rpartition("/")[2]
    expected_id = base[6:-5].partition("-")[2]
    where = events_where + base
    data, raw, error = _read_json(files, name, cap, "EVENTVIEWER_MAX_EVENT_BYTES")
    if not error and isinstance(data, dict) and data.get("id") != expected_id:
        error = f"the file name says event {expected_id} but the file holds event {data.get('id')!r}"
    return RawEvent(seq, where, data, raw, error)


def _parse_chunk(root: str, chunk: list[tuple[int, str]], cap: int, events_where: str, terms: bool) -> bytes:
    """A worker's share: Parsed events as plain tuples, marshalled: they cross processes
    several times faster than named tuples, and marshal reads and writes plain values
    (strings, numbers, bytes) in half the time pickle takes."""
    files = DirectoryFiles(Path(root))
    parsed = (parse(_read_event(files, item, cap, events_where), terms) for item in chunk)
    return marshal.dumps([(*p[:2], p.light and tuple(p.light), *p[3:]) for p in parsed])


def _unplain(row: tuple[Any, ...]) -> Parsed:
    light = row[2]
    return Parsed(row[0], row[1], Light._make(light) if light else None, *row[3:])


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent(parent: int) -> None:
    """Make a parser worker end with the import that forked it, even one killed
    outright (SIGKILL runs no clean-up): Linux sends it SIGKILL when its parent goes."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux
        pass
    if os.getppid() != parent:  # the parent went before prctl took hold
        os._exit(1)


def _parse_in_workers(
    root: str, items: list[tuple[int, str]], cap: int, events_where: str, terms: bool
) -> Iterator[Parsed]:
    """Read and check events in worker processes while the caller writes the ones
    before: parsing and writing each take one core. A few chunks run ahead, no more,
    so memory stays bounded."""
    workers = max(2, min(4, (os.cpu_count() or 2) - 1))
    # Forked, not spawned: a spawned worker re-imports the caller's __main__ (any script
    # or notebook calling the importer); these workers only read files and parse.
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_die_with_parent,
        initargs=(os.getpid(),),
    )
    pending: deque[Future[bytes]] = deque()
    try:
        for start in range(0, len(items), CHUNK):
            chunk = items[start : start + CHUNK]
            pending.append(pool.submit(_parse_chunk, root, chunk, cap, events_where, terms))
            if len(pending) > 2 * workers:
                yield from map(_unplain, marshal.loads(pending.popleft().result()))
        while pending:
            yield from map(_unplain, marshal.loads(pending.popleft().result()))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _event_file_source(files: Files, name: str, where: str, limits: Limits) -> ConversationSource:
    stem = PurePosixPath(name).name.rsplit(".", 1)[0]
    if PurePosixPath(name).name in EVENTS_FILES:
        stem = PurePosixPath(where).parent.name or stem  # named after the folder it is the events of
    source = ConversationSource(conversation_id=normalize_conversation_id(stem) or "", where=where)
    read = _jsonl_events if name.endswith(".jsonl") else _json_array_events
    source._events = lambda: _capped(read(files, name, where, limits), files, name, where, limits)
    first = next(read(files, name, where, limits), None)
    if first is not None and is_v0_event(first.data):
        from eventviewer.imports import formats  # it builds on this module

        formats.v0_trajectory(source, source._events)
    if not source.conversation_id:
        # Not named by its id: derive a stable one, so importing the file again re-syncs it.
        first_id = first.data.get("id") if first and isinstance(first.data, dict) else ""
        source.conversation_id = derived_id(stem, first_id)
    return source


def _capped(events: Iterator[RawEvent], files: Files, name: str, where: str, limits: Limits) -> Iterator[RawEvent]:
    """The events of a JSON or JSONL file, refused at once when there are more than
    EVENTVIEWER_MAX_EVENTS (counted before any is imported) or none."""
    cap = limits.events
    try:
        count = _count_events(files, name, cap, limits.event_bytes)
    except UNCOUNTABLE:
        count = 0  # reading the events says what is wrong
    if count > cap:
        yield RawEvent(0, where, None, b"", _too_many(cap))
        return
    seq = -1
    for seq, event in enumerate(events):  # noqa: B007 (seq is used after the loop)
        yield event
    if seq < 0:
        yield RawEvent(0, where, None, b"", "holds no events")


def _count_events(files: Files, name: str, cap: int, event_cap: int) -> int:
    """How many events the file holds, exactly when it may be more than ``cap``:
    counting a brace or a line break per event first is cheap, and enough for all
    but the biggest files."""
    mark = b"\n" if name.endswith(".jsonl") else b"{"
    with files.open(name) as f:
        upper = sum(chunk.count(mark) for chunk in iter(lambda: f.read(READ_CHUNK), b"")) + (mark == b"\n")
    if upper <= cap:
        return upper
    count = 0
    with files.open(name) as f:
        if mark == b"\n":
            count = _count_lines(f)
        else:
            for _ in ArrayItems(f, event_cap).items():
                count += 1
                if count > cap:
                    break
    return count


_LINE_WITH_TEXT = re.compile(rb"^[ \t\r]*[^ \t\r\n]", re.M)


def _count_lines(f: IO[bytes]) -> int:
    """Lines holding more than white space, a chunk at a time (a line cut by the end of
    a chunk goes on into the next one)."""
    count, rest = 0, b""
    for chunk in iter(lambda: f.read(READ_CHUNK), b""):
        chunk = rest + chunk
        cut = chunk.rfind(b"\n") + 1
        count += len(_LINE_WITH_TEXT.findall(chunk, 0, cut))
        rest = chunk[cut:]
    return count + bool(rest.strip())


def _too_many(cap: int) -> str:
    return f"more than {cap:,} events, over the limit (EVENTVIEWER_MAX_EVENTS)"


def _jsonl_events(files: Files, name: str, where: str, limits: Limits) -> Iterator[RawEvent]:
    file_cap, event_cap = limits.file_bytes, limits.event_bytes
    size = files.size(name)
    if size > file_cap:
        yield RawEvent(0, where, None, b"", _too_big(size, file_cap, "EVENTVIEWER_MAX_FILE_BYTES"))
        return
    try:
        yield from _jsonl_lines(files, name, where, file_cap, event_cap)
    except UNREADABLE as e:
        yield RawEvent(0, where, None, b"", f"cannot be read ({e})")


def _jsonl_lines(files: Files, name: str, where: str, file_cap: int, event_cap: int) -> Iterator[RawEvent]:
    seq = total = 0
    with files.open(name) as f:
        for number, line in enumerate(iter(lambda: f.readline(event_cap + 2), b""), start=1):
            total += len(line)
            line_where = f"{where}:{number}"
            if total > file_cap:
                yield RawEvent(seq, where, None, b"", _too_big(total, file_cap, "EVENTVIEWER_MAX_FILE_BYTES"))
                return
            # Stripped once and rebound, so a big event's line is never held twice.
            line = line.strip()
            if len(line) > event_cap:
                yield RawEvent(
                    seq,
                    line_where,
                    None,
                    b"",
                    f"a line over the limit of {event_cap:,} bytes (EVENTVIEWER_MAX_EVENT_BYTES)",
                )
                return
            if not line:
                continue
            data, raw, error = parse_json(line, number)
            del line
            yield RawEvent(seq, line_where, data, raw, error)
            seq += 1


def _json_array_events(files: Files, name: str, where: str, limits: Limits) -> Iterator[RawEvent]:
    """The items of a JSON array file (or of the "events" array of an object), read one
    at a time and kept as the bytes they were: memory holds a chunk of the file and one
    event, however big the file."""
    file_cap, event_cap = limits.file_bytes, limits.event_bytes
    size = files.size(name)
    if size > file_cap:
        yield RawEvent(0, where, None, b"", _too_big(size, file_cap, "EVENTVIEWER_MAX_FILE_BYTES"))
        return
    seq = 0
    try:
        with files.open(name) as f:
            array = ArrayItems(f, event_cap)
            for raw in array.items():
                data, parsed, error = parse_json(raw)
                if error.startswith(MALFORMED):  # placed in the file (which counts its lines: only then)
                    data, parsed, error = parse_json(raw, *array.place(array.item_at))
                raw = parsed
                yield RawEvent(seq, f"{where}[{seq}]", data, raw, error)
                seq += 1
    except NotAnArray:
        yield RawEvent(0, where, None, b"", 'expected a JSON array of events (or an object with an "events" array)')
    except BadItem as e:
        yield RawEvent(seq, f"{where}[{seq}]" if e.in_item else where, None, b"", e.args[0])
    except UNREADABLE as e:
        yield RawEvent(seq, where, None, b"", f"cannot be read ({e})")


# What reading a file on disk or in a zip can raise: a vanished or unreadable file, a
# corrupt, truncated or encrypted zip member.
UNREADABLE: tuple[type[Exception], ...] = (
    OSError,
    EOFError,
    zipfile.BadZipFile,
    zlib.error,
    RuntimeError,
    NotImplementedError,
)
# What counting a file's events can raise: the reading's errors, and ValueError on bad JSON.
UNCOUNTABLE: tuple[type[Exception], ...] = (*UNREADABLE, ValueError)


def _read_json(files: Files, name: str, cap: int, setting: str) -> tuple[Any, bytes, str]:
    try:
        content = read_capped(files, name, cap)
    except TooBig as e:
        return None, b"", _too_big(e.size, cap, setting)
    except UNREADABLE as e:
        return None, b"", f"cannot be read ({e})"
    return parse_json(content)


def _too_big(size: int, cap: int, setting: str) -> str:
    return f"{size:,} bytes, over the limit of {cap:,} ({setting})"


def _check_size(size: int, where: str, cap: int, setting: str) -> None:
    if size > cap:
        raise SourceError(f"{where}: {_too_big(size, cap, setting)}")


def _check_base_state(data: dict[str, Any]) -> list[str]:
    problems = []
    leaf = data.get("leaf_event_id")
    if leaf is not None and not isinstance(leaf, str):
        problems.append('"leaf_event_id" must be a string or null')
    if "head_is_empty" in data and not isinstance(data["head_is_empty"], bool):
        problems.append('"head_is_empty" must be true or false')
    status = data.get("execution_status")
    if status is not None and not isinstance(status, str):
        problems.append('"execution_status" must be a string')
    return problems


def described_by(info: dict[str, Any]) -> dict[str, str]:
    """The Conversation fields an agent-server's description of a conversation sets (its
    ConversationInfo, or the meta.json it keeps beside base_state.json): the title given
    on the server (else the importer's, the first user message) and where it comes from."""

    def conversation_id(key: str) -> str:
        return normalize_conversation_id(str(info.get(key) or "")) or ""

    fields = {
        "forked_from_conversation_id": conversation_id("forked_from_conversation_id"),
        "forked_from_event_id": str(info.get("forked_from_event_id") or "").replace("\x00", "")[:255],
        "parent_conversation_id": conversation_id("parent_conversation_id"),
    }
    title = info.get("title")
    if isinstance(title, str) and title.strip():
        fields["title"] = title.replace("\x00", "").strip()[:300]
    return fields
