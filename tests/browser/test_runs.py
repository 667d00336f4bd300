"""An evaluator's walk: open the runs, a run's page, filter to the failed instances and
read one, on a laptop and on a phone."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from eventviewer.imports.importer import import_paths

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

WIDE = "() => document.documentElement.scrollWidth <= innerWidth"


@pytest.fixture
def runs(transactional_db, live_server, settings) -> None:
    settings.EVENTVIEWER_REQUIRE_LOGIN = False
    import_paths([(FIXTURES / "evaluation" / "parallel-pending.jsonl", "parallel-pending.jsonl")], run="fixtures")
    import_paths([(FIXTURES / "v0" / "output.jsonl", "output.jsonl")], run="pony v0")


@pytest.mark.parametrize("width", [1280, 360])
def test_from_the_runs_to_a_failed_instance(new_context, runs, width):
    page = new_context(viewport={"width": width, "height": 800}).new_page()
    page.goto("/")
    page.get_by_role("link", name="Runs", exact=True).click()
    expect(page.get_by_role("heading", name="Runs")).to_be_visible()
    page.get_by_role("link", name="fixtures", exact=True).click()
    table = page.locator("#instance-table")
    expect(table.locator("tbody tr")).to_have_count(2)
    assert page.evaluate(WIDE), "the run page scrolls sideways"
    table.get_by_role("link", name="failed 1").click()
    expect(table.locator("tbody tr")).to_have_count(1)
    assert page.url.endswith("?outcome=failed")
    table.get_by_role("link", name="confirmation-pending").click()
    instance = page.locator("#instance")
    expect(instance).to_contain_text("failed instance confirmation-pending of run fixtures")
    expect(page.locator(".badge.pending").first).to_be_visible()
    assert page.evaluate(WIDE), "the conversation page scrolls sideways"


def test_an_error_instance_of_a_v0_run_shows_its_error(new_context, runs):
    page = new_context().new_page()
    page.goto("/runs/")
    page.get_by_role("link", name="pony v0").click()
    page.get_by_role("link", name="error 1").click()
    expect(page).to_have_url(re.compile(r"outcome=error"))  # the table swapped in: its links are the new ones
    page.get_by_role("link", name="ponylang__ponyc-4588").click()
    expect(page.locator("#instance")).to_contain_text("Agent reached maximum iteration")


def test_comparing_two_runs_links_each_flipped_instance(new_context, runs, tmp_path):
    import json

    rows = [json.loads(line) for line in (FIXTURES / "evaluation" / "parallel-pending.jsonl").read_text().splitlines()]
    rows[1]["test_result"] = {"resolved": True}
    (tmp_path / "rerun.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    import_paths([(tmp_path / "rerun.jsonl", "rerun.jsonl")], run="rerun")
    page = new_context(viewport={"width": 360, "height": 800}).new_page()
    page.goto("/runs/")
    page.get_by_role("link", name="fixtures", exact=True).click()
    page.get_by_label("Compare with").select_option(label="rerun")
    page.get_by_role("button", name="Compare").click()
    comparison = page.locator("#run-comparison")
    expect(comparison).to_contain_text("Resolved in B, not in A (1)")
    assert page.evaluate(WIDE), "the comparison scrolls sideways"
    comparison.get_by_role("link", name="B: resolved").click()
    expect(page.locator("#instance")).to_contain_text("resolved instance confirmation-pending of run rerun")
