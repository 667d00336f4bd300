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
    page.locator("#instance-table").get_by_role("link", name="ponylang__ponyc-4588").click()
    expect(page.locator("#instance")).to_contain_text("Agent reached maximum iteration")


@pytest.mark.parametrize("width", [1400, 360])
def test_from_a_pattern_to_a_first_failure_then_two_runs_side_by_side(
    new_context, transactional_db, live_server, settings, tmp_path, width
):
    import copy
    import json

    from tests.test_runs import MISSING, crafted_rows

    settings.EVENTVIEWER_REQUIRE_LOGIN = False
    a = crafted_rows()
    b = copy.deepcopy(a)
    for data in b:
        data["test_result"]["resolved"] = data["instance_id"].startswith(("mod-", "ok-"))
        renamed = {e["id"]: f"b-{e['id']}" for e in data["history"]}  # another run: its own event ids
        for event in data["history"]:
            for key in ("id", "parent_id", "action_id"):
                if event.get(key) in renamed:
                    event[key] = renamed[event[key]]
        for event in data["history"]:  # the module found this time
            observation = event.get("observation") or {}
            if observation.get("exit_code") == 1:
                observation["exit_code"] = observation["metadata"]["exit_code"] = 0
                observation["content"][0]["text"] = "5"
    for name, data in (("before", a), ("after", b)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in data))
        import_paths([(tmp_path / f"{name}.jsonl", f"{name}.jsonl")], run=name)
    page = new_context(viewport={"width": width, "height": 800}).new_page()
    page.goto("/runs/")
    page.get_by_role("link", name="before", exact=True).click()
    expect(page.locator("#run-totals")).to_contain_text("Resolve rate16.7%")
    page.locator("#run-patterns").get_by_role("link", name=MISSING).click()
    table = page.locator("#instance-table")
    expect(table.locator("tbody tr")).to_have_count(4)
    expect(page).to_have_url(re.compile(r"pattern=terminal"))
    assert page.evaluate(WIDE), "the run page scrolls sideways"
    table.locator("tbody tr", has_text="mod-b").get_by_role("link", name=re.compile("non-zero exit code")).click()
    expect(page.locator("body")).to_contain_text("No module named 'numpy'")
    assert page.evaluate(WIDE), "the event page scrolls sideways"

    page.goto("/runs/before/")
    page.get_by_label("Compare with").select_option(label="after")
    page.get_by_role("button", name="Compare").click()
    expect(page.locator("#run-significance")).to_contain_text("p = 0.125")
    changes = page.locator("#compare-table")
    changes.get_by_role("link", name="fixed 4").click()
    expect(changes.locator("tbody tr")).to_have_count(4)
    expect(page).to_have_url(re.compile(r"change=fixed"))
    assert page.evaluate(WIDE), "the comparison scrolls sideways"
    changes.locator("tbody tr", has_text="mod-a").get_by_role("link", name="trajectories").click()
    expect(page.get_by_role("heading", name="Compare two branches")).to_be_visible()
    expect(page.locator("body")).to_contain_text("ModuleNotFoundError")
    assert page.evaluate(WIDE), "the two trajectories scroll sideways"


@pytest.mark.parametrize("width", [1400, 360])
def test_several_runs_side_by_side_then_the_list_of_their_instances(new_context, runs, width):
    page = new_context(viewport={"width": width, "height": 800}).new_page()
    page.goto("/runs/")
    page.get_by_label("fixtures").check()
    page.get_by_label("pony v0").check()
    listed = [n.strip() for n in page.locator("form.runs-compare label").all_inner_texts()]
    assert sorted(listed) == ["fixtures", "pony v0"]
    page.get_by_role("button", name="Compare the checked runs").click()
    heat = page.locator("#heat-table")
    expect(heat.locator("thead th")).to_have_text(["Instance", *listed])  # as the runs page lists them
    expect(heat.locator("tbody tr")).to_have_count(4)
    expect(heat.locator("td.not-run").first).to_have_text("not run")
    assert page.evaluate(WIDE), "the runs' table scrolls sideways"
    page.get_by_role("link", name="Conversations", exact=True).click()
    run_header = page.locator("#conversation-table thead").get_by_role("link", name="Run")
    run_header.click()
    expect(page).to_have_url(re.compile(r"sort=run&dir=asc"))
    cells = page.locator("#conversation-table td.run-cell")
    expect(cells.first).to_have_text("fixtures")
    cells.first.get_by_role("link").click()
    expect(page.locator(".run-filter")).to_contain_text("Instances of run fixtures")
    expect(page.locator("#conversation-table tbody tr")).to_have_count(2)
    with page.expect_download() as download:
        page.get_by_role("link", name="summary", exact=True).click()
    lines = Path(download.value.path()).read_text().splitlines()
    assert len(lines) == 2 and all('"run":"fixtures"' in line for line in lines)
    assert page.evaluate(WIDE), "the list scrolls sideways"


@pytest.mark.parametrize("width", [1280, 360])
def test_a_reviewer_sorts_the_run_by_verdicts_and_downloads_its_reviews(new_context, runs, width):
    import io

    from django.core.management import call_command

    from eventviewer.models import Instance, Verdict

    first, last = Instance.objects.filter(run__slug="fixtures").order_by("instance_id")
    for reviewer in ("ann", "bob"):  # the most verdicts on the instance listed first by id
        Verdict.objects.create(conversation=first.conversation, reviewer=reviewer, outcome="fail")
    Verdict.objects.create(conversation=last.conversation, reviewer="ann", outcome="pass")
    page = new_context(viewport={"width": width, "height": 800}).new_page()
    page.goto("/runs/")
    page.get_by_role("link", name="fixtures", exact=True).click()
    table = page.locator("#instance-table")
    expect(table.locator("tbody tr").first).to_contain_text(first.instance_id)  # by instance id
    table.locator("thead").get_by_role("link", name="Verdicts").click()
    expect(page).to_have_url(re.compile(r"sort=verdicts&dir=desc"))
    expect(table.locator("tbody tr").first).to_contain_text(first.instance_id)
    expect(table.locator("tbody tr").first.locator(".badge.verdict-fail")).to_have_count(2)
    table.locator("thead").get_by_role("link", name=re.compile("Verdicts")).click()  # again: the other way
    expect(page).to_have_url(re.compile(r"sort=verdicts&dir=asc"))
    expect(table.locator("tbody tr").first).to_contain_text(last.instance_id)
    expect(page.locator("#run-agreement")).to_contain_text("ann · bob")
    expect(page.locator("#run-agreement")).to_contain_text("not enough overlap")
    assert page.evaluate(WIDE), "the run page scrolls sideways"

    with page.expect_download() as download:
        page.locator("#run-facts").get_by_role("link", name="CSV").click()
    assert download.value.suggested_filename == "fixtures.reviews.csv"
    written = io.StringIO()
    call_command("export_reviews", "--run", "fixtures", "--format", "csv", stdout=written)
    assert Path(download.value.path()).read_text() == written.getvalue()
    assert written.getvalue().count("\n") == 4  # the header and three verdicts
