"""The branch diagram: the stored skeleton drawn as a Graphviz graph, then as inline SVG.

``diagram_nodes`` decides what to draw: the skeleton's kept events and runs, with the
runs the selected path crosses split at the selected event and at its pending or
mismatched events, then compressed to at most ``max_nodes`` nodes. ``build_dot``
writes it as DOT, ``render_svg`` runs ``dot`` and sanitizes the SVG for inlining.

Every string taken from events (ids, kinds, summaries, timestamps) is untrusted model
or tool output: it only ever reaches DOT as an escaped quoted string, never as an id
or a URL, and the SVG is sanitized again afterwards with an allowlist.
"""

from __future__ import annotations

import html
import re
import unicodedata
import xml.etree.ElementTree as ET
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import graphviz

PROBLEM_KINDS = ("pending", "mismatched")
MAX_PROBLEM_NODES = 60
MAX_KEPT_SIBLINGS = 16  # when folding, more side branches than this side by side are unreadable
MIN_NODES = 24  # below this the must-keep nodes (roots, selection, HEAD, their folds) may not fit
LABEL_CHARS = 40
TOOLTIP_CHARS = 200

FONT = "DejaVu Sans"
PATH_COLOUR = "#1f6feb"
EDGE_COLOUR = "#8c959f"
BORDER = "#57606a"
OUTCOME_FILL = {
    "finished": "#dafbe1",
    "error": "#ffcecb",
    "rejected": "#e8ddf7",
    "pending": "#fff1c2",
    "open": "#f6f8fa",
}
PROBLEM_FILL = {"pending": "#ffd33d", "mismatched": "#ff8182"}
PROBLEM_BORDER = {"pending": "#9a6700", "mismatched": "#cf222e"}
FOLD_FILL = "#eaeef2"


class PathEvent(Protocol):
    event_id: str
    kind: str
    depth: int


@dataclass(eq=False, slots=True)
class DiagramNode:
    """One drawn node. Its DOT name and SVG id are ``n{index}``."""

    role: str  # "event", "run" (folded events), "fold" (off-path subtrees) or "merged" (a stretch of a spine)
    depth: int  # the event's depth; a run's first depth
    bottom: int  # the deepest depth it covers (== depth for an event)
    count: int  # events this node stands for itself
    event_id: str | None = None  # events only
    kind: str = ""
    node: dict[str, Any] | None = None  # the skeleton node of a kept event
    summary: str = ""
    timestamp: str = ""
    first_kind: str | None = None
    last_kind: str | None = None
    problem: str | None = None  # "pending" or "mismatched"
    contains: dict[str, int] = field(default_factory=dict)  # problems folded inside a run
    branches: int = 0  # fold: leaves folded; merged: side branches absorbed
    side_events: int = 0  # merged: events in the absorbed side branches (not in ``count``)
    sub_events: int = 0  # events in its whole subtree, itself included
    sub_leaves: int = 0
    latest: str | None = None  # the most recently appended leaf below (or itself)
    on_path: bool = False
    selected: bool = False
    head: bool = False
    spine: bool = False  # kept through compression: the selected path, HEAD's ancestry, roots
    parent: int | None = None
    children: list[int] = field(default_factory=list)
    index: int = -1

    @property
    def link_to(self) -> str | None:
        """The event a click selects: a leaf, HEAD or the selection itself, else the latest leaf below."""
        if self.role == "event" and (self.selected or self.head or (self.node is not None and self.node["leaf"])):
            return self.event_id
        return self.latest

    @property
    def classes(self) -> list[str]:
        if self.role == "fold":
            return ["fold"]
        if self.role in ("run", "merged"):
            names = ["run"] + (["merged"] if self.role == "merged" else [])
            names += [f"contains-{p}" for p in PROBLEM_KINDS if self.contains.get(p)]
            return names + (["onpath"] if self.on_path else [])
        names = ["event"]
        if self.node is not None:
            names += [flag for flag in ("root", "branch", "leaf") if self.node[flag]]
            if self.node["leaf"] and self.node["outcome"] in OUTCOME_FILL:
                names.append(f"outcome-{self.node['outcome']}")
        names += [flag for flag in ("head", "selected") if getattr(self, flag)]
        if self.problem:
            names.append(self.problem)
        return names + (["onpath"] if self.on_path else [])


