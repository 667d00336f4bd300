"""Following a persistence folder an agent is writing (the OpenHands CLI, an SDK script, the
app server's ``v1_conversations/``): looked at every second, each conversation whose files
changed is imported again, reading only the event files that are new (in the app server's
layout, which has no positions in its names, the new files are placed by their timestamps
after the stored ones; all are read again only when one sorts among them). A stored file
rewritten, truncated or deleted afterwards, and a conversation folder that is a symbolic link
(never followed), are said once, naming the file. A file caught
half-written is read again at the next look, not refused: what comes before it is stored
(in the app server's layout, nothing until it is whole: its timestamp places it), and it
waits its turn."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Count, Max
from django.utils import timezone

from eventviewer.imports.formats import AppServerEvents
from eventviewer.imports.importer import Imported, ImportFailed, import_sources
from eventviewer.imports.sources import (
    SEARCH_DEPTH,
    ConversationSource,
    Limits,
    Parsed,
    SourceError,
    find_conversations,
    parse,
)
from eventviewer.models import Conversation

EVERY = 1.0  # seconds between looks: a new event file is stored within two
GRACE = 10  # seconds a problem may last before it is reported: a file being written, or
# base_state.json already naming an event whose file was not there when the folder was listed
LIVE_FOR = timedelta(seconds=30)  # "live" on the page this long after the last change
HALF_WRITTEN = "malformed JSON"  # what a file caught mid-write reads as (truncated, or empty)


@dataclass
class Unimportable:
    """A file that did not import: since when, and whether that was said."""

    since: float
    reported: bool = False


@dataclass
class FolderWatch:
    path: Path
    say: Callable[[str], None]
    seen: dict[str, tuple[int, int, tuple[int, int] | None]] = field(
        default_factory=dict
    )  # conversation folder -> its files when imported
    problems: dict[tuple[str, str], Unimportable] = field(default_factory=dict)
    # The app server's layout: conversation folder -> its files stored, their events, the latest timestamp.
    app_stored: dict[str, tuple[frozenset[str], int, str]] = field(default_factory=dict)
    stored_files: dict[str, dict[str, tuple[int, int]]] = field(default_factory=dict)  # folder -> file -> stat
    said: set[str] = field(default_factory=set)  # what was said once and never again

    def look(self) -> list[Imported]:
        """Import what changed since the last look."""
        now = time.monotonic()
        current: set[tuple[str, str]] = set()
        results = []
        for link in _linked_folders(self.path):
            self._say_once(f"{link}: a symbolic link; eventviewer never follows links, so it is not watched")
        for stats in self.stored_files.values():
            self._check_stored(stats)
        try:
            sources = find_conversations(self.path, limits=Limits.of(settings))
        except SourceError as e:
            self._problem(current, now, str(self.path), str(e))
            sources = []
        for source in sources:
            try:
                imported = self._import(source, current, now)
            except DatabaseError as e:
                self._problem(current, now, source.where, f"the database failed ({e}); trying again")
                continue
            if imported is not None:
                results.append(imported)
        self.problems = {key: p for key, p in self.problems.items() if key in current}
        return results

    def _import(self, source: ConversationSource, current: set[tuple[str, str]], now: float) -> Imported | None:
        # A new event is a new file, in either layout: an SDK folder's events/, or the app server's
        # v1_conversations/<hex>/ (read back whole, sorted by timestamp, since it has no positions).
        signature = (source.expected or 0, source.files, _stamp(Path(source.where) / "base_state.json"))
        if self.seen.get(source.where) == signature:
            return None
        if source.problems:
            self._problem(current, now, source.where, "\n".join(source.problems))
            return None
        source.start = _stored_prefix(source.conversation_id, source.expected or 0)
        reader = source._events if isinstance(source._events, AppServerEvents) else None
        stored = self.app_stored.get(source.where)
        if reader is not None and stored is not None and _event_count(source.conversation_id) == stored[1]:
            reader.since(*stored)
        held: list[Parsed] = []
        in_workers = source._parsed if source.start == 0 else None  # a first import of a big folder
        whole = in_workers or (lambda terms: (parse(e, terms) for e in source.events()))
        source._parsed = lambda terms: _until_half_written(whole(terms), held)
        try:
            (imported,) = import_sources([source])
        except ImportFailed as e:
            state = source.state()
            if not (held and state.data and "leaf_event_id" in state.data):
                self._problem(current, now, source.where, str(e))
                return None
            # base_state.json may already name the event being written: HEAD waits for it.
            source.set_state({k: v for k, v in state.data.items() if k != "leaf_event_id"}, state.raw)
            held.clear()
            try:
                (imported,) = import_sources([source])
            except ImportFailed as e:
                self._problem(current, now, source.where, str(e))
                return None
        if held:
            first = held[0]
            self._problem(current, now, first.where, f"{first.where}: {first.error}; what comes before it is stored")
        else:
            self.seen[source.where] = signature
            self._stored(source, reader)
        if imported.added or imported.created:
            Conversation.objects.filter(pk=imported.conversation.pk).update(live_until=timezone.now() + LIVE_FOR)
        return imported

    def _stored(self, source: ConversationSource, reader: AppServerEvents | None) -> None:
        """Remember what is stored of the folder: its files as they were (to tell when one
        changes), and, in the app server's layout, which files they were."""
        if reader is not None:
            self.app_stored[source.where] = (frozenset(reader.members), reader.count, reader.last)
            names = [f"{reader.label}/{name}" for name in reader.members if name not in reader.known]
        elif source.where_of is not None and source.expected:
            names = [source.where_of(seq) for seq in range(source.start, source.expected)]
        else:
            return
        stats = self.stored_files.setdefault(source.where, {})
        for name in names:
            if (stat := _stamp(name)) is not None:
                stats[name] = stat

    def _check_stored(self, stats: dict[str, tuple[int, int]]) -> None:
        """Say once that a stored event file changed: its stored copy stays as it was."""
        for name, (mtime, size) in stats.items():
            now = _stamp(name)
            if now == (mtime, size):
                continue
            if now is None:
                what = "was deleted"
            elif now[1] < size:
                what = f"was truncated ({size:,} to {now[1]:,} bytes)"
            else:
                what = "was rewritten"
            self._say_once(f"{name}: {what} after it was stored; the stored event is kept as it was")
            if now is not None:
                stats[name] = now

    def _say_once(self, message: str) -> None:
        if message not in self.said:
            self.said.add(message)
            self.say(message)

    def _problem(self, current: set[tuple[str, str]], now: float, where: str, message: str) -> None:
        """Say it once, if it lasts: most are a file being written at that moment."""
        key = (where, message)
        current.add(key)
        problem = self.problems.setdefault(key, Unimportable(now))
        if not problem.reported and now - problem.since >= GRACE:
            problem.reported = True
            self.say(f"still not importable after {GRACE} s (retrying while watching): {message}")


