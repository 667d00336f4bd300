"""Bounded diffs (issue 22.2): a diff's cost is linear in its texts plus a time budget
for matching lines; what it leaves out it says."""

from __future__ import annotations

import difflib
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from eventviewer.trajectory import diff
from eventviewer.trajectory.diff import Budget, added, unified


def patched(old: list[str], lines: list[str]) -> list[str]:
    """``old`` with a unified diff's hunks applied (a test's own patch)."""
    out: list[str] = []
    at = 0
    for line in lines:
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            start = int(line.split()[1][1:].split(",")[0])
            length = line.split()[1].split(",")
            start = start - 1 if len(length) == 1 or int(length[1]) else start
            out += old[at:start]
            at = start
        elif line.startswith("+"):
            out.append(line[1:])
        else:  # context or removed: a line of old
            assert old[at] == line[1:]
            at += 1
            if line.startswith(" "):
                out.append(line[1:])
    return out + old[at:]


lines_of = st.lists(st.sampled_from(["a", "b", "c", "def f():", "    return 1", ""]), max_size=30)


@settings(max_examples=300, deadline=None)
@given(lines_of, lines_of)
def test_a_diff_turns_the_old_text_into_the_new(old, new):
    before, after = "".join(line + "\n" for line in old), "".join(line + "\n" for line in new)
    found = unified(before, after, "a", "b", whole=True)
    assert not found.coarse
    assert patched(old, [line.text for line in found.lines]) == new
    assert found.added == sum(1 for line in found.lines if line.tone == "add")
    assert found.removed == sum(1 for line in found.lines if line.tone == "del")
    assert (found.lines == []) == (old == new)


def test_a_small_diff_reads_as_difflibs():
    old = "".join(f"line {n}\n" for n in range(40))
    new = old.replace("line 7\n", "line seven\n").replace("line 30\n", "")
    ours = [line.text for line in unified(old, new, "a/x", "b/x").lines]
    theirs = [
        line.rstrip("\n") for line in difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/x", "b/x")
    ]
    assert ours == theirs


def hostile(lines: int = 20_000, distinct: int = 300, edits: int = 20) -> tuple[str, str]:
    """A long file of few distinct lines, edited in scattered places: difflib's hard case
    (0.3-0.8 s a diff on today's machine, 22 s for a page of 30)."""
    rng = random.Random(22)
    old = [f"value = {rng.randrange(distinct)}" for _ in range(lines)]
    new = list(old)
    for n in range(edits):
        new[rng.randrange(lines)] = f"changed {n}"
    return "\n".join(old) + "\n", "\n".join(new) + "\n"


def test_a_diff_too_costly_to_match_is_coarse_and_cut_and_says_so():
    before, after = hostile()
    found = unified(before, after, "a/big.py", "b/big.py", budget=Budget(diff.PAGE_SECONDS))
    assert found.coarse and not found.whole
    assert len(found.lines) == diff.MAX_LINES
    assert found.added == found.removed > 15_000  # the middle replaced whole, counted, not shown
    assert found.cut == found.added + found.removed + 2 + 1 + 2 * 3 - len(found.lines)  # heads, hunk, context


def test_a_spent_budget_makes_every_further_diff_coarse():
    old = "".join(f"line {n}\n" for n in range(100))
    new = old.replace("line 10\n", "ten\n").replace("line 90\n", "ninety\n")
    spent = Budget(0)
    found = unified(old, new, "a", "b", budget=spent)
    assert found.coarse and found.removed == 81 and found.added == 81
    assert not unified(old, new, "a", "b", budget=Budget(1)).coarse


def test_the_common_start_and_end_are_set_aside_before_matching():
    """An edit in one place of a long file of repeated lines is exact and costs nothing."""
    before, _ = hostile()
    after = before.replace("value", "VALUE", 1)
    found = unified(before, after, "a", "b", budget=Budget(0))  # no time at all to match lines
    assert not found.coarse and found.whole
    assert (found.added, found.removed) == (1, 1)


def test_long_lines_are_shortened_on_the_page_and_whole_in_a_download():
    old, new = "x\n", "y" * 50_000 + "\n"
    shown = unified(old, new, "a", "b")
    assert shown.clipped == 1 and not shown.whole
    assert max(len(line.text) for line in shown.lines) == diff.LINE_CHARS + 1
    whole = unified(old, new, "a", "b", whole=True)
    assert whole.whole and "+" + "y" * 50_000 in [line.text for line in whole.lines]


def test_a_download_has_every_line():
    before, after = hostile(lines=2_000, distinct=2_000, edits=300)
    found = unified(before, after, "a", "b", whole=True)
    assert found.cut == 0 and len(found.lines) > diff.MAX_LINES and not found.coarse


def test_an_append_is_its_lines_without_a_hunk_header():
    found = added("one\ntwo\n", "log.txt")
    assert [(line.tone, line.text) for line in found.lines] == [
        ("head", "+++ log.txt"),
        ("add", "+one"),
        ("add", "+two"),
    ]
    assert found.added == 2
