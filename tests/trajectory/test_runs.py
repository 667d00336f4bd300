"""Evaluation rows: outcomes, run names and two runs compared."""

from __future__ import annotations

import pytest

from eventviewer.trajectory import runs


@pytest.mark.parametrize(
    ("test_result", "error", "length", "expected"),
    [
        ({"resolved": True}, None, 5, "resolved"),
        ({"report": {"resolved": False}}, None, 5, "failed"),
        ({"final_score": {"total": 2, "result": 2}}, None, 5, "resolved"),
        ({"final_score": {"total": 2, "result": 1}}, None, 5, "failed"),
        ({"final_score": {"total": 0, "result": 0}}, None, 5, "unscored"),
        ({"git_patch": "diff"}, None, 5, "unscored"),
        ({"score": 0.5}, None, 5, "resolved"),
        ({"success": False}, None, 5, "failed"),
        ({"resolved": True}, "RuntimeError: max iterations", 5, "error"),
        ({"resolved": True}, "  ", 5, "resolved"),
        ({"resolved": True}, None, 0, "empty"),
        (None, None, 3, "unscored"),
    ],
)
def test_the_outcome_of_a_row(test_result, error, length, expected):
    assert runs.outcome(test_result, error, length) == expected


def test_what_is_stored_holds_no_nul_character():
    assert runs.storable({"a\x00b": ["x\x00y", 1, None], "c": {"d": "e\x00"}}) == {
        "ab": ["xy", 1, None],
        "c": {"d": "e"},
    }


@pytest.mark.parametrize(
    ("stem", "folder", "expected"),
    [("output", "gpt-4o_maxiter_100", "gpt-4o_maxiter_100"), ("my-run", "x", "my-run"), ("output", "", "output")],
)
def test_a_run_is_named_after_its_file_or_its_folder(stem, folder, expected):
    assert runs.run_name(stem, folder) == expected


def test_the_model_comes_from_the_metadata_then_the_metrics():
    assert runs.model_of({"llm": {"model": "a"}}, {"model_name": "b"}) == "a"
    assert runs.model_of({"llm_config": {"model": "c"}}, None) == "c"
    assert runs.model_of({}, {"model_name": "b"}) == "b"
    assert runs.model_of(None, None) == ""


def test_compare_tells_flips_from_instances_only_one_run_has():
    a = {"x": "resolved", "y": "failed", "z": "resolved", "w": "error", "only-a": "resolved"}
    b = {"x": "resolved", "y": "resolved", "z": "failed", "w": "empty", "only-b": "failed"}
    result = runs.compare(a, b)
    assert result.gained == ["y"] and result.lost == ["z"]
    assert (result.both, result.neither) == (1, 1)
    assert result.only_a == ["only-a"] and result.only_b == ["only-b"]