def _stamp(path: Path | str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def _linked_folders(path: Path) -> Iterator[str]:
    """The symbolic links among the folders where conversations are looked for (not inside
    a conversation's events/: finding its files refuses those)."""
    folders = [(path, 0)]
    while folders:
        folder, depth = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                if entry.is_dir():  # follows the link, only to tell a folder
                    yield entry.path
            elif depth < SEARCH_DEPTH and entry.name != "events" and entry.is_dir(follow_symlinks=False):
                folders.append((Path(entry.path), depth + 1))


def _event_count(conversation_id: str) -> int | None:
    return Conversation.objects.filter(conversation_id=conversation_id).values_list("event_count", flat=True).first()


def _stored_prefix(conversation_id: str, files: int) -> int:
    """How many of the folder's event files are stored (they are, in order, when the
    stored events are exactly positions 0..n-1): those need not be read again."""
    stored = Conversation.objects.filter(conversation_id=conversation_id).aggregate(
        count=Count("events"), last=Max("events__seq")
    )
    count = stored["count"]
    return count if count and stored["last"] == count - 1 and count <= files else 0


def _until_half_written(parsed: Generator[Parsed, None, None], held: list[Parsed]) -> Iterator[Parsed]:
    try:
        for event in parsed:
            if event.error.startswith(HALF_WRITTEN):
                held.append(event)
                return
            yield event
    finally:
        parsed.close()  # its worker processes, if any, stop now
