"""The branch diagram: what it draws, how it compresses big trees, and that it is safe to inline."""

from __future__ import annotations

import copy
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from urllib.parse import quote

import pytest

from eventviewer.trajectory.diagram import (
    ALLOWED_ELEMENTS,
    MAX_PROBLEM_NODES,
    PROBLEM_FILL,
    build_dot,
    diagram_nodes,
    diagram_svg,
    render_svg,
    sanitize_svg,
)
from eventviewer.trajectory.diagram.dot import LABEL_CHARS
from eventviewer.trajectory.events import Light
from eventviewer.trajectory.kinds import ROOT_PARENT_ID
from eventviewer.trajectory.skeleton import Node, build_skeleton, describe_branches, event_label
from eventviewer.trajectory.tree import Entry, build_tree

from .sdk import load

SVG = "{http://www.w3.org/2000/svg}"
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"


def link(event_id: str) -> str:
    return "/c/1/?leaf=" + quote(event_id, safe="")


@dataclass
class Step:
    event_id: str
    kind: str
    depth: int


class Drawn:
    """The rendered SVG, read back: nodes by DOT name, their classes and links, the edges."""

    def __init__(self, skeleton: dict, path, problems=None, max_nodes: int = 250):
        problems = problems or {}
        self.boxes = diagram_nodes(skeleton, path=path, problems=problems, max_nodes=max_nodes)
        self.svg = diagram_svg(skeleton, path=path, problems=problems, link=link, max_nodes=max_nodes)
        self.root = ET.fromstring(self.svg)
        self.classes: dict[str, list[str]] = {}
        self.href: dict[str, str | None] = {}
        self.edges: list[tuple[str, str]] = []
        self.path_edges: list[tuple[str, str]] = []
        for g in self.root.iter(f"{SVG}g"):
            names = (g.get("class") or "").split()
            title = g.findtext(f"{SVG}title")
            if "node" in names:
                self.classes[title] = names
                anchor = g.find(f".//{SVG}a")
                self.href[title] = None if anchor is None else anchor.get(XLINK_HREF)
            elif "edge" in names:
                edge = tuple(title.split("->"))
                self.edges.append(edge)
                if "path" in names:
                    self.path_edges.append(edge)

    def named(self, cls: str) -> list[str]:
        return [name for name, names in self.classes.items() if cls in names]

    def box(self, name: str):
        return self.boxes[int(name[1:])]

    def chain_to(self, name: str) -> list[str]:
        """Node names from the top of the drawing down to ``name``, by parent links."""
        chain = []
        box = self.box(name)
        while box is not None:
            chain.append(f"n{box.index}")
            box = self.boxes[box.parent] if box.parent is not None else None
        return chain[::-1]


def assert_path_highlighted(drawn: Drawn, path) -> None:
    """Highlighted edges are exactly the chain from the root to the selected node, and
    that chain stands for exactly the path's events."""
    (selected,) = drawn.named("selected")
    assert drawn.box(selected).event_id == path[-1].event_id
    chain = drawn.chain_to(selected)
    assert drawn.box(chain[0]).event_id == path[0].event_id
    assert sorted(drawn.path_edges) == sorted(zip(chain, chain[1:], strict=False))
    assert sum(drawn.box(name).count for name in chain) == len(path)
    on_path = {step.event_id for step in path}
    assert all(drawn.box(name).event_id in on_path for name in chain if drawn.box(name).role == "event")


# --- the SDK fixtures -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def retries():
    loaded = load("branching-retries")
    skeleton = loaded.skeleton()
    leaves = [n["id"] for n in skeleton["nodes"] if n["leaf"]]
    assert len(leaves) == 3
    return loaded, skeleton, leaves


def test_it_draws_one_node_per_leaf_and_branch_point(retries):
    loaded, skeleton, leaves = retries
    drawn = Drawn(skeleton, loaded.path(leaves[0]))
    branch_points = [n["id"] for n in skeleton["nodes"] if n["branch"]]
    assert sorted(drawn.box(name).event_id for name in drawn.named("leaf")) == sorted(leaves)
    assert sorted(drawn.box(name).event_id for name in drawn.named("branch")) == sorted(branch_points)
    (head,) = drawn.named("head")
    assert drawn.box(head).event_id == loaded.head


@pytest.mark.parametrize("which", [0, 1, 2])
def test_it_highlights_exactly_the_selected_branch(retries, which):
    loaded, skeleton, leaves = retries
    path = loaded.path(leaves[which])
    drawn = Drawn(skeleton, path)
    assert_path_highlighted(drawn, path)
    assert len(drawn.named("selected")) == 1


def test_it_links_leaves_to_themselves_and_interior_nodes_to_their_latest_leaf(retries):
    loaded, skeleton, leaves = retries
    drawn = Drawn(skeleton, loaded.path(leaves[0]))
    by_id = {n["id"]: n for n in skeleton["nodes"]}
    for leaf in leaves:
        (name,) = [name for name in drawn.named("leaf") if drawn.box(name).event_id == leaf]
        assert drawn.href[name] == link(leaf)
    for name in drawn.classes:
        box = drawn.box(name)
        while box.role == "run":  # a run selects what its kept event below selects
            (child,) = box.children
            box = drawn.boxes[child]
        kept = by_id[box.event_id]
        expected = kept["id"] if kept["leaf"] else kept["latest_leaf"]
        assert drawn.href[name] == link(expected)


def test_without_a_selection_nothing_is_highlighted(retries):
    loaded, skeleton, _ = retries
    drawn = Drawn(skeleton, [])
    assert drawn.path_edges == [] and drawn.named("selected") == [] and drawn.named("onpath") == []
    (head,) = drawn.named("head")
    assert drawn.href[head] == link(loaded.head)


def test_a_long_single_branch_is_a_handful_of_nodes():
    loaded = load("long-300")
    path = loaded.path()
    drawn = Drawn(loaded.skeleton(), path)
    assert [drawn.box(name).role for name in drawn.classes] == ["event", "run", "event"]
    assert "320 events · depth 1–320" in drawn.svg
    assert_path_highlighted(drawn, path)


