"""Side events: hooks (and token counts, completion logs) that ran beside an event share
its parent, so the tree makes them dead-end leaves. They are not branches."""

from eventviewer.trajectory.skeleton import Node, build_skeleton, side_events

from .sdk import FIXTURES, load_folder


def hooks():
    (folder,) = [p for p in (FIXTURES / "hooks").iterdir() if p.is_dir()]
    return load_folder(folder)


def test_the_hooks_conversation_is_one_branch_with_its_hooks_beside_the_events():
    loaded = hooks()
    skeleton = loaded.skeleton()
    leaves = [n for n in skeleton["nodes"] if n["leaf"]]
    assert [n["id"] for n in leaves] == [loaded.answers["leaf"]]
    # The eight hooks the SDK lists as other leaves are the side events, and nothing else is.
    assert side_events(loaded_nodes(loaded), loaded.head) == set(loaded.answers["other_leaves"])
    # Folded into the main line's run, they are counted there.
    assert sum(n["side"] + (n["run"] or {}).get("side", 0) for n in skeleton["nodes"]) == 8


def loaded_nodes(loaded):
    from .sdk import nodes

    return nodes(loaded.events.values(), loaded.tree)


def node(event_id, parent, kind="MessageEvent", depth=0, seq=0):
    return Node(event_id, parent, seq, depth, kind, "open")


def test_a_side_kind_leaf_alone_at_the_end_of_its_line_ends_a_branch():
    nodes = [node("m", None), node("h", "m", "HookExecutionEvent", 1, 1)]
    assert side_events(nodes) == set()
    assert [n["id"] for n in build_skeleton(nodes, None)["nodes"] if n["leaf"]] == ["h"]


def test_head_on_a_hook_beside_another_event_keeps_that_hook_a_branch():
    nodes = [node("m", None), node("h", "m", "HookExecutionEvent", 1, 1), node("a", "m", "ActionEvent", 1, 2)]
    assert side_events(nodes) == {"h"}
    assert side_events(nodes, head="h") == set()
    skeleton = build_skeleton(nodes, "a")
    assert [n["id"] for n in skeleton["nodes"] if n["leaf"]] == ["a"]
    assert next(n for n in skeleton["nodes"] if n["id"] == "m")["side"] == 1


def test_two_hooks_beside_nothing_else_are_both_branches():
    nodes = [node("m", None), node("h1", "m", "HookExecutionEvent", 1, 1), node("h2", "m", "HookExecutionEvent", 1, 2)]
    assert side_events(nodes) == set()


def test_the_diagram_marks_side_events_on_their_node_instead_of_drawing_stubs():
    from eventviewer.trajectory.diagram import build_dot, diagram_nodes

    loaded = hooks()
    skeleton = loaded.skeleton()
    path = loaded.path()
    boxes = diagram_nodes(skeleton, path=path, problems={})
    assert sum(box.side for box in boxes) == 8
    assert sum(1 for box in boxes if box.node is not None and box.node["leaf"]) == 1
    assert "side events" in build_dot(skeleton, path=path, problems={}, link=lambda e: f"?leaf={e}")