def diagram_nodes(
    skeleton: Mapping[str, Any],
    *,
    path: Sequence[PathEvent],
    problems: Mapping[str, str],
    max_nodes: int = 250,
) -> list[DiagramNode]:
    """The nodes to draw, parents before children, each with its final ``index``."""
    max_nodes = max(max_nodes, MIN_NODES)
    plan = _Plan(skeleton, path, problems)
    plan.mark_spine(max_nodes // 4)
    plan.fold_side_branches(max_nodes)
    if plan.total > max_nodes:
        plan.merge_spines(max_nodes)
    return plan.result()


class _Plan:
    """The working graph: items in creation order (parents first) and the top-level items."""

    def __init__(self, skeleton: Mapping[str, Any], path: Sequence[PathEvent], problems: Mapping[str, str]):
        nodes = sorted(skeleton.get("nodes") or (), key=lambda n: (n["depth"], n["seq"]))
        self.by_id: dict[str, dict[str, Any]] = {n["id"]: n for n in nodes}
        self.items: list[DiagramNode] = []
        self.tops: list[int] = []
        self.steps, self.on_kept, cut = _follow(path, nodes, self.by_id)
        last = len(self.steps) - 1
        split, folded = self._problem_depths(problems)

        item_of: dict[str, int] = {}
        self.selected: int | None = None
        for n in nodes:
            parent = item_of.get(n["up"]) if n["up"] is not None else None
            run = n["run"]
            if run:
                crossed = n["id"] in self.on_kept or n["id"] == cut
                lo, hi = n["depth"] - run["count"], n["depth"] - 1
                cuts = split[bisect_left(split, lo) : bisect_right(split, min(hi, last))] if crossed else []
                if n["id"] == cut:
                    cuts = sorted({*cuts, last})
                cursor = lo
                for depth in [*cuts, hi + 1]:
                    if cursor < depth:
                        parent = self._add(self._run(n, cursor, depth - 1, crossed, folded), parent)
                    if depth <= hi:
                        parent = self._add(self._split_event(n, depth, problems), parent)
                        if depth == last:
                            self.selected = parent
                    cursor = depth + 1
            on_path = n["id"] in self.on_kept
            problem = problems.get(n["id"]) if on_path else None
            box = DiagramNode(
                "event",
                n["depth"],
                n["depth"],
                1,
                event_id=n["id"],
                kind=n["kind"],
                node=n,
                summary=n.get("summary") or "",
                timestamp=n.get("timestamp") or "",
                problem=problem if problem in PROBLEM_KINDS else None,
                on_path=on_path,
                head=bool(n["head"]),
                selected=on_path and n["depth"] == last,
            )
            item_of[n["id"]] = self._add(box, parent, n)
            if box.selected:
                self.selected = item_of[n["id"]]
        self.head = item_of.get(skeleton.get("head") or "")
        self.total = len(self.items)

    def _problem_depths(self, problems: Mapping[str, str]) -> tuple[list[int], dict[str, list[int]]]:
        """Depths of the path's problems inside runs that get their own node (the deepest
        MAX_PROBLEM_NODES), and per kind the depths of the rest, left folded in their runs."""
        inside = [
            d
            for d, step in enumerate(self.steps)
            if problems.get(step.event_id) in PROBLEM_KINDS and step.event_id not in self.by_id
        ]
        split = inside[-MAX_PROBLEM_NODES:]
        folded: dict[str, list[int]] = {kind: [] for kind in PROBLEM_KINDS}
        for d in inside[: max(0, len(inside) - MAX_PROBLEM_NODES)]:
            folded[problems[self.steps[d].event_id]].append(d)
        return split, folded

    def _run(self, n: dict, lo: int, hi: int, crossed: bool, folded: dict[str, list[int]]) -> DiagramNode:
        run, last = n["run"], len(self.steps) - 1

        # A crossed run is a chain of path events; below the selection only the run's own ends are known.
        def kind_at(depth: int, end: int, end_kind: str) -> str | None:
            return self.steps[depth].kind if crossed and depth <= last else end_kind if depth == end else None

        first_kind = kind_at(lo, n["depth"] - run["count"], run["first_kind"])
        last_kind = kind_at(hi, n["depth"] - 1, run["last_kind"])
        contains = {}
        if crossed:
            for kind, depths in folded.items():
                if inside := bisect_right(depths, hi) - bisect_left(depths, lo):
                    contains[kind] = inside
        box = DiagramNode(
            "run",
            lo,
            hi,
            hi - lo + 1,
            first_kind=first_kind,
            last_kind=last_kind,
            contains=contains,
            on_path=crossed and hi <= last,
        )
        return _totals(box, n)

    def _split_event(self, n: dict, depth: int, problems: Mapping[str, str]) -> DiagramNode:
        step = self.steps[depth]
        problem = problems.get(step.event_id)
        box = DiagramNode(
            "event",
            depth,
            depth,
            1,
            event_id=step.event_id,
            kind=step.kind,
            summary=getattr(step, "summary", "") or "",
            timestamp=str(getattr(step, "timestamp", "") or ""),
            problem=problem if problem in PROBLEM_KINDS else None,
            on_path=True,
            selected=depth == len(self.steps) - 1,
        )
        return _totals(box, n)

    def _add(self, box: DiagramNode, parent: int | None, kept: dict | None = None) -> int:
        if kept is not None:
            _totals(box, kept)
        box.parent = parent
        self.items.append(box)
        index = len(self.items) - 1
        (self.items[parent].children if parent is not None else self.tops).append(index)
        return index

    def _seq(self, leaf: str | None) -> int:
        return self.by_id[leaf]["seq"] if leaf in self.by_id else -1

    def mark_spine(self, other_roots: int) -> None:
        """Never folded: the selected path, HEAD's ancestry and the most recent roots."""
        items = self.items
        for start in (self.selected, self.head):
            i = start
            while i is not None and not items[i].spine:
                items[i].spine = True
                i = items[i].parent
        for box in items:
            box.spine = box.spine or box.on_path
        rest = [t for t in self.tops if not items[t].spine]
        rest.sort(key=lambda t: (self._seq(items[t].latest), t), reverse=True)
        for t in rest[:other_roots]:
            items[t].spine = True
        self.size = [1] * len(items)
        for i in range(len(items) - 1, -1, -1):
            if items[i].parent is not None:
                self.size[items[i].parent] += self.size[i]
        self.dist = self._distances()

    def _distances(self) -> dict[int, int]:
        """For spine items: how many events away from the selection (or HEAD) they are."""
        items, ref = self.items, self.selected if self.selected is not None else self.head
        dist: dict[int, int] = {}
        if ref is None:
            return {i: box.bottom for i, box in enumerate(items) if box.spine}
        ref_depth, i = items[ref].bottom, ref
        on_ref: set[int] = set()
        while i is not None:
            on_ref.add(i)
            dist[i] = ref_depth - items[i].bottom
            i = items[i].parent
        fork: dict[int, int] = {}
        for i, box in enumerate(items):
            if not box.spine or i in on_ref:
                continue
            p = box.parent
            fork[i] = -1 if p is None else items[p].bottom if p in on_ref else fork[p]
            dist[i] = (ref_depth - fork[i]) + (box.bottom - fork[i])
        return dist

    def _off(self, parent: int | None) -> list[int]:
        kids = self.tops if parent is None else self.items[parent].children
        return [c for c in kids if not self.items[c].spine]

    def fold_side_branches(self, max_nodes: int) -> None:
        """Fold the off-spine subtrees hanging from spine items, farthest from the selection
        first, each spine item's into one fold node; the last one only as much as needed
        (keeping its most recent subtrees whole)."""
        if self.total <= max_nodes:
            return
        groups: list[tuple[float, int, int | None]] = [(float("inf"), -1, None)]
        groups += [(self.dist[i], i, i) for i, box in enumerate(self.items) if box.spine]
        groups.sort(key=lambda g: (-g[0], g[1]))
        for _, _, parent in groups:
            off = self._off(parent)
            sizes = sum(self.size[c] for c in off)
            if sizes <= 1:
                continue
            after = self.total - sizes + 1
            keep: list[int] = []
            if after <= max_nodes:
                room = max_nodes - after
                for c in sorted(off, key=lambda c: (self._seq(self.items[c].latest), c), reverse=True):
                    if self.size[c] <= room and len(keep) < MAX_KEPT_SIBLINGS:
                        keep.append(c)
                        room -= self.size[c]
            fold = [c for c in off if c not in keep]
            if len(fold) == 1 and self.size[fold[0]] == 1:
                keep.append(fold.pop())
            if fold:
                self._fold(parent, fold)
            self.total = after + sum(self.size[c] for c in keep) - (0 if fold else 1)
            if self.total <= max_nodes:
                return

    def _fold(self, parent: int | None, fold: list[int]) -> None:
        items = [self.items[c] for c in fold]
        latest = max((box.latest for box in items), key=lambda leaf: (self._seq(leaf), leaf or ""))
        anchor = self.items[parent].bottom if parent is not None else -1
        box = DiagramNode(
            "fold",
            anchor + 1,
            anchor + 1,
            sum(b.sub_events for b in items),
            branches=sum(b.sub_leaves for b in items),
            sub_events=sum(b.sub_events for b in items),
            sub_leaves=sum(b.sub_leaves for b in items),
            latest=latest,
        )
        gone = set(fold)
        kids = self.tops if parent is None else self.items[parent].children
        kids[:] = [c for c in kids if c not in gone]
        self._add(box, parent)
        self.size.append(1)

    def merge_spines(self, max_nodes: int) -> None:
        """Still too many (a very branchy selected path): keep the spine items nearest the
        selection and HEAD, merge each remaining stretch of a spine into one run node."""
        items, ref = self.items, self.selected if self.selected is not None else self.head
        chain: list[int] = []
        i = ref
        while i is not None:
            chain.append(i)
            i = items[i].parent
        chain.reverse()
        on_chain = set(chain)
        head_chain: list[int] = []
        i = self.head
        while i is not None and i not in on_chain:
            head_chain.append(i)
            i = items[i].parent
        head_chain.reverse()

        def cost(i: int) -> int:
            return 1 + sum(self.size[c] for c in self._off(i))

        must = {j for j in self.tops if items[j].spine}
        if chain:
            must.add(chain[-1])
        if head_chain:
            must.add(head_chain[-1])
        budget = max_nodes - 2 - sum(cost(j) for j in must) - sum(self.size[c] for c in self._off(None))
        keep = set(must)
        for j in sorted((j for j in chain + head_chain if j not in must), key=lambda j: (self.dist[j], j)):
            if cost(j) > budget:
                break
            keep.add(j)
            budget -= cost(j)
        for spine in (chain, head_chain):
            stretch: list[int] = []
            for j in [*spine, None]:
                if j is not None and j not in keep:
                    stretch.append(j)
                    continue
                if len(stretch) > 1 or (stretch and cost(stretch[0]) > 1):
                    self._merge(stretch)
                stretch = []
        self.total = sum(1 for _ in self._walk())

    def _merge(self, stretch: list[int]) -> None:
        items, members = self.items, set(stretch)
        first = items[stretch[0]]
        box = DiagramNode(
            "merged",
            first.depth,
            items[stretch[-1]].bottom,
            0,
            sub_events=first.sub_events,
            sub_leaves=first.sub_leaves,
            latest=first.latest,
            on_path=first.on_path,
            spine=True,
        )
        kids: list[int] = []
        for j in stretch:
            member = items[j]
            box.count += member.count
            for kind, n in [*member.contains.items(), *([(member.problem, 1)] if member.problem else [])]:
                box.contains[kind] = box.contains.get(kind, 0) + n
            for c in member.children:
                if c in members:
                    continue
                if items[c].spine:
                    kids.append(c)
                else:
                    box.side_events += items[c].sub_events
                    box.branches += items[c].sub_leaves
        index = len(items)
        items.append(box)
        self.size.append(1)
        box.parent = first.parent
        siblings = self.tops if first.parent is None else items[first.parent].children
        siblings[siblings.index(stretch[0])] = index
        box.children = kids
        for c in kids:
            items[c].parent = index

    def _walk(self):
        stack = list(reversed(self.tops))
        while stack:
            i = stack.pop()
            yield i
            stack.extend(reversed(self.items[i].children))

    def result(self) -> list[DiagramNode]:
        order = list(self._walk())
        new = {old: k for k, old in enumerate(order)}
        out = []
        for k, old in enumerate(order):
            box = self.items[old]
            box.index = k
            box.parent = new[box.parent] if box.parent is not None else None
            box.children = [new[c] for c in box.children]
            out.append(box)
        return out


def _totals(box: DiagramNode, kept: Mapping[str, Any]) -> DiagramNode:
    """Subtree totals of a node on the chain that ends at the kept event ``kept``."""
    box.sub_events = kept["depth"] - box.depth + kept["events"]
    box.sub_leaves = kept["leaves"]
    box.latest = kept["latest_leaf"]
    return box


def _follow(
    path: Sequence[PathEvent], nodes: list[dict[str, Any]], by_id: Mapping[str, dict[str, Any]]
) -> tuple[list[PathEvent], set[str], str | None]:
    """Walk the selected path down the skeleton: the usable prefix of ``path``, the kept
    events on it, and the kept event whose run holds the selection when it is not kept."""
    if not path or path[0].event_id not in by_id or by_id[path[0].event_id]["up"] is not None:
        return [], set(), None
    entry = {(n["run"]["first"] if n["run"] else n["id"]): n for n in nodes}
    current = by_id[path[0].event_id]
    on_kept = {current["id"]}
    while current["depth"] < len(path) - 1:
        below = entry.get(path[current["depth"] + 1].event_id)
        if below is None or below["up"] != current["id"]:
            break
        if below["depth"] < len(path):
            if path[below["depth"]].event_id != below["id"]:
                break
            on_kept.add(below["id"])
            current = below
            continue
        return list(path), on_kept, below["id"]
    return list(path[: current["depth"] + 1]), on_kept, None


def _clean(text: Any, limit: int) -> str:
    """One line of at most ``limit`` characters with no control, format or unassigned
    characters (they are invalid XML or can reorder the text)."""
    text = str(text)[: limit * 2]
    if not text.isprintable():
        text = text.encode("utf-8", "replace").decode("utf-8")
        text = "".join(" " if ch.isspace() else ch for ch in text if ch.isspace() or unicodedata.category(ch)[0] != "C")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _dot_string(text: str, backslashes: int = 2) -> str:
    """A quoted DOT string showing ``text`` literally. Graphviz unescapes backslashes once
    in labels and URLs and twice in tooltips, and decodes entities, so ``&`` is escaped too."""
    text = text.replace("\\", "\\" * backslashes).replace('"', '\\"').replace("&", "&amp;")
    return '"' + text + '"'


def _lines(*lines: str) -> str:
    """Label lines joined with DOT's centred line break (after escaping each line)."""
    return '"' + "\\n".join(_dot_string(line)[1:-1] for line in lines if line) + '"'


def _short(kind: str | None) -> str:
    kind = _clean(kind or "", LABEL_CHARS * 2)
    return _clean(kind.removesuffix("Event") or kind, LABEL_CHARS)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "es" if word.endswith("ch") else "s")


