"""The conversation tree, by the SDK's rules.

An explicit ``parent_id`` wins; ``"__root__"`` marks an explicit new root; a null
(or absent) ``parent_id`` is the root on the first tree event and, on a later one, a
legacy event whose parent is the previously appended tree event.
ConversationStateUpdateEvent is not a tree node. Timestamps never decide parenthood.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from .kinds import CONVERSATION_ERROR, ROOT_PARENT_ID, STATE_UPDATE


class Entry(NamedTuple):
    """What the tree needs to know of one appended event."""

    seq: int
    id: str
    kind: str
    parent_ref: str | None  # the raw parent_id; None when null or absent
    where: str = ""  # the file (and line) it came from, for messages


class Problem(NamedTuple):
    where: str
    event_id: str | None
    message: str

    def __str__(self) -> str:
        parts = [p for p in (self.where, f"event {self.event_id}" if self.event_id else "") if p]
        return ": ".join([*parts, self.message])


class TreeError(ValueError):
    """The events do not form a valid tree; ``problems`` says why, one per line."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


@dataclass
class Tree:
    """Parent links and depths of the tree events, in append order."""

    parent: dict[str, str | None] = field(default_factory=dict)
    depth: dict[str, int] = field(default_factory=dict)
    kind: dict[str, str] = field(default_factory=dict)

    def path(self, leaf: str | None) -> list[str]:
        return path_to_root(self.parent, leaf)

    def head(self, leaf_event_id: str | None, head_is_empty: bool = False) -> str | None:
        """HEAD: ``leaf_event_id`` if given; else nothing when the state says the head
        is empty; else the last tree event that is not a ConversationErrorEvent."""
        if leaf_event_id is not None:
            if leaf_event_id not in self.parent:
                raise TreeError(
                    [
                        Problem(
                            "base_state.json",
                            None,
                            f"HEAD (leaf_event_id) names event {leaf_event_id}, which does not exist",
                        )
                    ]
                )
            return leaf_event_id
        if head_is_empty:
            return None
        for event_id in reversed(self.parent):
            if self.kind[event_id] != CONVERSATION_ERROR:
                return event_id
        return None


def path_to_root(parent: Mapping[str, str | None], leaf: str | None) -> list[str]:
    """Root-first ids from the root to ``leaf`` in O(depth).

    Raises TreeError on a missing event or a cycle.
    """
    chain: list[str] = []
    seen: set[str] = set()
    current = leaf
    while current is not None:
        if current in seen:
            raise TreeError([Problem("", current, "the parent chain loops back to this event (cycle)")])
        if current not in parent:
            raise TreeError([Problem("", current, "is missing from the conversation")])
        seen.add(current)
        chain.append(current)
        current = parent[current]
    chain.reverse()
    return chain


class TreeBuilder:
    """The tree rules applied one appended event at a time, as an import streams them.

    ``add`` places each event in append order: its parent at once, and its depth when
    the parent is already placed (always, in a log the SDK wrote). ``finish`` checks the
    whole (missing parents, cycles), gives the late events their depths, and returns the
    Tree or raises TreeError listing every problem, ``add``'s included.

    ``where_of`` names the file (and line) of the event at a position, for messages;
    without it the builder keeps each entry's ``where``. An import of 100,000 files
    passes its own: a path per event would cost it 20 MB for messages it rarely writes."""

    def __init__(self, where_of: Callable[[int], str] | None = None) -> None:
        self.tree = Tree()
        self.problems: list[Problem] = []
        self.seq: dict[str, int] = {}  # every event's position, nodes or not
        self._wheres: dict[int, str] = {}
        self.where_of = where_of if where_of is not None else self._wheres.__getitem__
        self._keep_where = where_of is None
        self.non_nodes: set[str] = set()
        self.previous: str | None = None  # the last tree event appended so far

    def add(self, entry: Entry) -> bool:
        """Place one event; False when it is refused (``problems`` says why)."""
        event_id = entry.id
        if event_id == ROOT_PARENT_ID:
            self.problems.append(
                Problem(entry.where, event_id, f'"{ROOT_PARENT_ID}" is reserved and cannot be an event id')
            )
            return False
        if event_id in self.seq:
            first = self.where_of(self.seq[event_id])
            self.problems.append(Problem(entry.where, event_id, f"duplicate event id (first seen in {first})"))
            return False
        self.seq[event_id] = entry.seq
        if self._keep_where:
            self._wheres[entry.seq] = entry.where
        if entry.kind == STATE_UPDATE:
            self.non_nodes.add(event_id)
            return True
        if entry.parent_ref == ROOT_PARENT_ID:
            parent = None
        elif entry.parent_ref is not None:
            parent = entry.parent_ref
        else:
            parent = self.previous
        tree = self.tree
        tree.parent[event_id] = parent
        tree.kind[event_id] = sys.intern(entry.kind)  # a few kinds, each kept once for 100,000s of events
        if parent is None:
            tree.depth[event_id] = 0
        elif parent in tree.depth:
            tree.depth[event_id] = tree.depth[parent] + 1
        self.previous = event_id
        return True

    def where(self, event_id: str) -> str:
        return self.where_of(self.seq[event_id])

    def finish(self) -> Tree:
        tree = self.tree
        problems = self.problems
        for event_id, parent in tree.parent.items():
            if parent is None or parent in tree.parent:
                continue
            if parent in self.non_nodes:
                message = f"parent {parent} is a {STATE_UPDATE}, which is not part of the tree"
            else:
                message = f"parent {parent} does not exist"
            problems.append(Problem(self.where(event_id), event_id, message))
        if len(tree.depth) < len(tree.parent):
            _fill_depths(tree, self.where, problems)
        if problems:
            raise TreeError(problems)
        return tree


