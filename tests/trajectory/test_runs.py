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
    assert runs.changes(a, b) == {
        "only-a": "only-a",
        "only-b": "only-b",
        "w": "still-failing",
        "x": "still-resolved",
        "y": "fixed",
        "z": "broken",
    }


def test_the_paired_test_counts_only_the_flips():
    found = {f"f{i}": runs.FIXED for i in range(6)} | {"s": runs.STILL_RESOLVED, "o": runs.ONLY_B}
    assert runs.mcnemar_p(found) == 0.03125  # 6 fixed, 0 broken
    assert runs.mcnemar_p(found | {"b": runs.BROKEN}) == 0.125


def test_a_runs_totals_count_outcomes_and_rate_the_scored_ones():
    found = runs.totals(
        [
            runs.Figures("resolved", tokens=100, cost=0.5, duration=10.0, turns=3),
            runs.Figures("failed", tokens=300, cost=1.5, duration=30.0, turns=9, problems=2),
            runs.Figures("error", tokens=None, cost=None, duration=5.0, turns=1),
            runs.Figures("unscored", tokens=200, cost=1.0, duration=None, turns=5),
            runs.Figures("empty"),
        ]
    )
    assert found.instances == 5 and found.scored == 3 and found.not_scored == 2
    assert found.counts == {"resolved": 1, "failed": 1, "error": 1, "empty": 1, "unscored": 1}
    assert found.resolve_rate == pytest.approx(1 / 3)
    assert found.interval == pytest.approx((0.0615, 0.7923), abs=1e-4)
    assert (found.tokens.total, found.tokens.median, found.tokens.recorded) == (600, 200, 3)
    assert found.cost.total == pytest.approx(3.0) and found.duration.median == pytest.approx(10.0)
    assert found.turns.total == 18 and found.with_problems == 1


def test_a_run_with_nothing_scored_has_no_rate():
    found = runs.totals([runs.Figures("unscored")])
    assert found.resolve_rate is None and found.interval is None and found.tokens.median is None


def test_instances_are_ordered_by_how_much_the_runs_disagree():
    R, F, E = runs.RESOLVED, runs.FAILED, runs.ERROR
    rows = {
        "all-resolved": [R, R, R, R],
        "all-failed": [F, F, F, F],
        "one-fixed": [F, F, F, R],
        "even-split": [R, F, R, F],
        "failed-or-error": [F, E, F, E],
        "split-but-missing": [R, None, None, F],
        "a-even-split": [F, R, F, R],
    }
    assert runs.by_disagreement(rows) == [
        "a-even-split",  # 2 resolved x 2 not: 4 split pairs; ties by instance id
        "even-split",
        "one-fixed",  # 1 x 3
        "split-but-missing",  # 1 x 1: a run that did not run it disagrees with none
        "failed-or-error",  # none resolved, but two outcomes
        "all-failed",
        "all-resolved",
    ]
    assert runs.disagreement([None, None]) == (0, 0)