def _contains(box: DiagramNode) -> str:
    found = [f"{box.contains[p]:,} {p}" for p in PROBLEM_KINDS if box.contains.get(p)]
    return "contains " + ", ".join(found) if found else ""


def _label(box: DiagramNode) -> str:
    if box.role == "fold":
        return _lines(f"{_plural(box.branches, 'branch')} · {_plural(box.count, 'event')}")
    if box.role == "merged":
        side = f"+ {_plural(box.branches, 'side branch')} ({_plural(box.side_events, 'event')})" if box.branches else ""
        return _lines(_plural(box.count, "event"), side, _contains(box))
    if box.role == "run":
        kinds = [_short(box.first_kind) if box.first_kind else "", _short(box.last_kind) if box.last_kind else ""]
        if box.count == 1:
            span = kinds[0] or kinds[1]
        else:
            span = " … ".join(kinds) if all(kinds) else "… " + kinds[1] if kinds[1] else kinds[0] + " …"
        return _lines(_plural(box.count, "event") + ":", span, _contains(box))
    detail = [f"depth {box.depth:,}"]
    node = box.node
    if node is not None and node["leaf"]:
        detail.append(_clean(node["outcome"] or "open", 12))
    elif node is not None and node["branch"]:
        detail.append(_plural(node["children"], "branch"))
    if box.problem:
        detail.append(box.problem)
    return _lines("HEAD" if box.head else "", _short(box.kind), " · ".join(detail))


