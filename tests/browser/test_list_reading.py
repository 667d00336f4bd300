"""Reading the conversation list at a glance, on a laptop and on a phone: each title has
the room to tell two instances apart, a row names its run and outcome, figures stay on one
line, and the started column sorts like the others."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from eventviewer.imports.importer import import_paths

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
VIEWPORTS = [{"width": 1400, "height": 900}, {"width": 360, "height": 740}]

# The height of the rendered text of each cell, in lines of its own line height.
LINES = """cells => cells.map(td => {
  const range = document.createRange(); range.selectNodeContents(td);
  return Math.round(range.getBoundingClientRect().height / parseFloat(getComputedStyle(td).lineHeight));
})"""


@pytest.fixture
def listed(demo) -> None:
    import_paths([(FIXTURES / "v0" / "output.jsonl", "output.jsonl")], run="pony v0")


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=["laptop", "phone"])
def test_two_instances_read_apart_with_their_run_and_outcome(new_context, listed, viewport):
    page = new_context(viewport=viewport).new_page()
    page.goto("/")
    rows = page.locator("#conversation-table tbody tr").filter(has_text="ponylang__ponyc-45")
    expect(rows).to_have_count(2)
    for instance_id, outcome in (("ponylang__ponyc-4588", "error"), ("ponylang__ponyc-4595", "unscored")):
        row = rows.filter(has=page.get_by_role("link", name=instance_id, exact=True))
        title = row.get_by_role("link", name=instance_id, exact=True)
        assert title.evaluate("a => a.scrollWidth <= a.clientWidth"), f"{instance_id} is cut"
        expect(row.locator("td.title-cell")).to_contain_text("run pony v0")
        expect(row.locator(".status")).to_have_text(outcome)
    if viewport["width"] == 1400:
        width = page.locator("#conversation-table td.title-cell").first.bounding_box()["width"]
        assert width >= 300, f"the title column is {width:.0f} px wide"
    figures = page.locator("#conversation-table td.num, #conversation-table td.started")
    lines = figures.evaluate_all(LINES)
    assert max(lines) == 1, "a duration or a date wraps"
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")


def test_the_started_column_sorts_both_ways_and_the_status_filter_offers_every_status(page, listed):
    page.goto("/")
    table = page.locator("#conversation-table")
    table.locator("thead").get_by_role("link", name=re.compile("^Started")).click()
    expect(page).to_have_url(re.compile(r"sort=started&dir=desc"))
    first = table.locator("tbody tr td.started time").evaluate_all("ts => ts.map(t => t.dateTime)")
    assert first == sorted(first, reverse=True) and len(first) >= 10
    table.locator("thead").get_by_role("link", name=re.compile("^Started")).click()
    expect(page).to_have_url(re.compile(r"sort=started&dir=asc"))
    expect(table.locator("tbody tr td.started time").first).to_have_attribute("datetime", min(first))

    shown = set(table.locator("tbody .status").all_inner_texts())
    page.get_by_text("Filters").click()
    offered = set(page.locator("select[name=status] option").all_inner_texts()) - {"any"}
    assert shown <= offered, shown - offered
    page.locator("select[name=status]").select_option(label="unscored")
    page.get_by_role("button", name="Apply").click()
    expect(page).to_have_url(re.compile(r"status=unscored"))
    expect(table.locator("tbody .status")).to_have_text(["unscored"])


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=["laptop", "phone"])
def test_a_search_hit_inside_an_event_shows_its_snippet_and_opens_that_event(new_context, demo, viewport):
    page = new_context(viewport=viewport).new_page()
    page.goto("/")
    page.get_by_role("searchbox").fill("wc")
    page.get_by_role("searchbox").press("Enter")
    expect(page).to_have_url(re.compile(r"q=wc"))
    hit = page.locator("#conversation-table .list-hit").first
    expect(hit.locator("mark").first).to_have_text("wc")
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    href = hit.get_by_role("link").get_attribute("href")
    event_id = re.search(r"#event-(.+)$", href).group(1)
    hit.get_by_role("link").click()
    expect(page).to_have_url(re.compile(rf"at={re.escape(event_id)}.*#event-{re.escape(event_id)}$"))
    expect(page.locator(f'[id="event-{event_id}"]')).to_be_visible()
