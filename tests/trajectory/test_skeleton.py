"""The skeleton, and where "Show in the conversation" lands for an event off HEAD's branch.

Checked on a hand-drawn tree and, against a brute-force reading of the tree, on random ones.
"""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from eventviewer.trajectory.skeleton import Node, build_skeleton, latest_leaf_below


def grow(parents: dict[str, str | None]) -> list[Node]:
    """Nodes in append order (the dict's order), depths from the parent links."""
    depth: dict[str, int] = {}
    for event_id, parent in parents.items():
        depth[event_id] = 0 if parent is None else depth[parent] + 1
    return [
        Node(i, parent, seq, depth[i], f"Kind{seq % 3}", f"outcome-{i}", f"t{seq}", f"s-{i}")
        for seq, (i, parent) in enumerate(parents.items())
    ]


def path_to(nodes: list[Node], event_id: str) -> list[str]:
    parent = {n.id: n.parent for n in nodes}
    path = [event_id]
    while (up := parent[path[-1]]) is not None:
        path.append(up)
    return path[::-1]


# R - A - B - C (HEAD)
#      \
#       S1 - S2 - S3 - X - L1
#                       \
#                        L2 (appended last)
SIDE = {
    "R": None,
    "A": "R",
    "B": "A",
    "C": "B",
    "S1": "A",
    "S2": "S1",
    "S3": "S2",
    "X": "S3",
    "L1": "X",
    "L2": "X",
}


def test_an_event_in_a_folded_run_of_a_side_branch_lands_on_that_branchs_latest_leaf():
    nodes = grow(SIDE)
    skeleton = build_skeleton(nodes, head="C")
    assert {n["id"] for n in skeleton["nodes"]} == {"R", "A", "C", "X", "L1", "L2"}  # S1-S3 and B are folded
    for event_id in ("S1", "S2", "S3"):
        assert latest_leaf_below(skeleton, path_to(nodes, event_id)) == "L2"
    assert latest_leaf_below(skeleton, path_to(nodes, "B")) == "C"


def test_a_kept_event_lands_on_its_own_latest_leaf_and_a_leaf_on_itself():
    nodes = grow(SIDE)
    skeleton = build_skeleton(nodes, head="C")
    assert latest_leaf_below(skeleton, path_to(nodes, "X")) == "L2"
    assert latest_leaf_below(skeleton, path_to(nodes, "A")) == "L2"
    assert latest_leaf_below(skeleton, path_to(nodes, "L1")) == "L1"
    assert latest_leaf_below(skeleton, []) is None
    assert latest_leaf_below({}, ["R"]) is None  # a conversation without a skeleton yet


def test_folded_runs_are_counted_from_their_first_to_their_last_event():
    skeleton = build_skeleton(grow(SIDE), head="C")
    by_id = {n["id"]: n for n in skeleton["nodes"]}
    assert by_id["X"]["up"] == "A"
    assert by_id["X"]["run"] == {
        "count": 3,
        "first": "S1",
        "first_kind": "Kind1",
        "last": "S3",
        "last_kind": "Kind0",
        "side": 0,
    }
    assert by_id["C"]["run"] == {
        "count": 1,
        "first": "B",
        "first_kind": "Kind2",
        "last": "B",
        "last_kind": "Kind2",
        "side": 0,
    }
    assert by_id["L1"]["run"] is None and by_id["R"]["run"] is None and by_id["R"]["up"] is None


# --- random trees against a brute-force reading -------------------------------------------


@st.composite
def trees(draw: st.DrawFn) -> tuple[list[Node], str | None]:
    """Mostly long chains (so that runs fold), some branches, a few extra roots."""
    size = draw(st.integers(1, 30))
    parents: dict[str, str | None] = {"e0": None}
    for i in range(1, size):
        choice = draw(st.sampled_from(["chain"] * 6 + ["branch"] * 3 + ["root"]))
        if choice == "chain":
            parents[f"e{i}"] = f"e{i - 1}"
        elif choice == "branch":
            parents[f"e{i}"] = f"e{draw(st.integers(0, i - 1))}"
        else:
            parents[f"e{i}"] = None
    nodes = grow(parents)
    head = draw(st.one_of(st.none(), st.sampled_from(sorted(parents))))
    return nodes, head


def below(nodes: list[Node], event_id: str) -> Iterator[str]:
    """The event and every event under it."""
    yield event_id
    for n in nodes:
        if n.parent == event_id:
            yield from below(nodes, n.id)


def children_of(nodes: list[Node], event_id: str) -> list[str]:
    return [n.id for n in nodes if n.parent == event_id]


def latest_leaf(nodes: list[Node], event_id: str) -> str:
    seq = {n.id: n.seq for n in nodes}
    return max((i for i in below(nodes, event_id) if not children_of(nodes, i)), key=seq.__getitem__)


@settings(max_examples=150, deadline=None)
@given(trees())
def test_every_event_lands_on_the_latest_leaf_below_it(tree):
    nodes, head = tree
    skeleton = build_skeleton(nodes, head)
    for n in nodes:
        assert latest_leaf_below(skeleton, path_to(nodes, n.id)) == latest_leaf(nodes, n.id)


@settings(max_examples=150, deadline=None)
@given(trees())
def test_the_skeleton_keeps_roots_branch_points_leaves_and_head_and_folds_the_rest(tree):
    nodes, head = tree
    skeleton = build_skeleton(nodes, head)
    by_id = {n.id: n for n in nodes}
    kept = {n.id for n in nodes if n.parent is None or len(children_of(nodes, n.id)) != 1} | {head} - {None}
    assert skeleton["events"] == len(nodes) and skeleton["head"] == head
    assert [k["id"] for k in skeleton["nodes"]] == [n.id for n in nodes if n.id in kept]  # append order
    for k in skeleton["nodes"]:
        n = by_id[k["id"]]
        path = path_to(nodes, n.id)
        ups = [i for i in path[:-1] if i in kept]
        folded = path[path.index(ups[-1]) + 1 : -1] if ups else []
        children = children_of(nodes, n.id)
        subtree = list(below(nodes, n.id))
        assert k["up"] == (ups[-1] if ups else None)
        if folded:
            first, last = by_id[folded[0]], by_id[folded[-1]]
            assert k["run"] == {
                "count": len(folded),
                "first": first.id,
                "first_kind": first.kind,
                "last": last.id,
                "last_kind": last.kind,
                "side": 0,
            }
        else:
            assert k["run"] is None
        assert (k["kind"], k["depth"], k["seq"], k["timestamp"], k["summary"]) == (
            n.kind,
            n.depth,
            n.seq,
            n.timestamp,
            n.summary,
        )
        assert k["children"] == len(children)
        assert (k["root"], k["branch"], k["leaf"], k["head"]) == (
            n.parent is None,
            len(children) > 1,
            not children,
            n.id == head,
        )
        assert k["outcome"] == (n.outcome if not children else None)
        assert k["leaves"] == sum(1 for i in subtree if not children_of(nodes, i))
        assert k["events"] == len(subtree)
        assert k["latest_leaf"] == latest_leaf(nodes, n.id)