def _tooltip(box: DiagramNode) -> str:
    if box.role == "fold":
        text = f"{_plural(box.branches, 'branch')} folded here ({_plural(box.count, 'event')})"
        return _dot_string(text + ". Click to select the most recent leaf among them.", 4)
    if box.role in ("run", "merged"):
        what = "folded events"
        if box.role == "merged":
            what = f"a stretch with {_plural(box.branches, 'side branch')} of {_plural(box.side_events, 'event')}"
        text = f"{_plural(box.count, 'event')} at depths {box.depth:,}–{box.bottom:,} ({what})"
        found = _contains(box)
        return _dot_string(text + (f", {found}" if found else "") + ". Click to select the most recent leaf below.", 4)
    facts = [_clean(box.kind, 60), f"depth {box.depth:,}"]
    if box.node is not None and box.node["leaf"]:
        facts.append(_clean(box.node["outcome"] or "open", 12))
    facts += [word for word, on in (("HEAD", box.head), ("selected", box.selected)) if on]
    if box.problem:
        facts.append(box.problem)
    if box.timestamp:
        facts.append(_clean(box.timestamp, 40))
    head = " · ".join(facts)
    summary = _clean(box.summary, max(20, TOOLTIP_CHARS - len(head) - 1))
    return _dot_string(head, 4)[:-1] + ("\\n" + _dot_string(summary, 4)[1:] if summary else '"')


