"""A run read as an experiment: its totals, its failure patterns, two runs compared."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import run_import, text_of

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PARALLEL_PENDING = FIXTURES / "evaluation" / "parallel-pending.jsonl"
SDK_OUTPUT = FIXTURES / "evaluation" / "output.jsonl"
V0_OUTPUT = FIXTURES / "v0" / "output.jsonl"

pytestmark = pytest.mark.django_db


def totals(client, slug: str) -> str:
    return text_of(client.get(f"/runs/{slug}/").content.decode(), "run-totals")


def test_the_run_page_opens_with_its_totals_and_resolve_rate(user_client):
    run_import(PARALLEL_PENDING, "--run", "fixtures")
    text = totals(user_client, "fixtures")
    assert "Instances 2 Resolved 1 Failed 1 Error 0 Not scored 0" in text
    assert "Resolve rate 50.0% 95% 9.5%–90.5%" in text  # Wilson, 1 of 2
    assert "Turns 5 median 2.5" in text
    assert "Pending or mismatched 1" in text  # confirmation-pending
    assert text.endswith("Imported now")


def test_a_v0_run_counts_its_error_as_scored_and_the_unscored_apart(user_client):
    run_import(V0_OUTPUT, "--run", "pony")
    text = totals(user_client, "pony")
    assert "Instances 2 Resolved 0 Failed 0 Error 1 Not scored 1" in text
    assert "Resolve rate 0.0% 95% 0.0%–79.3%" in text
    assert "Turns 72 median 36" in text


def test_a_run_with_nothing_scored_says_so(user_client):
    run_import(SDK_OUTPUT, "--run", "safety")
    text = totals(user_client, "safety")
    assert "Resolve rate none scored" in text and "Not scored 2" in text
