"""The search index's text, the query language and snippets (trajectory.query)."""

from __future__ import annotations

import sqlite3
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eventviewer.trajectory.query import (
    EVENT_CHARS,
    QueryError,
    branch_leaves,
    event_text,
    marked,
    parse_query,
    snippet,
    words,
)


def test_event_text_reads_messages_thoughts_calls_outputs_and_errors():
    action = {
        "kind": "ActionEvent",
        "tool_name": "terminal",
        "thought": [{"type": "text", "text": "Run the tests"}],
        "action": {"kind": "TerminalAction", "command": "pytest -x tests/"},
    }
    observation = {
        "kind": "ObservationEvent",
        "observation": {"kind": "TerminalObservation", "content": [{"type": "text", "text": "1 failed"}]},
    }
    message = {"kind": "MessageEvent", "llm_message": {"role": "user", "content": [{"type": "text", "text": "Hi"}]}}
    error = {"kind": "AgentErrorEvent", "error": "Tool 'frobnicate' not found"}
    assert words(event_text(action)) == "terminal run the tests pytest x tests".split()
    assert "1 failed" in event_text(observation)
    assert event_text(message) == "Hi"
    assert "frobnicate" in words(event_text(error))


def test_event_text_is_bounded():
    huge = {"kind": "ObservationEvent", "observation": {"content": [{"text": "word " * 100_000}] * 10}}
    assert len(event_text(huge)) <= EVENT_CHARS


@pytest.mark.parametrize(
    ("text", "fts5", "tsquery"),
    [
        ("pytest", '"pytest"', "'pytest'"),
        ("Exit Code", '"exit" AND "code"', "'exit' & 'code'"),
        ('"no such file"', '"no such file"', "('no' <-> 'such' <-> 'file')"),
        ("pyt*", '"pyt"*', "'pyt':*"),
        ("src/app.py", '"src app py"', "('src' <-> 'app' <-> 'py')"),
        ('"exit cod"* ls', '"exit cod"* AND "ls"', "('exit' <-> 'cod':*) & 'ls'"),
    ],
)
def test_queries_are_written_for_both_databases(text, fts5, tsquery):
    query = parse_query(text)
    assert query.fts5() == fts5
    assert query.tsquery() == tsquery


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ('"unclosed', "not closed"),
        ("py*test", "at the end of a word"),
        ("*", "at least one letter"),
        ('""', "no words"),
        ("!!! ???", "no words"),
        ("x" * 201, "longer than"),
        (" ".join(["w"] * 17), "at most 16"),
    ],
)
def test_bad_queries_say_why(text, reason):
    with pytest.raises(QueryError, match=reason):
        parse_query(text)


def test_matches_are_marked_whole_words_and_prefixes():
    query = parse_query("fail pyt*")
    pieces = marked("failed: Pytest fail; python", query)
    assert [p for p, hit in pieces if hit] == ["Pytest", "fail", "python"]
    assert "".join(p for p, _ in pieces) == "failed: Pytest fail; python"


def test_a_snippet_is_cut_around_the_first_match():
    text = "lorem " * 100 + "the needle is here " + "ipsum " * 100
    pieces = snippet(text, parse_query("needle"))
    assert pieces[0] == ("…", False) and pieces[-1] == ("…", False)
    assert ("needle", True) in pieces
    assert len("".join(p for p, _ in pieces)) < 200


def test_a_snippet_keeps_hostile_text_as_text():
    pieces = snippet("<script>alert(1)</script> boom", parse_query("script"))
    assert "".join(p for p, _ in pieces) == "<script>alert(1)</script> boom"


def test_a_result_opens_head_s_branch_or_the_newest_leaf_below_it():
    #   1 - 2 - 3 (HEAD)
    #        \- 4 - 5
    #            \- 6 (newest)   7: a hook beside 4
    nodes = [(1, None, 1, False), (2, 1, 2, False), (3, 2, 3, False), (4, 2, 4, False), (5, 4, 5, False)]
    nodes += [(6, 4, 6, False), (7, 4, 7, True)]
    leaves = branch_leaves(nodes, head=3)
    assert leaves == {1: 3, 2: 3, 3: 3, 4: 6, 5: 5, 6: 6, 7: 6}