def test_selecting_an_event_inside_a_run_splits_the_run(retries):
    loaded, skeleton, leaves = retries
    leaf = max(leaves, key=lambda i: loaded.tree.depth[i])  # its run spans depths 4..9
    path = loaded.path(leaf)[:6]
    drawn = Drawn(skeleton, path)
    (selected,) = drawn.named("selected")
    box = drawn.box(selected)
    assert box.event_id == path[-1].event_id and box.depth == 5
    above, (below,) = drawn.boxes[box.parent], box.children
    assert (above.role, above.count, above.on_path) == ("run", 1, True)
    assert (drawn.boxes[below].role, drawn.boxes[below].count, drawn.boxes[below].on_path) == ("run", 4, False)
    assert [drawn.boxes[c].event_id for c in drawn.boxes[below].children] == [leaf]
    assert drawn.href[selected] == link(path[-1].event_id)
    assert_path_highlighted(drawn, path)


def test_events_split_out_of_a_run_are_drawn_as_themselves(retries):
    """A problem and the selection inside a run each get their own node: the event's kind,
    label, time and problem, its subtree's totals, and only the selection selected."""
    loaded, skeleton, leaves = retries
    leaf = max(leaves, key=lambda i: loaded.tree.depth[i])
    path = loaded.path(leaf)[:7]  # the run spans depths 4..9: the pending action at 5, the selection at 6
    drawn = Drawn(skeleton, path, {path[5].event_id: "pending", path[6].event_id: "not a problem kind"})
    paths = {e: loaded.tree.path(e) for e in loaded.tree.depth}
    parents = {p[-2] for p in paths.values() if len(p) > 1}
    for step, problem, selected in ((path[5], "pending", False), (path[6], None, True)):
        (box,) = [b for b in drawn.boxes if b.role == "event" and b.event_id == step.event_id]
        below = [e for e, p in paths.items() if step.event_id in p]
        leaves_below = [e for e in below if e not in parents]
        assert (box.kind, box.summary, box.timestamp) == (step.kind, step.summary, step.timestamp)
        assert box.label == event_label(step.kind, step.source, step.tool_name, step.summary)
        assert (box.problem, box.selected, box.on_path, box.at) == (problem, selected, True, step.event_id)
        assert (box.depth, box.bottom, box.count) == (step.depth, step.depth, 1)
        assert (box.sub_events, box.sub_leaves) == (len(below), len(leaves_below))
        assert box.latest == max(leaves_below, key=lambda e: loaded.events[e].seq)
    assert drawn.box(drawn.named("selected")[0]).event_id == path[6].event_id
    assert [drawn.box(name).event_id for name in drawn.named("pending")] == [path[5].event_id]


def test_the_parts_of_a_split_run_name_their_ends_as_far_as_they_are_known(retries):
    """Above the selection a run's part names its first and last events from the path; below
    it only the run's own last event is known; a label the skeleton kept (an action's
    command) wins over the path's summary."""
    loaded, skeleton, leaves = retries
    leaf = max(leaves, key=lambda i: loaded.tree.depth[i])
    path = loaded.path(leaf)[:7]
    (node,) = [n for n in skeleton["nodes"] if n["id"] == leaf]
    assert node["run"]["count"] == 6  # depths 4..9

    def parts(skeleton):
        drawn = Drawn(skeleton, path, {path[5].event_id: "pending"})
        return [
            (b.depth, b.bottom, b.first_kind, b.last_kind, b.first_label, b.last_label, b.on_path, b.at)
            for b in drawn.boxes
            if b.role == "run" and b.latest == leaf and b.depth >= 4
        ]

    def step(d):
        return event_label(path[d].kind, path[d].source, path[d].tool_name, path[d].summary)

    assert parts(skeleton) == [
        (4, 4, path[4].kind, path[4].kind, step(4), step(4), True, path[4].event_id),
        (7, 9, None, "ActionEvent", "", event_label("ActionEvent"), False, None),
    ]
    labelled = copy.deepcopy(skeleton)
    (run,) = [n["run"] for n in labelled["nodes"] if n["id"] == leaf]
    run |= {"first_label": "Message: kept first", "last_label": "terminal: wc -w data.txt", "side": 2}
    assert parts(labelled) == [
        (4, 4, path[4].kind, path[4].kind, "Message: kept first", step(4), True, path[4].event_id),
        (7, 9, None, "ActionEvent", "", "terminal: wc -w data.txt", False, None),
    ]
    drawn = Drawn(labelled, path, {path[5].event_id: "pending"})
    assert [b.side for b in drawn.boxes if b.role == "run" and b.latest == leaf and b.depth >= 4] == [2, 0]


def test_pending_and_mismatched_events_get_their_own_coloured_nodes(retries):
    loaded, skeleton, leaves = retries
    leaf = max(leaves, key=lambda i: loaded.tree.depth[i])
    path = loaded.path(leaf)
    problems = {path[5].event_id: "pending", path[7].event_id: "mismatched"}
    drawn = Drawn(skeleton, path, problems)
    for kind, step in (("pending", path[5]), ("mismatched", path[7])):
        (name,) = drawn.named(kind)
        assert drawn.box(name).event_id == step.event_id
        (g,) = [g for g in drawn.root.iter(f"{SVG}g") if g.findtext(f"{SVG}title") == name]
        assert PROBLEM_FILL[kind] in {shape.get("fill") for shape in g.iter() if shape.get("fill")}
    runs = [drawn.box(name).count for name in drawn.chain_to(drawn.named("selected")[0])]
    assert runs == [1, 1, 1, 1, 1, 1, 1, 1, 2, 1]  # root, branch, run, branch, run, pending, run, mismatched, run, leaf
    assert_path_highlighted(drawn, path)


