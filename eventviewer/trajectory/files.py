"""What the agent did to the workspace's files, read from its tools' results.

- ``file_editor`` (FileEditorObservation) records the command, the path and the whole file
  before and after (``old_content``, ``new_content``): create, str_replace, insert and
  undo_edit are exact changes. A failed edit changed nothing.
- A terminal command (TerminalObservation's ``command``) is read best effort (``shell``).
  A command that is neither a write it recognises nor a read (``ls``, ``cat``, ``grep`` …)
  may have changed anything: it is a *command*. So is a sub-agent's task, which runs in the
  same workspace.

A branch is a path in the event tree, not a snapshot of the file system: going back to an
earlier event and carrying on from there undoes nothing on disk. ``drift`` finds the edits
and commands that ran on other branches after the points where a branch forked from them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property, lru_cache
from typing import Any, NamedTuple

from .diff import Budget, Diff, added, unified
from .shell import Shell, read_command

EDIT = "edit"  # a file change eventviewer recognised
COMMAND = "command"  # a command that may have changed files, in ways it cannot tell

FILE_EDITOR_RESULTS = frozenset({"FileEditorObservation", "StrReplaceEditorObservation"})
TERMINAL_RESULTS = frozenset({"TerminalObservation", "ExecuteBashObservation", "CmdOutputObservation"})
TASK_RESULTS = frozenset({"TaskObservation"})
EDITOR_WRITES = frozenset({"create", "str_replace", "insert", "undo_edit"})

_CD = re.compile(r"(^|[\s;&|(])cd(\s|$)")


# --- one event ----------------------------------------------------------------------------


def _observation(data: Mapping[str, Any]) -> dict[str, Any]:
    observation = data.get("observation")
    return observation if isinstance(observation, dict) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def effect(data: Mapping[str, Any]) -> str:
    """What a tool's result says its call did to the workspace: EDIT (a file change it
    recorded, or a terminal command recognised as writing files), COMMAND (a command or
    sub-agent task that may have changed files), or "" (nothing: a read, a failed edit)."""
    observation = _observation(data)
    kind = observation.get("kind")
    if kind in FILE_EDITOR_RESULTS:
        if observation.get("command") in EDITOR_WRITES and observation.get("is_error") is not True:
            return EDIT
        return ""
    if kind in TERMINAL_RESULTS:
        command = _text(observation.get("command"))
        return _command_effect(command) if len(command) <= CACHED_COMMAND_CHARS else _effect_of(read_command(command))
    if kind in TASK_RESULTS:
        return COMMAND
    return ""


# An agent runs the same few commands again and again (ls, git status, the tests): each
# import reads each short one once. At most 512 kept, of up to 2,000 characters.
CACHED_COMMAND_CHARS = 2000


@lru_cache(maxsize=512)
def _command_effect(command: str) -> str:
    return _effect_of(read_command(command))


def _effect_of(shell: Shell) -> str:
    return EDIT if shell.writes else COMMAND if shell.unknown else ""


def label(data: Mapping[str, Any]) -> str:
    """A result's call in a few words: the command, or the editor command and its path."""
    observation = _observation(data)
    command, path = observation.get("command"), observation.get("path")
    if isinstance(command, str) and command:
        return f"{command} {path}" if isinstance(path, str) and path else command
    if observation.get("kind") in TASK_RESULTS:
        return "a sub-agent's task"
    return _text(data.get("tool_name"))


def working_dir(data: Mapping[str, Any]) -> str:
    """The terminal's working directory after this result, when it says."""
    metadata = _observation(data).get("metadata")
    return _text(metadata.get("working_dir")) if isinstance(metadata, dict) else ""


@dataclass
class Change:
    """One change to one file, as one event recorded it."""

    event_id: str  # the result that recorded it
    path: str
    op: str  # "create", "edit", "insert", "undo", "delete", "move", "write", "append", "touch"
    exact: bool  # the file's whole content before and after is known (file_editor)
    diff: Diff = field(default_factory=Diff)
    command: str = ""  # the terminal command that made it
    source: str = ""  # a move's origin
    note: str = ""  # what is not known about it
    texts: tuple[str, str] | None = None  # the whole file before and after (exact changes), until ``by_file``


_EDITOR_OPS = {"create": "create", "str_replace": "edit", "insert": "insert", "undo_edit": "undo"}


def changes(
    event_id: str, data: Mapping[str, Any], cwd: str = "", budget: Budget | None = None, whole: bool = False
) -> list[Change]:
    """The file changes one result records (a file_editor edit, or what a terminal
    command recognisably wrote), its diffs bounded (``budget``: the time their line
    matching may take, shared with the page's other diffs; ``whole``: uncut, for a
    download). ``cwd``: the terminal's working directory before the command, when known."""
    observation = _observation(data)
    kind = observation.get("kind")
    if kind in FILE_EDITOR_RESULTS:
        command = observation.get("command")
        path = _text(observation.get("path"))
        if command not in EDITOR_WRITES or observation.get("is_error") is True or not path:
            return []
        old, new = observation.get("old_content"), observation.get("new_content")
        op = "create" if command == "create" and not observation.get("prev_exist") else _EDITOR_OPS[command]
        if not isinstance(new, str):
            return [Change(event_id, path, op, False, note="the result does not hold the file's content")]
        before = old if isinstance(old, str) else ""
        diff = unified(
            before, new, "/dev/null" if op == "create" else f"a{path}", f"b{path}", budget=budget, whole=whole
        )
        return [Change(event_id, path, op, True, diff, texts=(before, new))]
    if kind in TERMINAL_RESULTS:
        command = _text(observation.get("command"))
        found = []
        # The working directory a result reports is where the command ended: where it
        # started too, unless it changed directory.
        start = cwd or ("" if _CD.search(command) else working_dir(data))
        for write in read_command(command, start).writes:
            change = Change(event_id, write.path, write.op, False, command=command, source=write.source)
            if write.content is not None and write.op in ("write", "append"):
                change.diff = added(write.content, write.path, whole)
                if write.op == "write":
                    change.note = "what the file held before is not recorded"
            elif write.op not in ("delete", "move"):
                change.note = "the command does not say what it wrote"
            found.append(change)
        return found
    return []


