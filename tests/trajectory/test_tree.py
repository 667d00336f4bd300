import pytest

from eventviewer.trajectory.tree import Entry, TreeError, build_tree, path_to_root


def tree_of(*rows):
    return build_tree([Entry(seq, *row, where=f"event-{seq:05d}.json") for seq, row in enumerate(rows)])


def problems(*rows):
    with pytest.raises(TreeError) as caught:
        tree_of(*rows)
    return [str(p) for p in caught.value.problems]


def test_explicit_parents_make_sibling_branches():
    tree = tree_of(
        ("root", "MessageEvent", None),
        ("a", "ActionEvent", "root"),
        ("old", "ObservationEvent", "a"),
        ("new", "ObservationEvent", "a"),
    )
    assert tree.path("new") == ["root", "a", "new"]
    assert tree.path("old") == ["root", "a", "old"]


def test_a_null_parent_on_a_later_event_follows_the_previous_one():
    tree = tree_of(("s", "SystemPromptEvent", None), ("m", "MessageEvent", None), ("a", "ActionEvent", None))
    assert tree.path("a") == ["s", "m", "a"]
    assert tree.depth == {"s": 0, "m": 1, "a": 2}


def test_root_marker_starts_a_new_root():
    tree = tree_of(
        ("s", "SystemPromptEvent", None),
        ("m", "MessageEvent", "s"),
        ("r2", "MessageEvent", "__root__"),
        ("x", "ActionEvent", None),
    )
    assert tree.path("x") == ["r2", "x"]
    assert tree.parent["r2"] is None


def test_state_updates_are_not_tree_nodes_and_legacy_parents_skip_them():
    tree = tree_of(
        ("s", "SystemPromptEvent", None), ("u", "ConversationStateUpdateEvent", None), ("m", "MessageEvent", None)
    )
    assert "u" not in tree.parent
    assert tree.path("m") == ["s", "m"]


def test_timestamps_never_decide_parenthood():
    # The child comes first in the log: only parent links count.
    tree = tree_of(("child", "ActionEvent", "root"), ("root", "MessageEvent", "__root__"))
    assert tree.path("child") == ["root", "child"]
    assert tree.depth["child"] == 1


def test_head_is_leaf_event_id_else_the_last_event_that_is_not_an_error():
    tree = tree_of(("s", "SystemPromptEvent", None), ("m", "MessageEvent", "s"), ("e", "ConversationErrorEvent", "m"))
    assert tree.head("s") == "s"
    assert tree.head(None) == "m"
    assert tree.head(None, head_is_empty=True) is None


def test_a_head_naming_a_missing_event_is_refused():
    tree = tree_of(("s", "SystemPromptEvent", None))
    with pytest.raises(TreeError, match="nope, which does not exist"):
        tree.head("nope")


def test_it_reports_a_missing_parent_with_file_and_event():
    assert problems(("s", "SystemPromptEvent", None), ("m", "MessageEvent", "ghost")) == [
        "event-00001.json: event m: parent ghost does not exist"
    ]


def test_it_reports_each_cycle_once():
    lines = problems(
        ("s", "SystemPromptEvent", None),
        ("a", "ActionEvent", "b"),
        ("b", "ActionEvent", "a"),
        ("c", "ActionEvent", "b"),
    )
    assert len(lines) == 1
    assert "cycle" in lines[0] and "event a" in lines[0]


def test_it_reports_a_self_parent():
    assert problems(("a", "MessageEvent", "a")) == ["event-00000.json: event a: is its own parent (cycle)"]


def test_it_reports_duplicates_and_the_reserved_root_id():
    lines = problems(("a", "MessageEvent", None), ("a", "ActionEvent", None), ("__root__", "ActionEvent", None))
    assert lines == [
        "event-00001.json: event a: duplicate event id (first seen in event-00000.json)",
        'event-00002.json: event __root__: "__root__" is reserved and cannot be an event id',
    ]


def test_a_parent_that_is_a_state_update_is_refused():
    lines = problems(
        ("s", "SystemPromptEvent", None), ("u", "ConversationStateUpdateEvent", None), ("m", "MessageEvent", "u")
    )
    assert "not part of the tree" in lines[0]


def test_path_walk_detects_cycles_and_missing_events_in_o_depth():
    with pytest.raises(TreeError, match="cycle"):
        path_to_root({"a": "b", "b": "a"}, "a")
    with pytest.raises(TreeError, match="missing"):
        path_to_root({"a": "b"}, "a")
    assert path_to_root({}, None) == []
