"""A branch too long to read whole (here long-300 with EVENTVIEWER_FULL_READ_MAX lowered to
100 events) reads like any long branch: the newest turns, load earlier in place, jump to
start and back, a window around a linked event; and it says what it leaves out."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .conftest import assert_not_reloaded, event_ids, last_event_id, mark_page

pytestmark = pytest.mark.browser


@pytest.fixture
def long300(demo, settings):
    settings.EVENTVIEWER_PAGE_SIZE = 20
    settings.EVENTVIEWER_FULL_READ_MAX = 100
    return demo["long-300"]


def whole_path(page, conversation) -> list[str]:
    return page.context.request.get(f"/api/conversations/{conversation.conversation_id}/path/?limit=10000").json()[
        "path"
    ]


def test_a_branch_too_long_to_read_whole_shows_its_newest_turns_and_says_so(page, long300):
    page.goto(long300.get_absolute_url())
    expect(page.locator("#turns section.turn")).to_have_count(20)
    assert last_event_id(page) == long300.head.event_id
    note = page.locator("[data-deep-note]")
    expect(note).to_be_visible()
    expect(note).to_contain_text(f"{long300.head_path_length:,} events deep")
    expect(note).to_contain_text("turn and tool-call counts")
    expect(page.get_by_role("link", name="Model's view")).to_have_count(0)
    expect(page.locator("[data-load-earlier]")).to_contain_text(re.compile(r"\(\d+ earlier events\)"))
    expect(page.locator("[data-load-later]")).to_have_count(0)


def test_load_earlier_on_a_long_branch_adds_turns_above_in_place(page, long300):
    path = whole_path(page, long300)
    page.goto(long300.get_absolute_url())
    url, before = page.url, event_ids(page)
    mark_page(page)

    page.locator("[data-load-earlier]").click()

    expect(page.locator("#turns section.turn")).to_have_count(40)
    after = event_ids(page)
    assert after[-len(before) :] == before and after == path[-len(after) :]
    expect(page).to_have_url(f"{url}?leaf={before[-1]}&before={before[0]}")
    assert_not_reloaded(page)


def test_jump_to_start_and_back_on_a_long_branch(page, long300):
    path = whole_path(page, long300)
    page.goto(long300.get_absolute_url())
    page.get_by_role("link", name="Jump to start").click()
    expect(page.locator("#turns section.turn")).to_have_count(20)
    assert event_ids(page) == path[:20]
    expect(page.locator(f"#event-{path[0]}")).to_have_class(re.compile(r"\bfocused\b"))
    expect(page.locator("[data-load-earlier]")).to_have_count(0)
    expect(page.locator("[data-load-later]")).to_contain_text(re.compile(r"\(\d+ later events\)"))
    page.locator("[data-load-later]").click()
    expect(page.locator("#turns section.turn")).to_have_count(40)
    assert event_ids(page) == path[:40]
    page.get_by_role("link", name="Jump to the end").first.click()
    expect(page.locator("[data-load-later]")).to_have_count(0)
    assert last_event_id(page) == path[-1]