def _style(box: DiagramNode) -> dict[str, str]:
    attrs: dict[str, str] = {}
    if box.role == "fold":
        attrs.update(shape="folder", style="filled", fillcolor=FOLD_FILL, color=BORDER, fontcolor=BORDER)
    elif box.role in ("run", "merged"):
        attrs.update(style="rounded,dashed" + (",filled" if box.role == "merged" else ""), fontcolor=BORDER)
        if box.role == "merged":
            attrs["fillcolor"] = FOLD_FILL
        worst = next((p for p in reversed(PROBLEM_KINDS) if box.contains.get(p)), None)
        attrs["color"] = PROBLEM_BORDER[worst] if worst else BORDER
    else:
        fill = "#ffffff"
        if box.node is not None and box.node["leaf"]:
            fill = OUTCOME_FILL.get(box.node["outcome"], OUTCOME_FILL["open"])
        if box.problem:
            fill = PROBLEM_FILL[box.problem]
        attrs.update(style="rounded,filled", fillcolor=fill, color=PROBLEM_BORDER.get(box.problem or "", BORDER))
        if box.head:
            attrs["peripheries"] = "2"
    if box.on_path:
        attrs["penwidth"] = "3" if box.selected else "2"
        if not box.problem and not box.contains:
            attrs["color"] = PATH_COLOUR
    return attrs


