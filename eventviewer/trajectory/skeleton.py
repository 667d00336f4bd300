"""The skeleton: the tree with every linear run folded into its lower end.

Kept as their own nodes: roots, branch points, leaves and HEAD. Every other event
belongs to the run above the next such node. The skeleton is computed once per
import (or HEAD change) and stored, so drawing the diagram never loads the whole
conversation; its size grows with the number of branches, not of events.
"""

from __future__ import annotations

from collections.abc import Iterable
from operator import attrgetter
from typing import Any, NamedTuple


class Node(NamedTuple):
    id: str
    parent: str | None
    seq: int
    depth: int
    kind: str
    outcome: str  # how a branch ending here ends (see kinds.outcome)
    timestamp: str
    summary: str


def build_skeleton(nodes: Iterable[Node], head: str | None) -> dict[str, Any]:
    """A JSON-ready skeleton: ``{"events": n, "head": id, "nodes": [...]}``.

    Each node: id, up (nearest kept ancestor), run (the folded events between up and
    this node: count, first/last id and kind) or None, kind, depth, seq, timestamp,
    summary, children, flags root/branch/leaf/head, outcome (leaves only), and for its
    subtree: leaves, events, latest_leaf (the most recently appended leaf).
    """
    by_id = {n.id: n for n in nodes}
    children: dict[str, list[str]] = {}
    for n in by_id.values():
        if n.parent is not None:
            children.setdefault(n.parent, []).append(n.id)

    # Subtree totals, deepest first, so each node sees its children's totals. Most
    # nodes have one child: that case is a copy, not a sum.
    order = sorted(by_id.values(), key=attrgetter("depth"), reverse=True)
    leaves: dict[str, int] = {}
    events: dict[str, int] = {}
    latest: dict[str, str] = {}
    for n in order:
        i = n.id
        kids = children.get(i)
        if kids is None:
            leaves[i], events[i], latest[i] = 1, 1, i
        elif len(kids) == 1:
            k = kids[0]
            leaves[i], events[i], latest[i] = leaves[k], events[k] + 1, latest[k]
        else:
            leaves[i] = sum(leaves[k] for k in kids)
            events[i] = 1 + sum(events[k] for k in kids)
            latest[i] = max((latest[k] for k in kids), key=lambda leaf: by_id[leaf].seq)

    kept_ids = {n.id for n in by_id.values() if n.parent is None or len(children.get(n.id, ())) != 1}
    if head is not None:
        kept_ids.add(head)

    # Top-down: carry the nearest kept ancestor and the run of folded events below it,
    # as (up, first event of the run, events in the run) so memory stays per event small.
    result: list[dict[str, Any]] = []
    carry: dict[str, tuple[str | None, str | None, int]] = {}
    for n in reversed(order):
        parent = by_id[n.parent] if n.parent is not None else None
        if parent is None:
            up, first, count = None, None, 0
        elif parent.id in kept_ids:
            up, first, count = parent.id, None, 0
        else:
            up, first, count = carry[parent.id]
        if n.id not in kept_ids:
            carry[n.id] = (up, first or n.id, count + 1)
            continue
        run = None
        if first is not None and parent is not None:  # a run of `count` events folds into this node
            run = {
                "count": count,
                "first": first,
                "first_kind": by_id[first].kind,
                "last": parent.id,
                "last_kind": parent.kind,
            }
        child_count = len(children.get(n.id, ()))
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
                "leaves": leaves[n.id],
                "events": events[n.id],
                "latest_leaf": latest[n.id],
            }
        )
    result.sort(key=lambda node: node["seq"])
    return {"events": len(by_id), "head": head, "nodes": result}


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
