"""Every way of arriving at an event shows the whole head of its card below the sticky bars
(the top bar and the branch bar), at desktop and phone sizes: a card's own link, a search
result, the event page's "Show in the conversation", the way back from a sub-agent, back and
forward, a share link's focus event, and a copied link opened in a new browser."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from eventviewer.models import ShareLink

from .test_flows import long300  # noqa: F401 (a fixture)
from .test_search import long_run  # noqa: F401 (a fixture)

pytestmark = pytest.mark.browser

FOCUSED = re.compile(r"\bfocused\b")
SIZES = {
    "desktop": {"viewport": {"width": 1400, "height": 900}},
    "phone": {"viewport": {"width": 360, "height": 740}, "is_mobile": True, "has_touch": True},
}

# The card's top against the lowest bottom of the bars that are on screen, and its head's
# bottom against the window's.
PLACE = """card => {
  const bars = [...document.querySelectorAll('.topbar, .branch-bar')].map(b => b.getBoundingClientRect().bottom);
  const head = card.querySelector('.event-head') || card;
  return {top: card.getBoundingClientRect().top, bar: Math.max(0, ...bars),
          head: head.getBoundingClientRect().bottom, window: innerHeight};
}"""


def assert_head_below_the_bar(page, card) -> None:
    expect(card).to_have_class(FOCUSED)
    page.wait_for_timeout(300)  # the browser's own scroll to the fragment comes after the page's
    place = card.evaluate(PLACE)
    assert place["bar"] <= place["top"], f"the card starts under the bar: {place}"
    assert place["head"] <= place["window"], f"the card's head is below the window: {place}"


@pytest.fixture(params=SIZES.values(), ids=SIZES.keys())
def size(request) -> dict:
    return request.param


def test_a_cards_own_link_opens_it_below_the_bar(new_context, long300, size):  # noqa: F811
    page = new_context(**size).new_page()
    page.goto(long300.get_absolute_url())
    card = page.locator("#turns [data-event]").nth(12)
    card.locator("a.permalink").first.click()
    assert "#event-" in page.url
    assert_head_below_the_bar(page, page.locator(f"#{card.get_attribute('id')}"))


def test_a_search_result_opens_its_event_below_the_bar(new_context, long_run, size):  # noqa: F811
    page = new_context(**size).new_page()
    page.goto(long_run.get_absolute_url())
    box = page.get_by_role("searchbox", name="Search this conversation")
    box.fill("zebrafish")
    box.press("Enter")
    page.locator("[data-search-result]").click()
    assert_head_below_the_bar(page, page.locator("#event-o3"))


def test_show_in_the_conversation_then_back_and_forward_keep_the_event_below_the_bar(
    new_context,
    long_run,  # noqa: F811
    size,
):
    page = new_context(**size).new_page()
    page.goto(long_run.get_absolute_url())
    page.locator("#event-o50 .event-head a[title^='Event page']").click()
    page.get_by_role("link", name="Show in the conversation").click()
    card = page.locator("#event-o50")
    assert_head_below_the_bar(page, card)

    page.locator("#event-o53 a.permalink").click()
    assert_head_below_the_bar(page, page.locator("#event-o53"))
    page.go_back()
    assert_head_below_the_bar(page, card)
    page.go_forward()
    assert_head_below_the_bar(page, page.locator("#event-o53"))


def test_the_way_back_from_a_sub_agent_shows_its_task_call_below_the_bar(new_context, demo, size):
    page = new_context(**size).new_page()
    page.goto(demo["subagent"].get_absolute_url())
    page.get_by_role("link", name=re.compile("sub-agent: Count the lines")).first.click()
    expect(page.locator("h1")).to_have_text("Count the lines of README.md.")
    page.locator(".breadcrumb-parent").get_by_role("link").click()
    fragment = page.url.split("#event-", 1)[1]
    assert_head_below_the_bar(page, page.locator(f"[id='event-{fragment}']"))


def test_a_share_links_focus_event_and_a_copied_link_open_below_the_bar(new_context, long300, size):  # noqa: F811
    owner = new_context(**size).new_page()
    path = owner.context.request.get(f"/api/conversations/{long300.conversation_id}/path/").json()["path"]
    share = ShareLink.objects.create(conversation=long300, leaf_event_id=path[-1], focus_event_id=path[30])
    reviewer = new_context(**size).new_page()
    reviewer.goto(share.get_absolute_url())
    assert_head_below_the_bar(reviewer, reviewer.locator(f"#event-{path[30]}"))

    owner.goto(long300.get_absolute_url())
    link = owner.locator(f"#event-{path[-8]} a.permalink").get_attribute("href")
    elsewhere = new_context(**size).new_page()
    elsewhere.goto(link)
    assert_head_below_the_bar(elsewhere, elsewhere.locator(f"#event-{path[-8]}"))
