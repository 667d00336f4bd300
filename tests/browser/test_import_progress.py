"""The Import page in a browser: an upload shows its percentage with its button disabled,
lands on a page that follows its background import to one line per conversation (and its
run), titled "Imported"; a failed one names the line and column and offers to try again;
deleting a conversation asks on a page, never a dialog."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from eventviewer.models import Conversation

from ..conftest import message
from .conftest import log_in

pytestmark = pytest.mark.browser

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
WIDE = "() => document.documentElement.scrollWidth <= innerWidth"


@pytest.fixture
def open_server(transactional_db, live_server, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = False


def test_an_upload_is_followed_to_its_result_then_nothing_new(page, open_server, tmp_path):
    upload = tmp_path / "run.jsonl"
    upload.write_text(json.dumps(message("m1", None, "Count the words")) + "\n")
    for expected in ("1 new event, 0 unchanged", "nothing new"):
        page.goto("/import/")
        page.get_by_label("Files").set_input_files(upload)
        page.get_by_role("button", name="Import").click()
        expect(page).to_have_url(re.compile(r"/import/[0-9a-f-]{36}/$"))
        expect(page.locator("#import-status")).to_contain_text(expected)
    page.get_by_role("link", name="Count the words").click()
    expect(page.get_by_role("heading", name="Count the words")).to_be_visible()


@pytest.mark.parametrize("width", [1400, 360])
def test_an_upload_shows_its_percentage_then_what_was_imported_and_its_run(new_context, open_server, tmp_path, width):
    big = tmp_path / "long.jsonl"
    big.write_text(json.dumps(message("m1", None, "A long message " + "word " * 250_000)) + "\n")  # 1.25 MB
    context = new_context(viewport={"width": width, "height": 740})
    page = context.new_page()
    page.goto("/")
    page.get_by_role("banner").get_by_role("link", name="Import", exact=True).click()
    expect(page.get_by_role("heading", name="Import conversations")).to_be_visible()
    assert page.evaluate(WIDE), "the import page scrolls sideways"
    network = context.new_cdp_session(page)
    network.send("Network.enable")
    network.send(  # a slow link: 400 KB/s up, so that the upload lasts about 3 s
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": 400_000},
    )
    page.get_by_label("Files").set_input_files(big)
    button = page.get_by_role("button", name="Import")
    button.click()
    expect(button).to_be_disabled()  # while uploading: a second click would send it twice
    percent = page.locator("#upload-percent")
    expect(page.get_by_role("progressbar", name="Upload")).to_be_visible()
    expect(percent).to_have_text(re.compile(r"^([1-9]\d?)%$"))  # under way, neither 0 nor 100
    assert page.evaluate(WIDE), "the upload bar makes the page scroll sideways"
    expect(page).to_have_url(re.compile(r"/import/[0-9a-f-]{36}/$"))
    expect(page).to_have_title("Imported long.jsonl · eventviewer")
    expect(page.get_by_role("heading", name="Imported long.jsonl")).to_be_visible()
    assert "worker" not in page.locator("#import-status").inner_text()
    network.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
    )

    page.get_by_role("banner").get_by_role("link", name="Import", exact=True).click()
    page.get_by_label("Files").set_input_files(FIXTURES / "evaluation" / "parallel-pending.jsonl")
    page.get_by_role("button", name="Import").click()
    expect(page).to_have_title("Imported parallel-pending.jsonl · eventviewer")
    expect(page.locator(".import-run")).to_have_text("Run parallel-pending: 2 instances")
    page.locator(".import-run").get_by_role("link", name="parallel-pending").click()
    expect(page.get_by_role("heading", name="parallel-pending")).to_be_visible()
    expect(page.locator("#instance-table tbody tr")).to_have_count(2)


@pytest.mark.parametrize("width", [1400, 360])
def test_a_failed_import_names_line_and_column_and_offers_to_try_again(new_context, open_server, tmp_path, width):
    bad = tmp_path / "events.jsonl"
    bad.write_text(json.dumps(message("m1", None, "hi")) + '\n{"id": "m2",}\n')
    page = new_context(viewport={"width": width, "height": 740}).new_page()
    page.goto("/import/")
    page.get_by_label("Files").set_input_files(bad)
    page.get_by_role("button", name="Import").click()
    expect(page).to_have_title("Import failed: events.jsonl · eventviewer")
    expect(page.locator("#import-status")).to_contain_text(
        "events.jsonl:2: malformed JSON at line 2, column 12 (trailing comma is not allowed)"
    )
    assert page.evaluate(WIDE), "the failed import scrolls sideways"
    page.get_by_role("link", name="Try again").click()
    expect(page.get_by_role("heading", name="Import conversations")).to_be_visible()
    expect(page.get_by_role("button", name="Import")).to_be_enabled()


def test_deleting_asks_on_a_page_then_the_conversation_is_gone(new_context, live_server, make_user, tmp_path):
    from eventviewer.imports.importer import import_paths

    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(message("m1", None, "Delete me")) + "\n")
    (result,) = import_paths([(path, "run.jsonl")])
    make_user("operator")
    page = new_context().new_page()
    log_in(page, "operator")
    page.goto(result.conversation.get_absolute_url())
    page.get_by_role("link", name="Delete…").click()
    expect(page.get_by_role("heading", name="Delete this conversation?")).to_be_visible()
    page.get_by_role("button", name="Delete the conversation").click()
    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.locator(".messages")).to_contain_text("Deleting Delete me")
    assert not Conversation.objects.exists()