def event_link(event_id: str) -> str:
    return f"/c/1/?leaf=L&at={quote(event_id, safe='')}#event-{quote(event_id, safe='')}"


def anchors(root: ET.Element) -> dict[str, dict[str, str | None]]:
    """Each node's link: its href, the event it focuses in place and its htmx request."""
    found = {}
    for g in root.iter(f"{SVG}g"):
        if "node" in (g.get("class") or "").split():
            a = g.find(f".//{SVG}a")
            found[g.findtext(f"{SVG}title")] = {k: a.get(k) for k in (XLINK_HREF, "data-anchor", "hx-get")}
    return found


@pytest.mark.parametrize("which", [0, 1, 2])
def test_a_click_on_the_selected_branch_goes_to_that_event_and_elsewhere_switches_branch(retries, which):
    loaded, skeleton, leaves = retries
    path = loaded.path(leaves[which])
    boxes = diagram_nodes(skeleton, path=path, problems={})
    svg = diagram_svg(skeleton, path=path, problems={}, link=link, event_link=event_link, htmx_target="#w")
    on_path = {step.event_id for step in path}
    for name, a in anchors(ET.fromstring(svg)).items():
        box = boxes[int(name[1:])]
        if box.on_path:
            assert box.at in on_path
            assert a == {XLINK_HREF: event_link(box.at), "data-anchor": box.at, "hx-get": None}
        else:
            assert box.at is None
            assert a == {XLINK_HREF: link(box.link_to), "data-anchor": None, "hx-get": link(box.link_to)}
    root = [box for box in boxes if box.parent is None and box.on_path]
    assert root and root[0].at == path[0].event_id  # the system prompt is an event, not a branch switch


def test_a_folded_run_on_the_selected_branch_goes_to_its_first_event(retries):
    loaded, skeleton, leaves = retries
    leaf = max(leaves, key=lambda i: loaded.tree.depth[i])
    path = loaded.path(leaf)
    runs = [box for box in diagram_nodes(skeleton, path=path, problems={}) if box.role == "run" and box.on_path]
    assert runs
    for box in runs:
        assert box.at == path[box.depth].event_id


def labelled(grown: Grown, head: str, labels: dict[str, str]) -> dict:
    skeleton = grown.skeleton(head=head)
    for node in skeleton["nodes"]:
        node["label"] = labels.get(node["id"], "")
        if node["run"]:
            node["run"]["first_label"] = labels.get(node["run"]["first"], "")
            node["run"]["last_label"] = labels.get(node["run"]["last"], "")
    return skeleton


def test_labels_say_what_happened_without_repeating_themselves():
    grown = Grown()
    root = grown.add("sys", None, kind="SystemPromptEvent")
    ask = grown.add("ask", root, kind="MessageEvent")
    left = grown.add("left", ask, kind="ActionEvent")  # a single event between two kept ones
    grown.add("left-end", left, kind="ActionEvent")
    right = grown.chain("r", ask, 5)
    labels = {
        "sys": "System prompt",
        "ask": "User: Write a script that counts words",
        "left": "terminal: ls -1",
        "left-end": "terminal: wc -w data.txt",
        "r0": "file_editor: create count.py",
        right: "finish: done",
    }
    skeleton = labelled(grown, right, labels)
    next(n for n in skeleton["nodes"] if n["id"] == "left-end")["outcome"] = "pending"  # an action waits: pending
    path = grown.path("left-end")
    svg = diagram_svg(skeleton, path=path, problems={"left-end": "pending"}, link=link, event_link=event_link)
    texts = [t.text for t in ET.fromstring(svg).iter(f"{SVG}text")]
    for label in ("System prompt", "User: Write a script that c…", "terminal: ls -1", "terminal: wc -w data.txt"):
        assert label in texts
    assert "4 events · depth 2–5" in texts and "file_editor: create count…" in texts
    assert not any("1 event" in t for t in texts)  # a single folded event reads as itself
    assert not any(re.search(r"\b(\w+) · \1\b", t) for t in texts)  # never "pending · pending"
    assert "depth 3 · pending" in texts and "HEAD · depth 6 · finished" in texts


@pytest.mark.parametrize(
    ("args", "label"),
    [
        (("SystemPromptEvent", "agent", "", "system prompt, 4 tools"), "System prompt"),
        (("MessageEvent", "user", "", "Write a script"), "User: Write a script"),
        (("MessageEvent", "agent", "", "Done."), "Agent: Done."),
        (("ActionEvent", "agent", "terminal", "list files", "ls -1"), "terminal: ls -1"),
        (("ActionEvent", "agent", "terminal", "list files"), "terminal: list files"),
        (("ActionEvent", "agent", "think", "think"), "think"),
        (("ObservationEvent", "environment", "terminal", "total 4"), "terminal result: total 4"),
        (("AgentErrorEvent", "agent", "search", "Tool not found"), "search error: Tool not found"),
        (("UserRejectObservation", "user", "terminal", "too risky"), "terminal rejected: too risky"),
        (("CondensationRequest", "agent", "", ""), "condensation requested"),
        (("PauseEvent", "user", "", ""), "Pause"),
    ],
)
def test_event_labels_name_the_tool_and_command_or_the_first_words(args, label):
    assert event_label(*args) == label


# --- generated trees ------------------------------------------------------------------------