def test_without_positions_a_phrase_asks_for_its_words():
    assert parse_query('"exit code" pyt*').tsquery(phrases=False) == "('exit' & 'code') & 'pyt':*"


def test_tsvector_lists_each_word_once_with_its_positions_as_queries_split_words():
    from eventviewer.trajectory.query import tsvector

    assert tsvector("Error: a_b a-B, É 3.5") == "'error':1 'a':2,4 'b':3,5 'é':6 '3':7 '5':8"
    assert tsvector("") == tsvector("--- ***") == ""


def reference_words(text: str) -> list[str]:
    """Runs of letters and digits, case folded, and each symbol beyond ASCII on its own
    (an emoji, an arrow, ✅), one character at a time."""
    found, run = [], ""
    for c in text.lower():
        if c.isalnum():
            run += c
            continue
        if run:
            found.append(run)
            run = ""
        if ord(c) > 127 and unicodedata.category(c).startswith("S"):
            found.append(f"sym{ord(c):x}")
    return [*found, run] if run else found


@settings(max_examples=300)
@given(st.text(st.characters(max_codepoint=127)) | st.text() | st.text(st.sampled_from("a1 -🚀✅→€👍🏽\u200d\ufe0f")))
def test_words_are_the_runs_of_letters_and_digits_case_folded_and_each_symbol(text):
    """What the index and queries call a word, however ``words`` finds them (ASCII text
    takes a faster path)."""
    from eventviewer.trajectory.query import words

    assert words(text) == reference_words(text)


def fts5_tokens(body: str) -> list[str]:
    """The words SQLite's FTS5 finds in a body, in order, with eventviewer's tokenizer."""
    from eventviewer.trajectory.query import FTS5_TOKENIZER

    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize = '{FTS5_TOKENIZER}')")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    db.execute("INSERT INTO t (rowid, body) VALUES (1, ?)", (body,))
    return [term for term, _ in db.execute("SELECT term, offset FROM v ORDER BY offset")]


@settings(max_examples=200, deadline=None)
@given(st.text(st.sampled_from("aZé1 .-_🚀✅→€👍🏽\u200d\ufe0fⒶ") | st.characters(categories=["S"])))
def test_sqlite_finds_in_an_indexed_body_the_words_a_query_looks_for(text):
    """A query sends FTS5 a text's ``words`` (``Term.fts5``), which FTS5 splits again: it
    finds there what it holds of the text's indexed body, symbols included."""
    from eventviewer.trajectory.query import fts5_body, words

    assert fts5_tokens(fts5_body(text)) == fts5_tokens(" ".join(words(text)))


def test_an_emoji_or_a_symbol_is_a_word_to_look_for():
    from eventviewer.trajectory.query import words

    assert words("Deploy 🚀 done ✅, 5€ → next") == [
        "deploy",
        "sym1f680",
        "done",
        "sym2705",
        "5",
        "sym20ac",
        "sym2192",
        "next",
    ]
    query = parse_query("🚀")
    assert query.fts5() == '"sym1f680"' and query.tsquery() == "'sym1f680'"
    assert parse_query('"🚀 done"').terms[0].words == ("sym1f680", "done")
    assert snippet("Deploy 🚀 done", query) == [("Deploy ", False), ("🚀", True), (" done", False)]
    with pytest.raises(QueryError, match="no words"):
        parse_query("!!! ...")  # ASCII punctuation still separates words


def test_tsvector_keeps_what_postgresql_keeps():
    from eventviewer.trajectory.query import MAX_POSITIONS, tsvector

    # A word over 2047 bytes is dropped without taking a position; a word keeps 255 positions.
    assert tsvector("short " + "é" * 1024 + " long") == "'short':1 'long':2"
    assert tsvector("x " * 300) == "'x':" + ",".join(str(n) for n in range(1, MAX_POSITIONS + 1))
