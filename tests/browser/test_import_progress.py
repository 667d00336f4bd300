"""The Import page in a browser: an upload lands on a page that follows its background
import to one line per conversation; deleting a conversation asks on a page, never a dialog."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from eventviewer.models import Conversation

from ..conftest import message
from .conftest import log_in

pytestmark = pytest.mark.browser


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