LEGEND = (
    (f'BGCOLOR="{PATH_COLOUR}" BORDER="1"', "selected branch"),
    ('BGCOLOR="#ffffff" BORDER="3"', "HEAD (double border)"),
    ('BGCOLOR="#ffffff" BORDER="1" STYLE="dashed"', "run of folded events"),
    (f'BGCOLOR="{FOLD_FILL}" BORDER="1"', "folded branches"),
    (f'BGCOLOR="{OUTCOME_FILL["finished"]}" BORDER="1"', "leaf: finished"),
    (f'BGCOLOR="{OUTCOME_FILL["error"]}" BORDER="1"', "leaf: error"),
    (f'BGCOLOR="{OUTCOME_FILL["rejected"]}" BORDER="1"', "leaf: rejected"),
    (f'BGCOLOR="{OUTCOME_FILL["open"]}" BORDER="1"', "leaf: open"),
    (f'BGCOLOR="{OUTCOME_FILL["pending"]}" BORDER="1"', "leaf: action pending"),
    (f'BGCOLOR="{PROBLEM_FILL["pending"]}" BORDER="1"', "pending on this branch"),
    (f'BGCOLOR="{PROBLEM_FILL["mismatched"]}" BORDER="1"', "mismatched observation"),
)
LEGEND_TITLE = "Click a node to select its branch (or the latest leaf below it)."


