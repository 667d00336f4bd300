"""How far an import has come: events and files read, their rates, and the time left.

The importer calls ``Progress.event`` for each event it reads and ``Progress.source``
as it starts each conversation; the command line prints ``line()`` on a terminal, and
a background import writes ``as_dict()`` where its progress page reads it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Progress:
    events_total: int | None = None  # None: not known (a JSON array is counted as it is read)
    conversations_total: int = 0
    events: int = 0
    files: int = 0  # files read: an event file each, or a whole JSON/JSONL file
    conversations: int = 0  # started so far
    current: str = ""  # where the conversation being read comes from
    started: float = field(default_factory=time.monotonic)

    def source(self, where: str) -> None:
        self.conversations += 1
        self.current = where

    def event(self, from_file: bool) -> None:
        self.events += 1
        self.files += from_file

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def rate(self, count: int) -> float:
        return count / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def seconds_left(self) -> float | None:
        rate = self.rate(self.events)
        if self.events_total is None or rate <= 0:
            return None
        return max(0.0, (self.events_total - self.events) / rate)

    def line(self) -> str:
        """One line for a terminal: counts, rates and time left."""
        total = f" of {self.events_total:,}" if self.events_total is not None else ""
        parts = [
            f"{self.events:,}{total} events",
            f"{self.rate(self.events):,.0f} events/s",
            f"{self.rate(self.files):,.0f} files/s",
            f"conversation {self.conversations:,} of {self.conversations_total:,}",
        ]
        left = self.seconds_left
        if left is not None:
            parts.append(f"ETA {int(left) // 60}:{int(left) % 60:02d}")
        return ", ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        left = self.seconds_left
        return {
            "events": self.events,
            "events_total": self.events_total,
            "files": self.files,
            "conversations": self.conversations,
            "conversations_total": self.conversations_total,
            "events_per_second": round(self.rate(self.events)),
            "files_per_second": round(self.rate(self.files)),
            "seconds_left": None if left is None else round(left),
            "current": self.current,
        }


@contextmanager
def ticking(seconds: float, tick: Callable[[], None]) -> Iterator[None]:
    """Call ``tick`` from a thread of its own as the block starts, every ``seconds``
    while it runs (whatever it is busy with), and once more at its end."""
    stop = threading.Event()

    def run() -> None:
        tick()
        while not stop.wait(seconds):
            tick()

    thread = threading.Thread(target=run, name="eventviewer-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        tick()