@dataclass
class FileHistory:
    """Every change a branch made to one file, in order."""

    path: str
    changes: list[Change] = field(default_factory=list)
    net: Diff | None = None  # from before its first change to after its last, when both are exact

    @property
    def added(self) -> int:
        return sum(c.diff.added for c in self.changes)

    @property
    def removed(self) -> int:
        return sum(c.diff.removed for c in self.changes)

    @property
    def status(self) -> str:
        """How the branch left the file: created, deleted, moved away or edited."""
        ops = [c.op for c in self.changes]
        if ops[-1] == "delete":
            return "deleted"
        if ops[0] == "create":
            return "created"
        return "edited"


def by_file(found: Iterable[Change], budget: Budget | None = None) -> list[FileHistory]:
    """Changes grouped by file, in the order the files were first changed; a move counts
    as a change of its destination and (as a deletion) of its origin. A file changed more
    than once, first and last by exact changes, has its net diff (matched within ``budget``)."""
    files: dict[str, FileHistory] = {}
    for change in found:
        files.setdefault(change.path, FileHistory(change.path)).changes.append(change)
        if change.op == "move" and change.source:
            gone = Change(change.event_id, change.source, "delete", False, command=change.command)
            gone.note = f"moved to {change.path}"
            files.setdefault(change.source, FileHistory(change.source)).changes.append(gone)
    for history in files.values():
        first, last = history.changes[0], history.changes[-1]
        if len(history.changes) > 1 and first.texts is not None and last.texts is not None:
            old_name = "/dev/null" if first.op == "create" else f"a{history.path}"
            history.net = unified(first.texts[0], last.texts[1], old_name, f"b{history.path}", budget=budget)
        for change in history.changes:
            change.texts = None  # the files' texts go with the payloads they came from
    return list(files.values())


# --- other branches -----------------------------------------------------------------------


class Ran(NamedTuple):
    """An event that may have changed the workspace (see ``effect``)."""

    event_id: str
    pk: int
    parent_pk: int | None
    effect: str  # EDIT or COMMAND
    timestamp: str


class Fork(NamedTuple):
    """A point where the branch forked from others, and what ran on them after it."""

    event_id: str
    edits: int
    commands: int
    ran: list[Ran]  # in append order; the first ``keep`` of them when ``drift`` was asked to keep fewer


@dataclass
class Drift:
    """Edits and commands that ran on other branches after the points where this one
    forked from them: the workspace may not match what this branch shows."""

    forks: list[Fork] = field(default_factory=list)  # in path order

    @property
    def edits(self) -> int:
        return sum(f.edits for f in self.forks)

    @property
    def commands(self) -> int:
        return sum(f.commands for f in self.forks)

    @cached_property
    def _by_event(self) -> dict[str, Fork]:
        return {fork.event_id: fork for fork in self.forks}

    def fork_at(self, event_ids: Iterable[str]) -> Fork | None:
        """The fork point among these events (a turn's), if one is."""
        return next((self._by_event[e] for e in event_ids if e in self._by_event), None)

    def __bool__(self) -> bool:
        return bool(self.forks)


def drift(
    path: Sequence[Any],
    elsewhere: Iterable[Ran],
    parent_of: Mapping[int, int | None],
    timestamps: Mapping[int, str],
    keep: int | None = None,
) -> Drift:
    """What ran off ``path`` (root first, events with ``pk``, ``event_id``) after the point
    where it forked from the path, by timestamp.

    ``elsewhere``: the conversation's events that may have changed the workspace;
    ``parent_of``: every tree event's parent (by pk); ``timestamps``: the path's events'.
    An event's fork point is its deepest ancestor on the path; one in another tree (a
    second root) counts from the path's root. An event whose time or whose fork point's
    time cannot be read counts: it may have run later. Each fork lists the first ``keep``
    events that ran after it (all of them by default) and counts them all."""
    on_path = {e.pk: e.event_id for e in path}
    if not on_path:
        return Drift()
    root = path[0].pk
    fork_of: dict[int, int] = {}
    found: dict[int, list[Ran]] = {}
    for ran in elsewhere:
        if ran.pk in on_path:
            continue
        chain = [ran.pk]
        current: int | None = ran.parent_pk
        while current is not None and current not in on_path and current not in fork_of:
            chain.append(current)
            current = parent_of.get(current)
        fork = root if current is None else current if current in on_path else fork_of[current]
        for pk in chain:
            fork_of[pk] = fork
        if _later(ran.timestamp, timestamps.get(fork, "")):
            found.setdefault(fork, []).append(ran)
    order = {pk: i for i, pk in enumerate(on_path)}
    forks = []
    for pk in sorted(found, key=order.__getitem__):
        after = found[pk]
        edits = sum(1 for r in after if r.effect == EDIT)
        forks.append(Fork(on_path[pk], edits, len(after) - edits, after[:keep]))
    return Drift(forks)


def _later(timestamp: str, than: str) -> bool:
    try:
        return datetime.fromisoformat(timestamp) > datetime.fromisoformat(than)
    except (ValueError, TypeError):
        return True
