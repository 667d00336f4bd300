"""What a number of turns counts, on every page: the model's responses that called tools."""

from eventviewer.trajectory.projection import assistant_turns, project

from .events import act, err, msg, obs


def test_parallel_calls_of_one_response_are_one_turn_and_results_and_messages_none():
    path = [msg("u"), act("a1", "c1"), act("a2", "c2"), obs("o1", "a1", "c1"), obs("o2", "a2", "c2")]
    path += [act("a3", "c3", response="r2"), obs("o3", "a3", "c3"), msg("m", role="assistant")]
    assert assistant_turns(path) == 2
    assert len(project(path)) == 7  # the page's items are another thing


def test_a_response_split_by_an_error_is_still_one_turn():
    path = [act("a1", "c1"), act("a2", "c2", executable=False), err("e2", "c2"), act("a3", "c3")]
    assert assistant_turns(path) == 1 and len([t for t in project(path) if t.is_batch]) == 2


def test_an_action_without_a_response_id_is_no_turn():
    assert assistant_turns([act("a1", "c1", response="")]) == 0
