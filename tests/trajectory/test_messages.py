"""What a user reads when a log does not form a tree, or a result does not fit its action."""

from __future__ import annotations

import pytest

from eventviewer.trajectory.pairing import pair
from eventviewer.trajectory.reading import read
from eventviewer.trajectory.tree import Entry, Problem, TreeError, build_tree, path_to_root

from .events import act, err, msg, obs


def refused(call, *args) -> list[str]:
    with pytest.raises(TreeError) as caught:
        call(*args)
    assert str(caught.value) == "\n".join(str(p) for p in caught.value.problems)
    return [str(p) for p in caught.value.problems]


def test_a_problem_names_its_file_and_event_when_it_has_them():
    assert str(Problem("event-00001.json", "e1", "is wrong")) == "event-00001.json: event e1: is wrong"
    assert str(Problem("base_state.json", None, "is wrong")) == "base_state.json: is wrong"
    assert str(Problem("", "e1", "is wrong")) == "event e1: is wrong"
    assert str(Problem("", None, "is wrong")) == "is wrong"


def test_a_head_naming_a_missing_event_is_blamed_on_base_state():
    tree = build_tree([Entry(0, "s", "SystemPromptEvent", None)])
    assert refused(tree.head, "nope") == [
        "base_state.json: HEAD (leaf_event_id) names event nope, which does not exist"
    ]


def test_walking_up_names_the_event_that_loops_or_is_missing():
    assert refused(path_to_root, {"a": "b", "b": "a"}, "a") == [
        "event a: the parent chain loops back to this event (cycle)"
    ]
    assert refused(path_to_root, {"a": "b"}, "a") == ["event b: is missing from the conversation"]
    assert path_to_root({"a": None, "b": "a", "c": "b"}, "c") == ["a", "b", "c"]


def test_the_reserved_id_does_not_hide_later_problems():
    entries = [Entry(0, "__root__", "MessageEvent", None, "f0"), Entry(1, "m", "MessageEvent", "ghost", "f1")]
    assert refused(build_tree, entries) == [
        'f0: event __root__: "__root__" is reserved and cannot be an event id',
        "f1: event m: parent ghost does not exist",
    ]


def test_events_are_read_in_append_order_whatever_order_they_come_in():
    entries = [Entry(2, "c", "MessageEvent", None), Entry(0, "a", "MessageEvent", None), Entry(1, "b", "X", None)]
    tree = build_tree(entries)
    assert tree.parent == {"a": None, "b": "a", "c": "b"}  # null parents follow the previous event
    assert list(tree.parent) == ["a", "b", "c"]


@pytest.mark.parametrize(
    ("path", "elsewhere", "reason"),
    [
        ([obs("o", "", "c")], (), "names no action (action_id is empty)"),
        ([obs("o", "a", "c"), act("a", "c")], (), "comes before its action a"),
        ([msg("m"), obs("o", "m", "c")], (), "answers event m, which is a MessageEvent, not an action"),
        ([obs("o", "a", "c")], ("a",), "answers action a, which is on another branch"),
        ([obs("o", "a", "c")], (), "answers action a, which does not exist in this conversation"),
        ([act("a", "c1"), obs("o", "a", "c2")], (), "tool_call_id 'c2' does not match the action's 'c1'"),
        (
            [act("a", "c", tool="t1"), obs("o", "a", "c", tool="t2")],
            (),
            "tool_name 't2' does not match the action's 't1'",
        ),
        (
            [act("a", "c"), obs("x", "a", "c"), obs("o", "a", "c")],
            (),
            "second result for action a, already answered by x",
        ),
        ([err("o", "c"), act("a", "c")], (), "comes before the action that made tool call c"),
        ([err("o", "c")], (), "answers tool call c, which no action on this branch made"),
        ([act("a", "c", tool="t1"), err("o", "c", tool="t2")], (), "tool_name 't2' does not match the action's 't1'"),
    ],
)
def test_a_mismatched_result_says_why(path, elsewhere, reason):
    assert pair(path, frozenset(elsewhere)).mismatched["o"].reason == reason


def test_reading_a_branch_knows_the_actions_on_other_branches():
    path = [msg("m"), obs("o", "a", "c")]
    assert read(path, frozenset({"a"})).pairing.mismatched["o"].code == "other_branch"
    assert read(path).pairing.mismatched["o"].code == "unknown_action"
    assert read(path).problem_ids == ["o"]
