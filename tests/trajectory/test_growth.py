from eventviewer.trajectory.growth import Growth, growth
from eventviewer.trajectory.reading import read

from .events import act, msg, obs

BEFORE = [msg("u"), act("a1", "c1"), act("a2", "c2"), obs("o1", "a1", "c1")]


def test_new_turns_after_the_last_one_drawn_are_new_and_it_is_drawn_again():
    reading = read([*BEFORE, msg("u2"), act("a3", "c3", response="r2")])
    # Turns: u, [a1 a2], o1, u2, [a3]. The page drew up to o1 (turn 2); a2 is still pending.
    assert growth(reading, "o1", 2) == Growth(start=2, first_new=3, new_events=2)


def test_a_turn_whose_action_was_just_answered_is_drawn_again():
    reading = read([*BEFORE, obs("o2", "a2", "c2")])
    # a2 (in turn 1, drawn pending) is answered by the new o2.
    assert growth(reading, "o1", 2) == Growth(start=1, first_new=3, new_events=1)


def test_a_batch_that_grew_is_drawn_again_from_itself():
    reading = read([msg("u"), act("a1", "c1"), act("a2", "c2")])
    assert growth(reading, "a1", 1) == Growth(start=1, first_new=1, new_events=1)


def test_nothing_new_draws_only_the_last_turn_again():
    assert growth(read(BEFORE), "o1", 2) == Growth(start=2, first_new=3, new_events=0)


def test_a_branch_that_does_not_pass_through_the_shown_leaf_is_not_growth():
    assert growth(read([msg("u"), act("b1", "c9")]), "o1", 2) is None
