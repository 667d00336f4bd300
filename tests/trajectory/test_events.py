"""What describe() keeps of an event to show it in lists: its summary."""

from __future__ import annotations

import pytest

from eventviewer.trajectory.events import SUMMARY_LENGTH, describe, one_line


def shown(text: str) -> str:
    """The summary of a message with ``text``, as the branch list shows it."""
    event = {"id": "m1", "kind": "MessageEvent", "llm_message": {"role": "user", "content": [{"text": text}]}}
    return one_line(describe(event).summary, SUMMARY_LENGTH)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Fix the bug", "Fix the bug"),
        ("  two\n\nlines\t here ", "two lines here"),
        ("a\x00b", "a b"),
        (" " * 700 + "late start", "late start"),
        ("bidi \u202eevil\u202c text", "bidi evil text"),
    ],
)
def test_a_summary_is_one_clean_line(text, expected):
    assert shown(text) == expected


@pytest.mark.parametrize("text", ["word " * 500, "word" + " " * 40 + "\n" * 40 + "word " * 500, "x" * 5000])
def test_a_long_text_shows_that_it_goes_on(text):
    summary = shown(text)
    assert summary.endswith("…") and len(summary) <= SUMMARY_LENGTH


def test_an_action_summary_after_a_long_run_of_whitespace_still_shows():
    event = {"id": "a1", "kind": "ActionEvent", "tool_name": "terminal", "summary": " " * 3000 + "ran the tests"}
    assert one_line(describe(event).summary, SUMMARY_LENGTH) == "ran the tests"
