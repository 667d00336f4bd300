"""Reviews: comment threads pinned to events, and where each one shows.

A comment is written on one branch (its leaf) but belongs to its event: it shows on every
branch that contains that event, so a comment on an event of a shared prefix shows on all
the branches that grew from it."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field

AUTHOR_MAX_LENGTH = 100  # characters of a reviewer's typed name


@dataclass(frozen=True)
class Note:
    """A comment as these rules see it (``parent`` is the id of the comment it answers)."""

    id: int
    event_id: str
    leaf: str
    parent: int | None = None
    resolved: bool = False


@dataclass
class Thread:
    root: Note
    replies: list[Note] = field(default_factory=list)

    @property
    def open(self) -> bool:
        return not self.root.resolved


def threads(notes: Iterable[Note]) -> list[Thread]:
    """The threads of ``notes`` (in the order written): each top-level comment with every
    reply under it, a reply to a reply included, in order. A reply whose thread is not
    among ``notes`` is dropped: it has nowhere to show."""
    found: dict[int, Thread] = {}
    root_of: dict[int, int] = {}
    for note in notes:
        if note.parent is None:
            found[note.id] = Thread(note)
            root_of[note.id] = note.id
        elif note.parent in root_of:
            root_of[note.id] = root_of[note.parent]
            found[root_of[note.id]].replies.append(note)
    return list(found.values())


def open_first(found: Sequence[Thread]) -> list[Thread]:
    """Open threads before resolved ones, each group in the order written."""
    return [t for t in found if t.open] + [t for t in found if not t.open]


@dataclass(frozen=True)
class Placed:
    thread: Thread
    elsewhere: str | None  # the leaf it was written on, when that is not the branch shown


def on_branch(found: Iterable[Thread], branch: Collection[str], leaf: str) -> dict[str, list[Placed]]:
    """The threads that show on the branch ending at ``leaf`` (``branch``: its event ids),
    by event: those whose event is on it, whichever branch they were written on."""
    shown: dict[str, list[Placed]] = {}
    for thread in found:
        if thread.root.event_id in branch:
            elsewhere = thread.root.leaf if thread.root.leaf and thread.root.leaf != leaf else None
            shown.setdefault(thread.root.event_id, []).append(Placed(thread, elsewhere))
    return shown


def reviewer_name(typed: str, note: str) -> str:
    """How a share-link reviewer is shown: the name they typed, and the link's note."""
    return f"{typed} (via share link: {note})" if note else f"{typed} (via share link)"


@dataclass(frozen=True)
class Written:
    """A comment as an export writes it."""

    author: str
    when: str
    body: str
    labels: tuple[str, ...] = ()
    resolved: bool = False