def _legend(columns: int = 4) -> str:
    """The legend as the graph's own label: a small table above the drawing, which (unlike
    a node) does not widen or lengthen the tree's first rank."""
    cells = [f'<TD {swatch} WIDTH="12"> </TD><TD ALIGN="LEFT">{html.escape(text)}</TD>' for swatch, text in LEGEND]
    rows = "".join(f"<TR>{''.join(cells[i : i + columns])}</TR>" for i in range(0, len(cells), columns))
    table = (
        f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="2" CELLPADDING="1" COLOR="{BORDER}">'
        f'<TR><TD COLSPAN="{2 * columns}" ALIGN="LEFT">{html.escape(LEGEND_TITLE)}</TD></TR>{rows}</TABLE>'
    )
    return f'  graph [labelloc="t", labeljust="l", fontsize=8, label=<{table}>];'


def build_dot(
    skeleton: Mapping[str, Any],
    *,
    path: Sequence[PathEvent],
    problems: Mapping[str, str],
    link: Callable[[str], str],
    max_nodes: int = 250,
) -> str:
    """The DOT source of the branch diagram; node ``n{i}`` is ``diagram_nodes(...)[i]``."""
    boxes = diagram_nodes(skeleton, path=path, problems=problems, max_nodes=max_nodes)
    out = [
        'digraph "Branch diagram" {',
        f'  graph [rankdir=TB, nodesep=0.18, ranksep=0.22, bgcolor="transparent", fontname="{FONT}"];',
        f'  node [shape=box, fontname="{FONT}", fontsize=9, height=0.22, width=0.3, margin="0.06,0.02",'
        f' color="{BORDER}"];',
        f'  edge [arrowhead=none, color="{EDGE_COLOUR}", penwidth=1];',
        _legend(),
    ]
    for box in boxes:
        attrs = {"id": f'"n{box.index}"', "class": '"' + " ".join(box.classes) + '"'}
        attrs["label"] = _label(box)
        attrs["tooltip"] = _tooltip(box)
        target = box.link_to
        if target is not None:
            attrs["URL"] = _dot_string(str(link(target)))
        attrs.update({k: f'"{v}"' for k, v in _style(box).items()})
        out.append(f"  n{box.index} [" + ", ".join(f"{k}={v}" for k, v in attrs.items()) + "];")
    for box in boxes:
        if box.parent is None:
            continue
        attrs = {"id": f'"e{box.index}"'}
        if box.on_path and boxes[box.parent].on_path:
            attrs.update({"class": '"path"', "color": f'"{PATH_COLOUR}"', "penwidth": '"2.5"'})
        if box.spine:
            attrs["weight"] = '"8"'  # keep the selected branch and HEAD's straight, side branches beside them
        out.append(f"  n{box.parent} -> n{box.index} [" + ", ".join(f"{k}={v}" for k, v in attrs.items()) + "];")
    out.append("}")
    return "\n".join(out) + "\n"


# --- SVG ----------------------------------------------------------------------------------

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
MAX_NESTING = 64

