"""A review queue's rules: where a conversation stands, and its neighbours."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from eventviewer.trajectory.queue import Place, QueueRow, first, place

ROWS = [QueueRow("a"), QueueRow("b", reviewed=True), QueueRow("c"), QueueRow("d", reviewed=True), QueueRow("e")]


def test_the_place_counts_from_one_over_the_whole_list():
    assert place(ROWS, "c") == Place(3, 5, 3, next="e", previous="a")


def test_reviewed_ones_are_passed_over_unless_asked_for():
    assert place(ROWS, "a").next == "c"
    assert place(ROWS, "a", with_reviewed=True).next == "b"
    assert place(ROWS, "e").previous == "c"
    assert place(ROWS, "e", with_reviewed=True).previous == "d"


def test_a_reviewed_one_still_knows_its_place():
    assert place(ROWS, "b") == Place(2, 5, 3, next="c", previous="a")


def test_the_ends_have_no_neighbour_beyond_them():
    assert place(ROWS, "a").previous is None and place(ROWS, "e").next is None


def test_the_queue_opens_at_the_first_still_to_review():
    assert first(ROWS) == "a"
    assert first([QueueRow("x", True), QueueRow("y")]) == "y"
    assert first([QueueRow("x", True)]) is None and first([QueueRow("x", True)], with_reviewed=True) == "x"
    assert first([]) is None


def test_one_off_the_list_goes_on_with_the_queues_first():
    assert place(ROWS, "gone") == Place(None, 5, 3, next="a", previous=None)
    assert place([QueueRow("x", True)], "gone").next is None


rows = st.lists(st.booleans(), max_size=12).map(lambda flags: [QueueRow(str(i), r) for i, r in enumerate(flags)])


@given(rows, st.integers(min_value=0, max_value=11), st.booleans())
def test_next_and_previous_are_the_nearest_wanted_ones(found, index, with_reviewed):
    if not found:
        return
    current = found[index % len(found)]
    got = place(found, current.id, with_reviewed)
    i = found.index(current)
    wanted = [r.id for r in found if with_reviewed or not r.reviewed]
    after = [r.id for r in found[i + 1 :] if r.id in wanted]
    before = [r.id for r in found[:i] if r.id in wanted]
    assert got.position == i + 1 and got.total == len(found)
    assert got.next == (after[0] if after else None) and got.previous == (before[-1] if before else None)
    assert got.left == sum(not r.reviewed for r in found)