def build_tree(entries: Iterable[Entry]) -> Tree:
    """Resolve every tree event's parent and depth, or raise TreeError listing every
    duplicate id, reserved id, missing parent and cycle."""
    builder = TreeBuilder()
    for entry in sorted(entries, key=lambda e: e.seq):
        builder.add(entry)
    return builder.finish()


def _fill_depths(tree: Tree, where: Callable[[str], str], problems: list[Problem]) -> None:
    """Depth of every node, walking each chain once; reports each cycle once.
    A chain ending at a missing parent (reported by the caller) is marked like a cycle."""
    cyclic = -2  # marks nodes on or below a cycle or a missing parent, so each cycle is reported once
    depth = tree.depth
    for start in [e for e in tree.parent if e not in depth]:
        chain: list[str] = []
        on_chain: set[str] = set()
        current: str | None = start
        while current is not None and current not in depth and current in tree.parent:
            if current in on_chain:
                loop = chain[chain.index(current) :]
                message = (
                    "is its own parent (cycle)"
                    if len(loop) == 1
                    else "the parent chain loops back to this event (cycle: " + " -> ".join(loop) + ")"
                )
                problems.append(Problem(where(current), current, message))
                break
            on_chain.add(current)
            chain.append(current)
            current = tree.parent[current]
        if current is None:
            base = -1
        elif current in on_chain or current not in tree.parent:
            base = cyclic
        else:
            base = depth[current]
        for offset, event_id in enumerate(reversed(chain), start=1):
            depth[event_id] = cyclic if base == cyclic else base + offset


# Skip pointers. Each event stores its ancestor at ``anchor_depth(depth)`` (its anchor), so
# that the event at any depth of a branch is found from the leaf in (distance / spacing)
# hops from anchor to anchor and fewer than ``ANCHOR_SPACING`` steps from parent to parent,
# without reading the branch: a page of a branch a million events deep in a few thousand steps.
ANCHOR_SPACING = 1024


def anchor_depth(depth: int) -> int | None:
    """The depth of an event's anchor: the largest multiple of ANCHOR_SPACING below its
    own depth (None for a root, which has none)."""
    return None if depth <= 0 else (depth - 1) // ANCHOR_SPACING * ANCHOR_SPACING


def anchor_from_parent(parent: int, parent_depth: int, parent_anchor: int | None) -> int | None:
    """An event's anchor from its parent's: the parent itself when it sits at a multiple of
    ANCHOR_SPACING, else the parent's own anchor (the same depth). None when the parent's is
    unknown (stored before anchors were): readers then walk parents instead."""
    return parent if parent_depth % ANCHOR_SPACING == 0 else parent_anchor


def anchors(nodes: Iterable[tuple[int, int | None, int]]) -> dict[int, int | None]:
    """Each node's anchor, for (key, parent key, depth) triples of a tree (parents need not
    come first). Used to fill in the anchors of events stored before there were any."""
    ordered = sorted(nodes, key=lambda n: n[2])
    depth_of = {key: depth for key, _, depth in ordered}
    found: dict[int, int | None] = {}
    for key, parent, _ in ordered:
        found[key] = None if parent is None else anchor_from_parent(parent, depth_of[parent], found.get(parent))
    return found
