"""Following a persistence folder an agent is writing (the OpenHands CLI, an SDK script, the
app server's ``v1_conversations/``): looked at every second, each conversation whose files
changed is imported again, reading only the event files that are new (the app server's
layout has no positions in its names: all of its files, sorted by timestamp). A file caught
half-written is read again at the next look, not refused: what comes before it is stored
(in the app server's layout, nothing until it is whole: its timestamp places it), and it
waits its turn."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from django.db import DatabaseError
from django.db.models import Count, Max
from django.utils import timezone

from eventviewer.imports.importer import Imported, ImportFailed, import_sources
from eventviewer.imports.sources import (
    ConversationSource,
    Parsed,
    SourceError,
    find_conversations,
    index_terms,
    parse,
)
from eventviewer.models import Conversation

EVERY = 1.0  # seconds between looks: a new event file is stored within two
GRACE = 10  # seconds a problem may last before it is reported: a file being written, or
# base_state.json already naming an event whose file was not there when the folder was listed
LIVE_FOR = timedelta(seconds=30)  # "live" on the page this long after the last change
HALF_WRITTEN = "malformed JSON"  # what a file caught mid-write reads as (truncated, or empty)


@dataclass
class Problem:
    since: float
    reported: bool = False


@dataclass
class FolderWatch:
    path: Path
    say: Callable[[str], None]
    seen: dict[str, tuple] = field(default_factory=dict)  # conversation folder -> its files when imported
    problems: dict[tuple[str, str], Problem] = field(default_factory=dict)

    def look(self) -> list[Imported]:
        """Import what changed since the last look."""
        now = time.monotonic()
        current: set[tuple[str, str]] = set()
        results = []
        try:
            sources = find_conversations(self.path)
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

    def _import(self, source: ConversationSource, current: set, now: float) -> Imported | None:
        # A new event is a new file, in either layout: an SDK folder's events/, or the app server's
        # v1_conversations/<hex>/ (read back whole, sorted by timestamp, since it has no positions).
        signature = (source.expected or 0, source.files, _stamp(Path(source.where) / "base_state.json"))
        if self.seen.get(source.where) == signature:
            return None
        if source.problems:
            self._problem(current, now, source.where, "\n".join(source.problems))
            return None
        source.start = _stored_prefix(source.conversation_id, source.expected or 0)
        held: list[Parsed] = []
        in_workers = source._parsed if source.start == 0 else None  # a first import of a big folder
        terms = index_terms()
        whole = in_workers or (lambda: (parse(e, terms) for e in source.events()))
        source._parsed = lambda: _until_half_written(whole(), held)
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
        if imported.added or imported.created:
            Conversation.objects.filter(pk=imported.conversation.pk).update(live_until=timezone.now() + LIVE_FOR)
        return imported

    def _problem(self, current: set, now: float, where: str, message: str) -> None:
        """Say it once, if it lasts: most are a file being written at that moment."""
        key = (where, message)
        current.add(key)
        problem = self.problems.setdefault(key, Problem(now))
        if not problem.reported and now - problem.since >= GRACE:
            problem.reported = True
            self.say(f"still not importable after {GRACE} s (retrying while watching): {message}")


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def _stored_prefix(conversation_id: str, files: int) -> int:
    """How many of the folder's event files are stored (they are, in order, when the
    stored events are exactly positions 0..n-1): those need not be read again."""
    stored = Conversation.objects.filter(conversation_id=conversation_id).aggregate(
        count=Count("events"), last=Max("events__seq")
    )
    count = stored["count"]
    return count if count and stored["last"] == count - 1 and count <= files else 0


def _until_half_written(parsed: Iterator[Parsed], held: list[Parsed]) -> Iterator[Parsed]:
    try:
        for event in parsed:
            if event.error.startswith(HALF_WRITTEN):
                held.append(event)
                return
            yield event
    finally:
        parsed.close()  # its worker processes, if any, stop now