class Grown:
    """A tree built event by event, then read through build_tree and build_skeleton."""

    def __init__(self):
        self.entries: list[Entry] = []

    def add(self, event_id: str, parent: str | None, kind: str | None = None) -> str:
        kind = kind or ("ActionEvent" if len(self.entries) % 2 else "ObservationEvent")
        self.entries.append(Entry(len(self.entries), event_id, kind, parent))
        return event_id

    def chain(self, prefix: str, parent: str | None, n: int) -> str:
        for j in range(n):
            parent = self.add(f"{prefix}{j}", parent)
        return parent

    @property
    def tree(self):
        if getattr(self, "_built", (None, -1))[1] != len(self.entries):
            self._built = (build_tree(self.entries), len(self.entries))
        return self._built[0]

    def skeleton(self, head: str, summaries: dict[str, str] | None = None) -> dict:
        summaries = summaries or {}
        nodes = [
            Node(
                e.id,
                self.tree.parent[e.id],
                e.seq,
                self.tree.depth[e.id],
                e.kind,
                "finished",
                "",
                summaries.get(e.id, ""),
            )
            for e in self.entries
        ]
        return build_skeleton(nodes, head)

    def path(self, leaf: str) -> list[Step]:
        return [Step(i, self.tree.kind[i], depth) for depth, i in enumerate(self.tree.path(leaf))]


def branching_at_every_step(n: int) -> Grown:
    """A spine s0..s{n-1} with a one-event side branch x{i} beside every s{i}."""
    grown = Grown()
    parent = grown.add("s0", None)
    for i in range(1, n):
        grown.add(f"x{i}", parent)
        parent = grown.add(f"s{i}", parent)
    return grown


def leaves_on_the_root(n: int) -> Grown:
    """A root with ``n`` leaves leaf0..leaf{n-1} straight below it."""
    grown = Grown()
    grown.add("root", None)
    for i in range(n):
        grown.add(f"leaf{i}", "root")
    return grown


def assert_readable(drawn: Drawn, path, head: str, max_nodes: int = 250) -> None:
    assert len(drawn.boxes) == len(drawn.classes) <= max_nodes
    (head_name,) = drawn.named("head")
    assert drawn.box(head_name).event_id == head
    (selected,) = drawn.named("selected")
    assert drawn.href[selected] == link(path[-1].event_id)
    assert_path_highlighted(drawn, path)


@pytest.fixture(scope="module")
def spine_with_side_branches():
    """20,000 events: a spine with a side branch every 150 events, every fourth with a branch of its own."""
    grown = Grown()
    grown.chain("s", None, 17_000)
    leaves = []
    for k, at in enumerate(range(150, 17_000, 150)):
        leaves.append(grown.chain(f"b{k}-", f"s{at}", 20))
        if k % 4 == 0:
            leaves.append(grown.chain(f"c{k}-", f"b{k}-8", 10))
    head = grown.chain("t", "s16999", 20_000 - len(grown.entries))
    return grown, grown.skeleton(head=head), leaves


