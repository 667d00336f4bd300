"""Which turns of a long branch a page shows, and which problems it lists around them."""

from __future__ import annotations

import pytest

from eventviewer.trajectory.reading import read
from eventviewer.trajectory.window import NotOnBranch, Span, problems_near, window

from .events import act, msg, obs


def branch(actions: int) -> list:
    """A user message, then ``actions`` tool calls from separate responses, none answered:
    turn i (from 1) is action a{i-1}, and every action is pending."""
    return [msg("m"), *(act(f"a{i}", f"c{i}", response=f"r{i}") for i in range(actions))]


def turns(actions: int) -> list:
    return read(branch(actions)).turns


def test_without_an_anchor_the_newest_turns_show():
    assert window(turns(99), 30) == Span(70, 100, 100)
    assert window(turns(9), 30) == Span(0, 10, 10)


def test_the_window_around_an_event_puts_it_a_third_of_the_way_down():
    assert window(turns(99), 30, at="a49") == Span(40, 70, 100)  # a49 is turn 50
    assert window(turns(99), 30, at="a4") == Span(0, 30, 100)
    assert window(turns(99), 30, at="a97") == Span(70, 100, 100)
    assert window(turns(9), 30, at="a4") == Span(0, 10, 10)


def test_load_earlier_and_later_show_the_turns_just_before_and_after_an_event():
    assert window(turns(99), 30, before="a49") == Span(20, 50, 100)
    assert window(turns(99), 30, before="a9") == Span(0, 10, 100)
    assert window(turns(99), 30, after="a49") == Span(51, 81, 100)
    assert window(turns(99), 30, after="a89") == Span(91, 100, 100)


def test_any_event_of_a_batch_anchors_its_turn():
    path = [msg("m"), act("x1", "c1", response="r"), act("x2", "c2", response="r"), msg("n")]
    assert window(read(path).turns, 1, at="x2") == Span(1, 2, 3)


@pytest.mark.parametrize("anchor", ["at", "before", "after"])
def test_an_event_off_the_branch_is_refused(anchor):
    with pytest.raises(NotOnBranch) as refused:
        window(turns(5), 3, **{anchor: "elsewhere"})
    assert refused.value.args == ("elsewhere",)  # the page names it


def test_a_span_knows_what_lies_beyond_it():
    middle = Span(10, 20, 30)
    assert (middle.has_earlier, middle.has_later, middle.later_count) == (True, True, 10)
    whole = Span(0, 30, 30)
    assert (whole.has_earlier, whole.has_later, whole.later_count) == (False, False, 0)
    # A stretch of a longer branch counts the branch's events beyond the window, not its turns.
    cut = Span(0, 30, 30, earlier=500, later=40)
    assert (cut.has_earlier, cut.has_later, cut.later_count) == (True, True, 40)
    newest = Span(10, 30, 30, earlier=900, later=0)
    assert (newest.has_earlier, newest.has_later, newest.later_count) == (True, False, 0)


def test_problems_are_placed_before_in_or_after_the_window_within_reach():
    reading = read(branch(10))  # pending a0..a9 are turns 1..10
    near = problems_near(reading, Span(4, 7, 11), reach=2)
    assert [(p.event_id, p.where) for p in near] == [
        ("a1", "before"),
        ("a2", "before"),
        ("a3", "in"),
        ("a4", "in"),
        ("a5", "in"),
        ("a6", "after"),
        ("a7", "after"),
    ]
    assert all(p.mismatch is None for p in near)  # pending
    assert [p.event_id for p in problems_near(reading, Span(4, 7, 11))] == [f"a{i}" for i in range(10)]


def test_a_mismatched_result_is_placed_with_its_reason():
    path = [*branch(2), obs("o1", "a0", "wrong-call")]
    near = problems_near(read(path), Span(0, 4, 4))
    assert [(p.event_id, p.where) for p in near] == [("a0", "in"), ("a1", "in"), ("o1", "in")]
    assert near[2].mismatch is not None and near[2].mismatch.code == "tool_call_id"
