"""Failure patterns: one signature per kind of first failure, whatever its volatile parts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from eventviewer.trajectory import patterns
from eventviewer.trajectory.patterns import FirstFailure

exception_names = st.from_regex(r"[A-Z][a-z]{1,8}(Not[A-Z][a-z]{1,6})?(Error|Exception)", fullmatch=True)
segments = st.from_regex(r"[A-Za-z0-9_.-]{1,12}", fullmatch=True).filter(lambda s: s not in (".", ".."))
paths = st.builds(
    lambda parts, start: start + "/".join(parts),
    st.lists(segments, min_size=1, max_size=5),
    st.sampled_from(["/", "./", "~/", "/workspace/"]),
)
numbers = st.one_of(st.integers(-(10**9), 10**9).map(str), st.floats(0, 1e6, allow_nan=False).map(lambda f: f"{f:.3f}"))
names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.]{0,20}", fullmatch=True)


def traceback(exception: str, path: str, line: str, name: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "{path}", line {line}, in <module>\n'
        f"    import {name}\n"
        f"{exception}: cannot load '{name}' from {path} (line {line})"
    )


def sign(text: str, kind: str = "exit_code", tool: str = "terminal", exit_code: int | None = 1) -> str:
    return patterns.signature("failed", FirstFailure("e1", kind, tool, text, exit_code), finished=False)


@given(exception_names, paths, paths, numbers, numbers, names, names)
def test_a_changed_path_number_or_quoted_name_never_changes_the_pattern(exc, p1, p2, n1, n2, q1, q2):
    assert sign(traceback(exc, p1, n1, q1)) == sign(traceback(exc, p2, n2, q2))


@given(exception_names, exception_names, paths, numbers, names)
def test_different_exception_names_never_merge(e1, e2, path, number, name):
    if e1 != e2:
        assert sign(traceback(e1, path, number, name)) != sign(traceback(e2, path, number, name))


@given(
    st.datetimes(),
    st.datetimes(),
    st.uuids(),
    st.uuids(),
    st.from_regex(r"[0-9a-f]{7,40}", fullmatch=True).filter(
        lambda h: any(c.isdigit() for c in h) and any(c.isalpha() for c in h)
    ),
)
def test_timestamps_uuids_and_hex_ids_are_taken_out(t1, t2, u1, u2, commit):
    one = sign(f"error at {t1.isoformat()}: lock {u1} held by {commit}")
    other = sign(f"error at {t2.isoformat()}: lock {u2} held by deadbeef1")
    assert one == other == "terminal exit 1: error at <time>: lock <hex> held by <hex>"


@pytest.mark.parametrize(
    ("first", "expected"),
    [
        (
            FirstFailure(
                "e",
                "exit_code",
                "terminal",
                "Traceback:\n  File \"/a/b.py\", line 3\nModuleNotFoundError: No module named 'requests'",
                1,
            ),
            "terminal exit 1: ModuleNotFoundError: No module named <name>",
        ),
        (
            FirstFailure(
                "e",
                "tool_error",
                "str_replace_editor",
                "ERROR:\nNo replacement was performed, old_str `x = 1` did not appear verbatim in /workspace/a.py.",
            ),
            "str_replace_editor tool error: ERROR: No replacement was performed,"
            " old_str <name> did not appear verbatim in <path>",
        ),
        (
            FirstFailure(
                "e", "agent_error", "web_search", "Tool 'web_search' not found. Available: ['terminal', 'finish']"
            ),
            "web_search agent error: Tool <name> not found. Available: [<name>, <name>]",
        ),
        (FirstFailure("e", "exit_code", "execute_bash", "", 127), "execute_bash exit 127"),
        (
            FirstFailure("e", "conversation_error", "", "Budget exceeded after 31 steps"),
            "conversation error: Budget exceeded after <n> steps",
        ),
    ],
)
def test_the_signature_of_a_first_failure(first, expected):
    assert patterns.signature("failed", first, finished=False) == expected


def test_an_instance_without_a_failure_event_is_signed_by_how_it_stopped():
    assert patterns.signature("failed", None, finished=True) == "finished without passing tests"
    assert patterns.signature("failed", None, finished=False) == "ran out of turns"
    assert patterns.signature("empty", None, finished=False) == "empty history"
    assert (
        patterns.signature("error", None, False, "RuntimeError: Agent reached maximum iteration. Current iteration: 50")
        == "run error: RuntimeError: Agent reached maximum iteration. Current iteration: <n>"
    )


def test_resolved_and_unscored_instances_have_no_pattern():
    first = FirstFailure("e", "exit_code", "terminal", "boom", 1)
    assert patterns.signature("resolved", first, True) == patterns.signature("unscored", first, True) == ""


def test_patterns_group_the_biggest_first_with_two_examples_and_their_share():
    found = patterns.grouped([("c", "x"), ("a", "x"), ("b", "x"), ("d", "y"), ("e", ""), ("f", "a")], instances=10)
    assert [(p.signature, p.count, p.share, p.examples) for p in found] == [
        ("x", 3, 0.3, ["a", "b"]),
        ("a", 1, 0.1, ["f"]),
        ("y", 1, 0.1, ["d"]),
    ]
    assert found[0].instance_ids == ["a", "b", "c"]
