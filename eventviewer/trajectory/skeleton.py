"""The skeleton: the tree with every linear run folded into its lower end.

Kept as their own nodes: roots, branch points, leaves and HEAD. Every other event
belongs to the run above the next such node. The skeleton is computed once per
import (or HEAD change) and stored, so drawing the diagram never loads the whole
conversation; its size grows with the number of branches, not of events.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from operator import attrgetter
from typing import Any, NamedTuple

from . import kinds
from .events import Light
from .kinds import SIDE_KINDS


class Node(NamedTuple):
    """A tree event as the skeleton needs it."""

    id: str
    parent: str | None
    seq: int
    depth: int
    kind: str
    outcome: str  # how a branch ending here ends (see kinds.outcome)
    timestamp: str = ""
    summary: str = ""

    @classmethod
    def of(cls, event: Light, parent: str | None, depth: int | None = None) -> Node:
        """The node of a placed tree event (its parent's id; its depth if not stored in it)."""
        depth = event.depth if depth is None else depth
        assert depth is not None, "only tree events are nodes"
        return cls(event.event_id, parent, event.seq, depth, event.kind, kinds.outcome(event))


def build_skeleton(nodes: Iterable[Node], head: str | None) -> dict[str, Any]:
    """A JSON-ready skeleton: ``{"events": n, "head": id, "nodes": [...]}``.

    Each node: id, up (nearest kept ancestor), run (the folded events between up and
    this node: count, first/last id and kind) or None, kind, depth, seq, timestamp,
    summary, children, flags root/branch/leaf/head, outcome (leaves only), and for its
    subtree: leaves, events, latest_leaf (the most recently appended leaf).

    Side events (see ``side_events``) are not nodes: each kept node counts those that
    hang on it in ``side``, and each run those that hang on its events.
    """
    by_id = {n.id: n for n in nodes}
    side_on: dict[str, int] = {}
    for event_id in side_events(by_id.values(), head):
        hangs_on = by_id.pop(event_id).parent
        if hangs_on is not None:  # always: a side event has a parent
            side_on[hangs_on] = side_on.get(hangs_on, 0) + 1
    children: dict[str, int] = {}  # how many; most nodes have one, so no lists of them
    for n in by_id.values():
        if n.parent is not None:
            children[n.parent] = children.get(n.parent, 0) + 1

    # Subtree totals, deepest first: each node adds its totals to its parent's, which
    # comes later. (leaves, events, latest leaf) per node, set when it is first reached.
    order = sorted(by_id.values(), key=attrgetter("depth"), reverse=True)
    totals: dict[str, tuple[int, int, str]] = {}
    for n in order:
        leaves, events, latest = totals.get(n.id) or (1, 0, n.id)  # a leaf when no child added to it
        totals[n.id] = (leaves, events + 1, latest)
        if n.parent is not None:
            above = totals.get(n.parent)
            if above is None:
                totals[n.parent] = (leaves, events + 1, latest)
            else:
                newer = latest if by_id[latest].seq > by_id[above[2]].seq else above[2]
                totals[n.parent] = (above[0] + leaves, above[1] + events + 1, newer)

    kept_ids = {n.id for n in by_id.values() if n.parent is None or children.get(n.id, 0) != 1}
    if head is not None:
        kept_ids.add(head)

    # Top-down: carry the nearest kept ancestor and the run of folded events below it,
    # as (up, first event of the run, events in the run) so memory stays per event small.
    result: list[dict[str, Any]] = []
    carry: dict[str, tuple[str | None, str | None, int, int]] = {}
    for n in reversed(order):
        parent = by_id[n.parent] if n.parent is not None else None
        if parent is None:
            up, first, count, side = None, None, 0, 0
        elif parent.id in kept_ids:
            up, first, count, side = parent.id, None, 0, 0
        else:
            up, first, count, side = carry[parent.id]
        if n.id not in kept_ids:
            carry[n.id] = (up, first or n.id, count + 1, side + side_on.get(n.id, 0))
            continue
        run = None
        if first is not None and parent is not None:  # a run of `count` events folds into this node
            run = {
                "count": count,
                "first": first,
                "first_kind": by_id[first].kind,
                "last": parent.id,
                "last_kind": parent.kind,
                "side": side,
            }
        child_count = children.get(n.id, 0)
        leaves, events, latest = totals[n.id]
        result.append(
            {
                "id": n.id,
                "up": up,
                "run": run,
                "kind": n.kind,
                "depth": n.depth,
                "seq": n.seq,
                "timestamp": n.timestamp,
                "summary": n.summary,
                "children": child_count,
                "root": n.parent is None,
                "branch": child_count > 1,
                "leaf": child_count == 0,
                "head": n.id == head,
                "outcome": n.outcome if child_count == 0 else None,
                "leaves": leaves,
                "events": events,
                "latest_leaf": latest,
                "side": side_on.get(n.id, 0),
            }
        )
    result.sort(key=lambda node: node["seq"])
    return {"events": len(by_id), "head": head, "nodes": result}


def side_events(nodes: Iterable[Node], head: str | None = None) -> set[str]:
    """The side events among ``nodes``: dead-end leaves of a side kind (hooks, token
    counts, completion logs) that ran beside another event, the one that shares their
    parent. They hang on that parent instead of ending a branch of their own. HEAD is
    never one, nor a side-kind leaf with no other event beside it (it ends its line)."""
    nodes = list(nodes)
    parents = {n.parent for n in nodes}
    side_kind_leaf = {n.id for n in nodes if n.kind in SIDE_KINDS and n.id not in parents}
    beside_something = {n.parent for n in nodes if n.id not in side_kind_leaf}
    return {
        n.id for n in nodes if n.id in side_kind_leaf and n.id != head and n.parent in beside_something and n.parent
    }


def latest_leaf_below(skeleton: dict[str, Any], path: list[str]) -> str | None:
    """The most recently appended leaf under the last event of ``path`` (root-first
    ids): the event itself if kept, else the kept node ending the run it lies in."""
    if not path:
        return None
    kept = {node["id"]: node for node in skeleton.get("nodes", [])}
    if path[-1] in kept:
        leaf: str = kept[path[-1]]["latest_leaf"]
        return leaf
    for i in range(len(path) - 2, -1, -1):
        if path[i] in kept:
            first = path[i + 1]
            for node in kept.values():
                run_first = node["run"]["first"] if node["run"] else node["id"]
                if node["up"] == path[i] and run_first == first:
                    leaf = node["latest_leaf"]
                    return leaf
            return None
    return None


def event_label(kind: str, source: str = "", tool_name: str = "", summary: str = "", command: str = "") -> str:
    """What happened at an event, in a few words for the diagram and the branch list: the
    tool and its command, who spoke and their first words, or the kind of result (each
    kind's ``caption``)."""
    rules = kinds.kind_of(kind)
    return rules.caption(rules.word or kind.removesuffix("Event") or kind, source, tool_name, summary or "", command)


class Branch(NamedTuple):
    """A row of the branch list: what sets a branch apart from the selected one."""

    leaf: str
    label: str  # what happens at its leaf
    depth: int  # of its leaf; the branch holds depth + 1 events
    outcome: str
    head: bool
    seq: int  # of its leaf: the most recent branch has the largest
    timestamp: str
    fork: str | None  # the last event it shares with the selected branch (None: it is that branch, or apart)
    fork_depth: int | None
    first: str | None  # its first event after the fork
    first_label: str  # what happens there: the first message or action of its own
    pending: int | None = None  # actions without a result on it (None: not counted yet)
    mismatched: int | None = None  # results on it that do not fit their action

    @property
    def length(self) -> int:
        return self.depth + 1

    @property
    def problems(self) -> int | None:
        if self.pending is None or self.mismatched is None:
            return None
        return self.pending + self.mismatched


def describe_branches(
    skeleton: dict[str, Any],
    selected: Iterable[str],
    problems: Mapping[str, tuple[int, int]] | None = None,
    end: Light | None = None,
) -> list[Branch]:
    """Every leaf of the skeleton as a Branch, most recent first. ``selected`` holds the ids
    of the selected branch's events (only its kept ones matter): a leaf's fork is its
    nearest kept ancestor among them, and its first event of its own is the one just below.
    ``problems``: each leaf's (pending, mismatched), when counted. ``end``: the selected
    branch's last event, listed too when it is no leaf (HEAD above the conversation errors
    its rule passes over, or a branch opened at an inner event)."""
    problems = problems or {}
    nodes = skeleton.get("nodes") or []
    kept = {node["id"]: node for node in nodes}
    on_path = {i for i in selected if i in kept}
    # For each kept node: (fork, the kept node just below the fork on the way to it).
    memo: dict[str | None, tuple[str | None, str | None]] = {}

    def fork_of(node_id: str) -> tuple[str | None, str | None]:
        chain = []
        current: str | None = node_id
        while current is not None and current not in on_path and current not in memo:
            chain.append(current)
            current = kept[current]["up"]
        # On the path (the fork), already known, or None: a tree of its own, apart from the selection.
        found = memo[current] if current in memo else (current, chain[-1] if chain else None)
        for below in chain:
            memo[below] = found
        return found

    branches = []
    for node in nodes:
        if not node["leaf"]:
            continue
        fork, side = (None, None) if node["id"] in on_path else fork_of(node["id"])
        first, first_label = None, ""
        if side is not None:
            run = kept[side]["run"]
            if run:
                first, first_label = run["first"], run.get("first_label") or event_label(run["first_kind"])
            else:
                first, first_label = side, kept[side].get("label") or event_label(kept[side]["kind"])
        branches.append(
            Branch(
                node["id"],
                node.get("label") or event_label(node["kind"], summary=node.get("summary") or ""),
                node["depth"],
                node["outcome"] or "open",
                bool(node["head"]),
                node["seq"],
                node.get("timestamp") or "",
                fork,
                kept[fork]["depth"] if fork is not None else None,
                first,
                first_label,
                *problems.get(node["id"], (None, None)),
            )
        )
    if end is not None and end.depth is not None and not kept.get(end.event_id, {}).get("leaf"):
        branches.append(
            Branch(
                end.event_id,
                kept.get(end.event_id, {}).get("label")
                or event_label(end.kind, end.source, end.tool_name, end.summary),
                end.depth,
                kinds.outcome(end),
                end.event_id == skeleton.get("head"),
                end.seq,
                end.timestamp,
                None,
                None,
                None,
                "",
                *problems.get(end.event_id, (None, None)),
            )
        )
    branches.sort(key=lambda b: b.seq, reverse=True)
    return branches