ALLOWED_ELEMENTS = frozenset(
    {
        "svg",
        "g",
        "title",
        "a",
        "polygon",
        "polyline",
        "path",
        "ellipse",
        "circle",
        "rect",
        "text",
        "tspan",
        "defs",
        "line",
    }
)  # local names in the SVG namespace
ALLOWED_ATTRIBUTES = frozenset(
    {
        "class", "id", "transform", "viewBox", "width", "height", "preserveAspectRatio",
        "fill", "fill-opacity", "stroke", "stroke-width", "stroke-dasharray", "stroke-opacity",
        "stroke-linecap", "stroke-linejoin", "opacity",
        "font-family", "font-size", "font-weight", "font-style", "text-anchor", "text-decoration",
        "points", "d", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry",
        "href", "xlink:href", "xlink:title",
    }
)  # fmt: skip
_SAFE_HREF = re.compile(r"(?:/(?![/\\])|\?)[^\s\\<>\"'`\x00-\x1f\x7f]*")
_UNSAFE_VALUE = re.compile(r"javascript:|url\(|expression\(", re.IGNORECASE)
_PROLOG = re.compile(r"<\?xml[^>]*\?>|<!DOCTYPE[^>\[]*>", re.IGNORECASE)


def sanitize_svg(svg: str, *, htmx_target: str | None = None) -> str:
    """Inline-ready SVG: no prolog, doctype or comments; only allowlisted elements and
    attributes; links only to this site (others become plain groups)."""
    if re.search(r"<!(DOCTYPE[^>]*\[|ENTITY)", svg, re.IGNORECASE):
        raise ValueError("SVG with an internal DTD or entities is refused")
    root = ET.fromstring(_PROLOG.sub("", svg))
    if root.tag != f"{{{SVG_NS}}}svg":
        raise ValueError("not an SVG document")
    stack = [(root, 0)]
    while stack:
        element, depth = stack.pop()
        # Plain local names, written under the default namespace declared on the root below:
        # no ns0: prefixes and no global namespace registry.
        element.tag = element.tag.removeprefix(f"{{{SVG_NS}}}")
        for child in list(element):
            tag = child.tag if isinstance(child.tag, str) else ""
            if depth < MAX_NESTING and tag.startswith(f"{{{SVG_NS}}}") and tag.split("}")[1] in ALLOWED_ELEMENTS:
                stack.append((child, depth + 1))
            else:
                element.remove(child)
        _clean_attributes(element)
        if element.tag == "a":
            _clean_link(element, htmx_target)
    root.set("xmlns", SVG_NS)
    root.set("xmlns:xlink", XLINK_NS)
    return ET.tostring(root, encoding="unicode")


def _clean_attributes(element: ET.Element) -> None:
    kept = {}
    for key, value in element.attrib.items():
        name = key.replace(f"{{{XLINK_NS}}}", "xlink:")
        if name in ALLOWED_ATTRIBUTES and not _UNSAFE_VALUE.search(value):
            kept[name] = value
    element.attrib.clear()
    element.attrib.update(kept)


def _clean_link(element: ET.Element, htmx_target: str | None) -> None:
    hrefs = [element.get(k) for k in ("href", "xlink:href") if element.get(k) is not None]
    if not hrefs or not all(_SAFE_HREF.fullmatch(h) for h in hrefs):
        element.tag = "g"
        for key in ("href", "xlink:href", "xlink:title"):
            element.attrib.pop(key, None)
        return
    title = element.get("xlink:title")
    if title and element.find("title") is None:
        # Browsers show a <title> child as the tooltip, not xlink:title.
        tip = ET.Element("title")
        tip.text = title
        element.insert(0, tip)
    if htmx_target is not None:
        element.set("hx-get", hrefs[0])
        element.set("hx-target", htmx_target)
        element.set("hx-swap", "outerHTML")
        element.set("hx-push-url", "true")


def render_svg(dot_source: str, *, htmx_target: str | None = None) -> str:
    """Lay out ``dot_source`` with Graphviz's ``dot`` and return sanitized inline SVG."""
    raw = graphviz.pipe("dot", "svg", dot_source.encode("utf-8"))
    return sanitize_svg(raw.decode("utf-8"), htmx_target=htmx_target)


def diagram_svg(
    skeleton: Mapping[str, Any],
    *,
    path: Sequence[PathEvent],
    problems: Mapping[str, str],
    link: Callable[[str], str],
    htmx_target: str | None = None,
    max_nodes: int = 250,
) -> str:
    """The branch diagram as inline SVG."""
    dot = build_dot(skeleton, path=path, problems=problems, link=link, max_nodes=max_nodes)
    return render_svg(dot, htmx_target=htmx_target)
