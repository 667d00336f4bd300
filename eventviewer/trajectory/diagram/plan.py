"""What the branch diagram draws: the skeleton's kept events and runs, with the runs
the selected path crosses split at the selected event and at its pending or mismatched
events, then compressed to at most ``max_nodes`` nodes."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..skeleton import event_label
from .style import OUTCOME_FILL

PROBLEM_KINDS = ("pending", "mismatched")
MAX_PROBLEM_NODES = 60
MAX_KEPT_SIBLINGS = 16  # when folding, more side branches than this side by side are unreadable
MIN_NODES = 24  # below this the must-keep nodes (roots, selection, HEAD, their folds) may not fit


class PathEvent(Protocol):  # read-only, so that a Light (a NamedTuple) is one
    @property
    def event_id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def depth(self) -> int | None: ...


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
    label: str = ""  # what happened at an event (see skeleton.event_label)
    timestamp: str = ""
    first_kind: str | None = None
    last_kind: str | None = None
    first_label: str = ""  # a run's first and last events, when known
    last_label: str = ""
    at: str | None = None  # on the selected path: the event a click goes to
    problem: str | None = None  # "pending" or "mismatched"
    contains: dict[str, int] = field(default_factory=dict)  # problems folded inside a run
    branches: int = 0  # fold: leaves folded; merged: side branches absorbed
    side: int = 0  # side events (hooks …) hanging on it: drawn as a mark, not as stubs
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
        """The leaf a click selects (off the selected path, or without ``at``): a leaf, HEAD or
        the selection itself, else the latest leaf below."""
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
                label=n.get("label") or event_label(n["kind"], summary=n.get("summary") or ""),
                timestamp=n.get("timestamp") or "",
                problem=problem if problem in PROBLEM_KINDS else None,
                on_path=on_path,
                at=n["id"] if on_path else None,
                head=bool(n["head"]),
                selected=on_path and n["depth"] == last,
                side=n.get("side", 0),
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

    def _run(self, n: dict[str, Any], lo: int, hi: int, crossed: bool, folded: dict[str, list[int]]) -> DiagramNode:
        run, last = n["run"], len(self.steps) - 1

        # A crossed run is a chain of path events; below the selection only the run's own ends are known.
        def kind_at(depth: int, end: int, end_kind: str) -> str | None:
            return self.steps[depth].kind if crossed and depth <= last else end_kind if depth == end else None

        first_kind = kind_at(lo, n["depth"] - run["count"], run["first_kind"])
        last_kind = kind_at(hi, n["depth"] - 1, run["last_kind"])

        def label_at(depth: int, end: int, end_kind: str, end_label: str) -> str:
            if depth == end and end_label:  # the skeleton's label knows an action's command
                return end_label
            if crossed and depth <= last:
                return _step_label(self.steps[depth])
            return event_label(end_kind) if depth == end else ""

        first_label = label_at(lo, n["depth"] - run["count"], run["first_kind"], run.get("first_label", ""))
        last_label = label_at(hi, n["depth"] - 1, run["last_kind"], run.get("last_label", ""))
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
            first_label=first_label,
            last_label=last_label,
            contains=contains,
            on_path=crossed and hi <= last,
            at=self.steps[lo].event_id if crossed and hi <= last else None,
            # A run split at the selection keeps its side events on its first part.
            side=run.get("side", 0) if lo == n["depth"] - run["count"] else 0,
        )
        return _totals(box, n)

    def _split_event(self, n: dict[str, Any], depth: int, problems: Mapping[str, str]) -> DiagramNode:
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
            label=_step_label(step),
            timestamp=str(getattr(step, "timestamp", "") or ""),
            problem=problem if problem in PROBLEM_KINDS else None,
            on_path=True,
            at=step.event_id,
            selected=depth == len(self.steps) - 1,
        )
        return _totals(box, n)

    def _add(self, box: DiagramNode, parent: int | None, kept: dict[str, Any] | None = None) -> int:
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
            up = items[i].parent
            if up is not None:
                self.size[up] += self.size[i]
        self.dist = self._distances()

    def _distances(self) -> dict[int, int]:
        """For spine items: how many events away from the selection (or HEAD) they are."""
        items, ref = self.items, self.selected if self.selected is not None else self.head
        dist: dict[int, int] = {}
        if ref is None:
            return {i: box.bottom for i, box in enumerate(items) if box.spine}
        ref_depth = items[ref].bottom
        on_ref: set[int] = set()
        at: int | None = ref
        while at is not None:
            on_ref.add(at)
            dist[at] = ref_depth - items[at].bottom
            at = items[at].parent
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
            for j in spine:
                if j not in keep:
                    stretch.append(j)
                    continue
                self._merge_if_worth_it(stretch, cost)
                stretch = []
            self._merge_if_worth_it(stretch, cost)
        self.total = sum(1 for _ in self._walk())

    def _merge_if_worth_it(self, stretch: list[int], cost: Callable[[int], int]) -> None:
        if len(stretch) > 1 or (stretch and cost(stretch[0]) > 1):
            self._merge(stretch)

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
            at=first.at,
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

    def _walk(self) -> Iterator[int]:
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


def _step_label(step: PathEvent) -> str:
    """A path event's label; path events carry no command, so an action shows its summary."""
    return event_label(
        step.kind,
        getattr(step, "source", "") or "",
        getattr(step, "tool_name", "") or "",
        getattr(step, "summary", "") or "",
    )


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
