"""Comment threads and where they show across branches."""

from __future__ import annotations

from eventviewer.trajectory.reviews import Note, on_branch, open_first, reviewer_name, threads

# A tree: root -> a -> b (shared prefix) -> c1 (branch one) | c2 (branch two)
ONE = ["root", "a", "b", "c1"]
TWO = ["root", "a", "b", "c2"]


def test_a_comment_in_a_shared_prefix_shows_on_every_branch():
    found = threads([Note(1, "b", leaf="c1")])
    assert [p.thread.root.id for p in on_branch(found, ONE, "c1")["b"]] == [1]
    assert [p.thread.root.id for p in on_branch(found, TWO, "c2")["b"]] == [1]


def test_it_says_which_branch_it_was_written_on_when_not_the_one_shown():
    found = threads([Note(1, "b", leaf="c1")])
    assert on_branch(found, ONE, "c1")["b"][0].elsewhere is None
    assert on_branch(found, TWO, "c2")["b"][0].elsewhere == "c1"


def test_a_comment_on_one_branch_only_does_not_show_on_the_other():
    found = threads([Note(1, "c1", leaf="c1")])
    assert "c1" in on_branch(found, ONE, "c1")
    assert on_branch(found, TWO, "c2") == {}


def test_replies_and_replies_to_replies_join_their_thread_in_order():
    found = threads(
        [Note(1, "a", "c1"), Note(2, "b", "c1"), Note(3, "a", "c1", parent=1), Note(4, "a", "c2", parent=3)]
    )
    assert [(t.root.id, [r.id for r in t.replies]) for t in found] == [(1, [3, 4]), (2, [])]


def test_a_reply_without_its_thread_is_dropped():
    assert threads([Note(5, "a", "c1", parent=99)]) == []


def test_open_threads_come_first():
    found = threads([Note(1, "a", "c1", resolved=True), Note(2, "a", "c1"), Note(3, "b", "c1", resolved=True)])
    assert [t.root.id for t in open_first(found)] == [2, 1, 3]


def test_a_reviewer_is_named_with_the_links_note():
    assert reviewer_name("Ana", "check the retry") == "Ana (via share link: check the retry)"
    assert reviewer_name("Ana", "") == "Ana (via share link)"


def test_a_thread_in_the_markdown_export_keeps_a_reviewers_markup_fenced():
    from eventviewer.trajectory.export import comment_threads
    from eventviewer.trajectory.reviews import Written

    hostile = "```\n# not a heading\n<script>x</script>"
    text = comment_threads([(Written("Ana *bold*", "2026-12-01 20:00 UTC", hostile, ("root cause",)), [])])
    assert text.startswith("- **Comment by Ana \\*bold\\*, 2026-12-01 20:00 UTC · labels: root cause**\n")
    assert "````markdown\n  ```\n  # not a heading\n  <script>x</script>\n  ````" in text
