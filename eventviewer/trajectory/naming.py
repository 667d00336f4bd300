"""Branch names: what tells a branch apart from its siblings, for people to pick by.

A branch is named by its first step of its own (the first event after the last fork on
its way down from the root) and how it ends: "User: Prefer a shell script · finished".
Siblings that still read alike get what happens at their leaf, then the start of the
leaf's id. Event ids are never the name, only its tie-breaker; a branch with no fork
above it (the only branch) is named by its leaf.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .skeleton import event_label

ID_CHARS = 8  # of a leaf's id, when nothing else tells two branches apart


def own_first_step(kept: Mapping[str, Mapping[str, Any]], leaf: str) -> str | None:
    """The label of the first event below the last fork above ``leaf`` (None: no fork)."""
    node = kept[leaf]
    while node["up"] is not None and not kept[node["up"]]["branch"]:
        node = kept[node["up"]]
    if node["up"] is None:
        return None
    run = node["run"]
    if run:
        return str(run.get("first_label") or event_label(run["first_kind"]))
    return str(node.get("label") or event_label(node["kind"], summary=node.get("summary") or ""))


def leaf_label(node: Mapping[str, Any]) -> str:
    return str(node.get("label") or event_label(node["kind"], summary=node.get("summary") or ""))


def branch_names(skeleton: Mapping[str, Any]) -> dict[str, str]:
    """Every leaf's name (see the module), by leaf id; no two the same."""
    nodes = skeleton.get("nodes") or []
    kept = {node["id"]: node for node in nodes}
    leaves = [node for node in nodes if node["leaf"]]
    names: dict[str, str] = {}
    for node in leaves:
        step = own_first_step(kept, node["id"])
        names[node["id"]] = f"{step if step is not None else leaf_label(node)} · {node['outcome'] or 'open'}"
    for tie_breaker in (_with_leaf, _with_id):
        alike = _alike(names)
        if not alike:
            break
        for leaf_id in alike:
            names[leaf_id] = tie_breaker(names[leaf_id], kept[leaf_id], alike)
    return names


def _alike(names: Mapping[str, str]) -> set[str]:
    seen: dict[str, list[str]] = {}
    for leaf_id, name in names.items():
        seen.setdefault(name, []).append(leaf_id)
    return {leaf_id for group in seen.values() if len(group) > 1 for leaf_id in group}


def _with_leaf(name: str, node: Mapping[str, Any], alike: set[str]) -> str:
    return f"{name}, ends: {leaf_label(node)}"


def _with_id(name: str, node: Mapping[str, Any], alike: set[str]) -> str:
    """The shortest start of the id (ID_CHARS at least) that no other alike leaf shares."""
    leaf_id = str(node["id"])
    others = [other for other in alike if other != leaf_id]
    length = ID_CHARS
    while length < len(leaf_id) and any(other.startswith(leaf_id[:length]) for other in others):
        length += 1
    return f"{name} ({leaf_id[:length]})"
