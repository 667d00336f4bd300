"""A search the server refuses says why, next to the box, and keeps the query in the URL:
on the list (typed, then Enter) and inside a conversation (its search page, still a 400).
A half-typed query, while it is being typed, is no error."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

SIZES = {
    "desktop": {"viewport": {"width": 1400, "height": 900}},
    "phone": {"viewport": {"width": 360, "height": 740}, "is_mobile": True, "has_touch": True},
}
UNCLOSED = re.compile(r"[?&]q=%22unclosed(\+|%20)phrase(&|$)")


@pytest.fixture(params=SIZES.values(), ids=SIZES.keys())
def size(request) -> dict:
    return request.param


def test_a_refused_list_search_says_why_next_to_the_box_and_keeps_the_query(new_context, demo, size):
    new_context.allow(r"status of 400")  # the browser logs the refusal's status
    page = new_context(**size).new_page()
    page.goto("/")
    rows = page.locator("#conversation-table tbody tr")
    shown = rows.count()
    assert shown > 5
    box = page.get_by_role("searchbox", name=re.compile("Search titles"))
    refusal = page.locator("#search-refused")

    box.press_sequentially('"unclosed phrase', delay=20)
    page.wait_for_timeout(800)  # the list asked as it was typed: half typed is no error
    expect(refusal).to_be_hidden()
    expect(rows).to_have_count(shown)

    box.press("Enter")
    expect(refusal).to_be_visible()
    expect(refusal).to_contain_text("a quotation mark is not closed")
    expect(page).to_have_url(UNCLOSED)
    expect(rows).to_have_count(0)  # not "everything matched"
    expect(page.locator("#conversation-table")).to_contain_text("No search was run")
    box_box, refusal_box = box.bounding_box(), refusal.bounding_box()
    assert 0 <= refusal_box["y"] - (box_box["y"] + box_box["height"]) <= 60  # next to the box

    page.reload()  # the URL says it again
    expect(refusal).to_contain_text("a quotation mark is not closed")
    expect(box).to_have_value('"unclosed phrase')

    box.press("End")
    box.press_sequentially('"')
    box.press("Enter")
    expect(refusal).to_be_hidden()
    expect(page.locator("#conversation-table")).not_to_contain_text("No search was run")


def test_a_refused_search_in_a_conversation_opens_its_search_page_with_the_reason(new_context, branching, size):
    new_context.allow(r"status of 400")
    page = new_context(**size).new_page()
    page.goto(branching.get_absolute_url())
    box = page.get_by_role("searchbox", name="Search this conversation")
    box.fill('"unclosed phrase')
    with page.expect_response(lambda r: "/search/" in r.url) as answer:
        box.press("Enter")
    assert answer.value.status == 400
    expect(page.locator("h1")).to_have_text("Search")
    expect(page.get_by_role("alert")).to_contain_text("a quotation mark is not closed")
    expect(page).to_have_url(UNCLOSED)
    box = page.get_by_role("searchbox", name="Search this conversation")
    expect(box).to_have_value('"unclosed phrase')
    expect(page.get_by_role("link", name=branching.title)).to_be_visible()  # back to the conversation, not the list

    box.fill('"count words"')
    box.press("Enter")
    expect(page.get_by_role("status")).to_contain_text("match")
    expect(page.get_by_role("alert")).to_have_count(0)