@pytest.mark.parametrize("which", ["middle", "first", "head"])
def test_a_big_tree_stays_within_the_node_budget(spine_with_side_branches, which):
    grown, skeleton, leaves = spine_with_side_branches
    assert skeleton["events"] == 20_000
    leaf = {"middle": leaves[len(leaves) // 2], "first": leaves[0], "head": skeleton["head"]}[which]
    path = grown.path(leaf)
    drawn = Drawn(skeleton, path)
    assert_readable(drawn, path, skeleton["head"])
    assert drawn.named("fold")


@pytest.mark.parametrize("which", ["middle", "first", "head"])
def test_every_event_is_drawn_once_and_each_fold_says_what_it_holds(spine_with_side_branches, which):
    """However a big tree is folded, the nodes' counts add up to its events; each node's
    totals are its own and its children's; a fold hangs one level below what it folds from
    and counts the events and leaves of the branches it holds, linking to the latest."""
    grown, skeleton, leaves = spine_with_side_branches
    leaf = {"middle": leaves[len(leaves) // 2], "first": leaves[0], "head": skeleton["head"]}[which]
    boxes = Drawn(skeleton, grown.path(leaf)).boxes
    assert sum(b.count + b.side_events for b in boxes) == 20_000
    for b in boxes:
        assert b.sub_events == b.count + b.side_events + sum(boxes[c].sub_events for c in b.children)
        if b.role != "merged":
            own = b.branches if b.role == "fold" else 0 if b.children else 1
            assert b.sub_leaves == own + sum(boxes[c].sub_leaves for c in b.children)

    folds = [b for b in boxes if b.role == "fold"]
    assert folds
    depth = grown.tree.depth
    for fold in folds:
        above = boxes[fold.parent]
        assert fold.depth == fold.bottom == above.bottom + 1
        assert fold.index in above.children
        assert (fold.count, fold.branches) == (fold.sub_events, fold.sub_leaves) and fold.branches >= 1
        assert fold.latest in leaves and depth[fold.latest] > fold.depth
        assert fold.latest not in {b.event_id for b in boxes}


def test_thousands_of_roots_fold_into_one_node_at_the_top():
    grown = Grown()
    for i in range(2000):
        grown.chain(f"r{i}-", ROOT_PARENT_ID, 2)
    skeleton = grown.skeleton(head="r1999-1")
    path = grown.path("r5-1")
    drawn = Drawn(skeleton, path)
    assert_readable(drawn, path, "r1999-1")
    (fold,) = [drawn.box(name) for name in drawn.named("fold")]
    assert (fold.parent, fold.depth, fold.bottom) == (None, 0, 0)
    tops = [b for b in drawn.boxes if b.parent is None]
    assert sum(b.sub_events for b in tops) == 4000 and sum(b.sub_leaves for b in tops) == 2000
    assert fold.count == 2 * fold.branches
    drawn_roots = {b.event_id for b in tops if b.role == "event"}
    assert drawn.href[f"n{fold.index}"] == link(f"r{max(i for i in range(2000) if f'r{i}-0' not in drawn_roots)}-1")


def test_thousands_of_leaves_on_the_root_fold_into_one_node():
    grown = leaves_on_the_root(2000)
    skeleton = grown.skeleton(head="leaf1999")
    path = grown.path("leaf5")
    drawn = Drawn(skeleton, path)
    assert_readable(drawn, path, "leaf1999")
    (fold,) = drawn.named("fold")
    assert drawn.box(fold).branches + len(drawn.named("leaf")) == 2000
    drawn_leaves = {drawn.box(name).event_id for name in drawn.named("leaf")}
    latest_folded = max(i for i in range(2000) if f"leaf{i}" not in drawn_leaves)
    assert drawn.href[fold] == link(f"leaf{latest_folded}")


@pytest.mark.parametrize("selected", ["s4999", "x2500"])
def test_a_deep_path_branching_at_every_step_is_merged_far_from_the_selection(selected):
    grown = branching_at_every_step(5000)
    skeleton = grown.skeleton(head="x10")
    path = grown.path(selected)
    drawn = Drawn(skeleton, path)
    assert_readable(drawn, path, "x10")
    merged = [drawn.box(name) for name in drawn.named("merged")]
    assert merged and all(box.on_path for box in merged)
    chain = drawn.chain_to(drawn.named("selected")[0])
    assert drawn.box(chain[-2]).role == "event"  # the selection's neighbourhood is drawn in full


@pytest.mark.parametrize("selected", ["s4999", "x2500"])
def test_a_merged_stretch_accounts_for_every_event_branch_and_problem_it_absorbs(selected):
    grown = branching_at_every_step(5000)
    path = grown.path(selected)
    problems = {path[d].event_id: "pending" if d % 3 else "mismatched" for d in range(200, len(path) - 300, 7)}
    boxes = diagram_nodes(grown.skeleton(head="x10"), path=path, problems=problems)
    assert sum(b.count + b.side_events for b in boxes) == 9_999
    for b in boxes:
        assert b.sub_events == b.count + b.side_events + sum(boxes[c].sub_events for c in b.children)
        own = b.branches if b.role in ("fold", "merged") else 0 if b.children else 1
        assert b.sub_leaves == own + sum(boxes[c].sub_leaves for c in b.children)
    said = {
        kind: sum(b.contains.get(kind, 0) + (b.problem == kind) for b in boxes) for kind in ("pending", "mismatched")
    }
    assert said == {kind: list(problems.values()).count(kind) for kind in ("pending", "mismatched")}
    merged = [b for b in boxes if b.role == "merged"]
    assert merged
    for b in merged:
        assert (b.on_path, b.spine, b.at) == (True, True, path[b.depth].event_id)
        assert b.side_events == b.branches >= 1  # each side branch here is one event
        assert b.latest == "s4999"  # the last appended leaf, below every stretch of the spine
        assert b.count == b.bottom - b.depth + 1


@pytest.mark.parametrize("max_nodes", [40, 41, 60, 99, 100, 250])
def test_merging_uses_the_node_budget_without_passing_it(max_nodes):
    grown = branching_at_every_step(3000)
    skeleton = grown.skeleton(head="x10")
    for selected in ("s2999", "x1500"):
        boxes = diagram_nodes(skeleton, path=grown.path(selected), problems={}, max_nodes=max_nodes)
        assert max_nodes - 3 <= len(boxes) <= max_nodes


def test_too_many_problems_fold_back_into_runs_that_say_so():
    grown = Grown()
    leaf = grown.chain("e", None, 500)
    path = grown.path(leaf)
    problems = {step.event_id: "pending" for step in path[100:300]}
    boxes = diagram_nodes(grown.skeleton(head=leaf), path=path, problems=problems)
    own = [box for box in boxes if box.problem]
    assert len(own) == MAX_PROBLEM_NODES
    assert min(box.depth for box in own) == 300 - MAX_PROBLEM_NODES  # the ones nearest the selection
    assert sum(box.contains.get("pending", 0) for box in boxes) == 200 - MAX_PROBLEM_NODES
    dot = build_dot(grown.skeleton(head=leaf), path=path, problems=problems, link=link)
    assert f"contains {200 - MAX_PROBLEM_NODES} pending" in dot


def test_a_run_says_each_kind_of_problem_it_holds_and_nothing_when_it_holds_none():
    grown = Grown()
    leaf = grown.chain("e", None, 500)
    path = grown.path(leaf)
    problems = {step.event_id: "pending" if i % 2 else "mismatched" for i, step in enumerate(path[100:300])}
    dot = build_dot(grown.skeleton(head=leaf), path=path, problems=problems, link=link)
    folded = 200 - MAX_PROBLEM_NODES
    assert f"contains {folded // 2} pending, {folded // 2} mismatched" in dot
    assert "contains" not in build_dot(grown.skeleton(head=leaf), path=path, problems={}, link=link)


def dot_labels(dot: str) -> list[str]:
    return [label.split("\\n") for label in re.findall(r' label="([^"]*)"', dot)]


def test_label_lines_are_one_short_clean_line_each():
    grown = Grown()
    root = grown.add("root", None, kind="MessageEvent")
    for name in "abcd":
        grown.add(name, root, kind="MessageEvent")
    fits = "y" * (LABEL_CHARS - len("Message: "))
    summaries = {"a": "tab\there\nnew  line", "b": "lone\ud800surrogate", "c": fits, "d": fits + "z"}
    dot = build_dot(grown.skeleton(head="c", summaries=summaries), path=grown.path("a"), problems={}, link=link)
    assert dot_labels(dot) == [
        ["Message", "depth 0 · 4 branches"],
        ["Message: tab here new line", "depth 1 · finished"],
        ["Message: lone?surrogate", "depth 1 · finished"],
        [f"Message: {fits}", "HEAD · depth 1 · finished"],
        [f"Message: {fits[:-1]}…", "depth 1 · finished"],
    ]


def test_folds_and_merged_stretches_say_what_they_hold():
    grown = leaves_on_the_root(2000)
    dot = build_dot(grown.skeleton(head="leaf1999"), path=grown.path("leaf5"), problems={}, link=link)
    (fold,) = [
        b
        for b in diagram_nodes(grown.skeleton(head="leaf1999"), path=grown.path("leaf5"), problems={})
        if b.role == "fold"
    ]
    assert [f"{fold.branches:,} branches · {fold.count:,} events"] in dot_labels(dot)

    grown = branching_at_every_step(5000)
    path = grown.path("s4999")
    (merged,) = [b for b in diagram_nodes(grown.skeleton(head="x10"), path=path, problems={}) if b.role == "merged"]
    dot = build_dot(grown.skeleton(head="x10"), path=path, problems={}, link=link)
    n, side = f"{merged.count:,}", f"{merged.branches:,}"
    assert [f"{n} events", f"+ {side} side branches ({side} events)"] in dot_labels(dot)


def test_labels_of_a_branch_with_a_split_run_side_events_and_comments(retries):
    loaded, skeleton, leaves = retries
    leaf = max(leaves, key=lambda i: loaded.tree.depth[i])
    path = loaded.path(leaf)[:7]
    labelled = copy.deepcopy(skeleton)
    (run,) = [n["run"] for n in labelled["nodes"] if n["id"] == leaf]
    run |= {"first_label": "Message: kept first", "last_label": "terminal: wc -w data.txt", "side": 2}
    problems, comments = {path[5].event_id: "pending"}, {path[6].event_id: 2}
    dot = build_dot(labelled, path=path, problems=problems, link=link, comments=comments)
    assert dot_labels(dot) == [
        ["System prompt", "depth 0"],
        ["Message: Write a script tha…", "depth 1 · 2 branches"],
        ["terminal: list files", "depth 2"],
        ["result", "depth 3 · 2 branches"],
        ["3 events · depth 4–6", "tool call …"],
        ["result: count.py counts wor…", "depth 7 · finished"],
        ["Message: kept first", "depth 4", "+ 2 side events"],
        ["terminal: write count.sh", "depth 5 · pending"],
        ["terminal result", "depth 6", "✎ 2"],
        ["3 events · depth 7–9"],
        ["result: count.sh runs wc -w…", "depth 10 · finished"],
        ["4 events · depth 2–5", "Message …"],
        ["result: There is no data.tx…", "HEAD · depth 6 · finished"],
    ]
    for node in labelled["nodes"]:
        node["outcome"] = ""  # a leaf that did not finish
    assert ["result: count.sh runs wc -w…", "depth 10 · open"] in dot_labels(
        build_dot(labelled, path=loaded.path(leaf), problems={}, link=link)
    )


def dot_tooltips(dot: str) -> list[str]:
    return [tip.replace("\\n", " / ") for tip in re.findall(r' tooltip="([^"]*)"', dot)]


def test_tooltips_say_what_a_node_stands_for_and_where_a_click_goes(retries):
    loaded, skeleton, leaves = retries
    leaf = max(leaves, key=lambda i: loaded.tree.depth[i])
    path = loaded.path(leaf)[:7]
    labelled = copy.deepcopy(skeleton)
    (run,) = [n["run"] for n in labelled["nodes"] if n["id"] == leaf]
    run |= {"first_label": "Message: kept first", "last_label": "terminal: wc -w data.txt"}
    problems, comments = {path[5].event_id: "pending"}, {path[6].event_id: 2}
    go, first, switch = (
        "Click to go to this event on the branch shown.",
        "Click to go to its first event on the branch shown.",
        "Click to switch to the most recent branch below.",
    )
    on_branch = dot_tooltips(
        build_dot(labelled, path=path, problems=problems, link=link, event_link=event_link, comments=comments)
    )
    elsewhere = dot_tooltips(build_dot(labelled, path=path, problems=problems, link=link, comments=comments))
    for expected in (
        f"1 folded event at depth 2: terminal: list files. {first}",
        f"3 events at depths 4–6 (folded events): tool call … tool call. {switch}",
        f"1 folded event at depth 4: Message: kept first. {first}",
        f"ActionEvent · depth 5 · pending · {path[5].timestamp} / terminal: write count.sh / {go}",
        f"2 comments / ObservationEvent · depth 6 · selected · {path[6].timestamp} / terminal result / {go}",
        f"3 events at depths 7–9 (folded events): terminal: wc -w data.txt. {switch}",
    ):
        assert expected in on_branch
    for expected in (
        f"1 folded event at depth 2: terminal: list files. {switch}",
        f"ActionEvent · depth 5 · pending · {path[5].timestamp} / terminal: write count.sh / {switch}",
        f"2 comments / ObservationEvent · depth 6 · selected · {path[6].timestamp} / terminal result",  # no click
    ):
        assert expected in elsewhere

    grown = leaves_on_the_root(2000)
    boxes = diagram_nodes(grown.skeleton(head="leaf1999"), path=grown.path("leaf5"), problems={})
    (fold,) = [b for b in boxes if b.role == "fold"]
    tips = dot_tooltips(build_dot(grown.skeleton(head="leaf1999"), path=grown.path("leaf5"), problems={}, link=link))
    n = f"{fold.branches:,}"
    assert f"{n} branches folded here ({n} events). Click to switch to the most recent of them." in tips

    grown = branching_at_every_step(5000)
    path = grown.path("s4999")
    problems = {path[100].event_id: "pending", path[200].event_id: "mismatched"}
    (merged,) = [
        b for b in diagram_nodes(grown.skeleton(head="x10"), path=path, problems=problems) if b.role == "merged"
    ]
    tips = dot_tooltips(
        build_dot(grown.skeleton(head="x10"), path=path, problems=problems, link=link, event_link=event_link)
    )
    count, side = f"{merged.count:,}", f"{merged.branches:,}"
    span = f"{merged.depth:,}–{merged.bottom:,}"
    assert (
        f"{count} events at depths {span} (a stretch with {side} side branches of {side} events),"
        f" contains 1 pending, 1 mismatched. {first}"
    ) in tips


# --- hostile text ---------------------------------------------------------------------------

HOSTILE = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    ']; a -> b [label="pwn"',
    "back\\slash \\N \\\\ \\",
    "&amp; &lt; &nbsp; &bogus;",
    "line\nbreak\r\x00\x07\u202e\ufffe",
    "</text><script>alert(2)</script>",
    "javascript:alert(3)",
    "x" * 5000,
]


def all_elements_and_attributes(root: ET.Element):
    for element in root.iter():
        yield element, dict(element.attrib)


def test_it_escapes_hostile_summaries_kinds_and_ids():
    grown = Grown()
    ids = [grown.add(f'root"{HOSTILE[0]}', None, kind=HOSTILE[2])]
    for i, text in enumerate(HOSTILE):
        ids.append(grown.add(f"{text}#{i}", ids[0], kind=text + "Event"))
    skeleton = grown.skeleton(head=ids[-1], summaries={i: HOSTILE[n % len(HOSTILE)] for n, i in enumerate(ids)})
    for node in skeleton["nodes"]:
        node["timestamp"] = HOSTILE[1]
    path = grown.path(ids[3])
    svg = diagram_svg(skeleton, path=path, problems={ids[3]: "mismatched"}, link=link, htmx_target="#diagram")
    on_branch = diagram_svg(skeleton, path=path, problems={}, link=link, event_link=event_link, htmx_target="#diagram")
    focused = {a["data-anchor"] for a in anchors(ET.fromstring(on_branch)).values()} - {None}
    assert focused == {ids[0], ids[3]}  # the hostile ids come back exactly, as attribute text

    root = ET.fromstring(svg)  # well-formed XML
    assert "<script" not in svg.lower() and "<img" not in svg.lower()
    assert "&lt;script&gt;" in svg
    for element, attrs in all_elements_and_attributes(root):
        assert element.tag.removeprefix(SVG) in ALLOWED_ELEMENTS
        assert not any(name.lower().startswith("on") or name == "style" for name in attrs)
    hrefs = [a.get(XLINK_HREF) for a in root.iter(f"{SVG}a")]
    assert sorted(hrefs) == sorted(link(i) for i in [ids[-1], *ids[1:]])  # the root selects the latest leaf
    texts = {t.text for t in root.iter(f"{SVG}text")}
    for text in HOSTILE[:5]:  # kinds start their labels literally (one line, at most 30 characters)
        assert any(t.startswith(text.removesuffix("Event")[:20]) for t in texts if t)
    titles = [t.text for a in root.iter(f"{SVG}a") for t in a.findall(f"{SVG}title")]
    assert titles and all(len(t) <= 300 for t in titles)
    assert any("&amp; &lt; &nbsp; &bogus;" in t for t in titles)  # entities are not decoded


def test_the_dot_source_never_carries_event_text_unquoted():
    grown = Grown()
    root = grown.add('r"]; evil [shape=box', None, kind='k"]; evil2 [')
    leaf = grown.add("\\", root, kind="\\")
    skeleton = grown.skeleton(head=leaf, summaries={root: 'x"; y="', leaf: "\\"})
    dot = build_dot(skeleton, path=grown.path(leaf), problems={}, link=link)
    assert "evil" not in re.sub(r'"(?:[^"\\]|\\.)*"', '""', dot)  # nothing outside quoted strings
    render_svg(dot)  # dot accepts it


# --- the sanitizer --------------------------------------------------------------------------

RAW = """<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
<!-- Generated by hand -->
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" onload="alert(0)" width="10pt">
<script>alert(1)</script>
<g id="n0" class="node" style="fill:url(http://evil/)">
<a xlink:href="javascript:alert(2)" xlink:title="bad" target="_blank">
<text onmouseover="alert(3)" x="1">bad link</text></a>
<a xlink:href="//evil.example/x"><text>off-site</text></a>
<a xlink:href="/c/1/?leaf=a&amp;b" xlink:title="good"><text fill="url(javascript:alert(4))">good link</text></a>
<a href="https://evil.example/svg2"><text>svg2 off-site</text></a>
<a href="//evil.example/mixed" xlink:href="/c/1/?leaf=m" xlink:title="bad mixed"><text>mixed</text></a>
<a xlink:href="/c/1/?leaf=t" xlink:title="tip"><title>own tip</title><text>titled</text></a>
<a xlink:href="/c/1/?leaf=z#top"><text>fragment</text></a>
<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">html</div></foreignObject>
<image xlink:href="http://evil/x.png"/><use xlink:href="#n0"/>
</g>
</svg>"""


def test_the_sanitizer_drops_scripts_handlers_and_foreign_links():
    svg = sanitize_svg(RAW, htmx_target="#diagram")
    root = ET.fromstring(svg)
    assert svg.startswith("<svg ") and "ns0:" not in svg and "<!--" not in svg and "<?xml" not in svg
    for lost in ("script", "alert", "javascript", "evil", "foreignObject", "<image", "<use", "style=", " target="):
        assert lost not in svg
    for element, attrs in all_elements_and_attributes(root):
        assert element.tag.removeprefix(SVG) in ALLOWED_ELEMENTS
        assert not any(name.startswith("on") for name in attrs)
    good, titled, fragment = root.iter(f"{SVG}a")  # the links with an unsafe target are plain groups
    assert good.get(XLINK_HREF) == "/c/1/?leaf=a&b"
    assert good.get("hx-get") == "/c/1/?leaf=a&b" and good.get("hx-target") == "#diagram"
    assert (good.get("hx-swap"), good.get("hx-push-url")) == ("outerHTML", "true")
    assert good[0].tag == f"{SVG}title" and good[0].text == "good"  # the tooltip, first
    assert [t.text for t in titled.iter(f"{SVG}title")] == ["own tip"]  # never a second one
    assert fragment.get("hx-get") == "/c/1/?leaf=z#top" and fragment.get("data-anchor") is None
    for element, attrs in all_elements_and_attributes(root):
        if element.tag != f"{SVG}a":  # a link made a group keeps neither its target nor its title
            assert not {"href", XLINK_HREF, "{http://www.w3.org/1999/xlink}title"} & set(attrs), attrs
    assert {t.text for t in root.iter(f"{SVG}text")} == {
        "bad link",
        "off-site",
        "good link",
        "svg2 off-site",
        "mixed",
        "titled",
        "fragment",
    }
    assert "bad mixed" not in svg


def test_the_sanitizer_refuses_entity_declarations():
    with pytest.raises(ValueError):
        sanitize_svg('<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg xmlns="http://www.w3.org/2000/svg">&a;</svg>')


def test_the_sanitizer_refuses_a_dtd_of_its_own_and_what_is_not_svg():
    # A DTD's default attributes would reach every element without being written on it.
    with pytest.raises(ValueError):
        sanitize_svg('<!DOCTYPE svg [<!ATTLIST svg class CDATA "x">]><svg xmlns="http://www.w3.org/2000/svg"/>')
    with pytest.raises(ValueError, match="not an SVG document"):
        sanitize_svg('<html xmlns="http://www.w3.org/1999/xhtml"/>')


def test_the_sanitizer_keeps_at_most_max_nesting_levels_below_the_root():
    from eventviewer.trajectory.diagram.svg import MAX_NESTING

    def nested(levels: int) -> str:
        return '<svg xmlns="http://www.w3.org/2000/svg">' + "<g>" * levels + "</g>" * levels + "</svg>"

    def depth(svg: str) -> int:
        element, levels = ET.fromstring(svg), 0
        while (element := element.find(f"{SVG}g")) is not None:
            levels += 1
        return levels

    assert depth(sanitize_svg(nested(MAX_NESTING))) == MAX_NESTING
    assert depth(sanitize_svg(nested(MAX_NESTING + 5))) == MAX_NESTING


# --- the branch list ------------------------------------------------------------------------


def test_each_branch_says_where_it_leaves_the_selected_one_and_what_it_does_first():
    grown = Grown()
    root = grown.add("sys", None, kind="SystemPromptEvent")
    ask = grown.add("ask", root, kind="MessageEvent")
    main = grown.chain("m", ask, 4)  # m0..m3, the selected branch
    side = grown.chain("s", "m1", 3)  # leaves the selected branch after m1
    late = grown.add("late", "m2", kind="ActionEvent")  # a single event after m2
    early = grown.chain("e", root, 2)  # leaves right after the root
    skeleton = labelled(grown, main, {"s0": "terminal: ls -1", "late": "think: hmm", "e0": "User: other"})
    rows = {b.leaf: b for b in describe_branches(skeleton, [s.event_id for s in grown.path(main)])}
    assert (rows[main].fork, rows[main].first) == (None, None)
    assert (rows[side].fork, rows[side].fork_depth, rows[side].first, rows[side].first_label) == (
        "m1",
        3,
        "s0",
        "terminal: ls -1",
    )
    assert (rows[late].fork, rows[late].first, rows[late].first_label) == ("m2", "late", "think: hmm")
    assert (rows[early].fork, rows[early].first, rows[early].first_label) == ("sys", "e0", "User: other")
    assert [b.leaf for b in describe_branches(skeleton, [])] == [early, late, side, main]  # most recent first
    assert rows[side].length == rows[side].depth + 1 == 7


def test_the_branch_shown_is_listed_when_it_ends_above_a_leaf():
    grown = Grown()
    root = grown.add("sys", None, kind="SystemPromptEvent")
    done = grown.add("done", root, kind="MessageEvent")
    error = grown.add("err1", grown.add("err0", done, kind="ConversationErrorEvent"), kind="ConversationErrorEvent")
    skeleton = grown.skeleton(head=done)
    end = Light(done, "MessageEvent", source="agent", summary="All done", seq=1, depth=1)
    rows = describe_branches(skeleton, [root, done], {error: (0, 0), done: (0, 0)}, end)
    assert [(b.leaf, b.head, b.fork) for b in rows] == [(error, False, done), (done, True, None)]
    assert (rows[1].outcome, rows[1].label, rows[1].problems) == ("finished", "Agent: All done", 0)
    assert [b.leaf for b in describe_branches(skeleton, [root, done])] == [error]  # no end given: leaves only


# --- comments -------------------------------------------------------------------------------


def test_an_event_with_comments_is_marked_with_their_count(retries):
    loaded, skeleton, leaves = retries
    path = loaded.path(leaves[0])
    dot = build_dot(skeleton, path=path, problems={}, link=link, comments={leaves[0]: 2, leaves[1]: 1})
    boxes = diagram_nodes(skeleton, path=path, problems={})
    for leaf, said in ((leaves[0], "2 comments"), (leaves[1], "1 comment")):
        (box,) = [b for b in boxes if b.event_id == leaf]
        line = next(line for line in dot.splitlines() if line.startswith(f"  n{box.index} ["))
        assert "commented" in re.search(r'class="([^"]*)"', line).group(1).split()
        assert re.search(r'label="[^"]*\\n✎ ' + said[0] + '"', line)
        assert re.search(r'tooltip="' + said + r"\\n", line)
    unmarked = [line for line in dot.splitlines() if "commented" not in line and "✎" in line]
    assert unmarked == []


def test_a_comment_on_an_event_not_drawn_marks_nothing(retries):
    loaded, skeleton, leaves = retries
    path = loaded.path(leaves[0])
    dot = build_dot(skeleton, path=path, problems={}, link=link, comments={"not-an-event": 3})
    assert "commented" not in dot and "✎" not in dot


def test_the_comment_mark_reaches_the_svg_as_an_escaped_title(retries):
    loaded, skeleton, leaves = retries
    path = loaded.path(leaves[0])
    svg = diagram_svg(skeleton, path=path, problems={}, link=link, comments={leaves[0]: 2})
    root = ET.fromstring(svg)
    (node,) = [g for g in root.iter(f"{SVG}g") if "commented" in (g.get("class") or "").split()]
    titles = [t.text or "" for t in node.iter(f"{SVG}title")]
    assert any(t.startswith("2 comments\n") for t in titles)
    assert "✎ 2" in "".join(t.text or "" for t in node.iter(f"{SVG}text"))
