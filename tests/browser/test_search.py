"""Search like a user: the box on the conversation page (/ focuses it), a result, and
the event it opens with the words marked; n/p through failures, N/P through problems."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from eventviewer.imports.importer import import_paths

from ..conftest import action, message, observation

pytestmark = pytest.mark.browser

FOCUSED = re.compile(r"\bfocused\b")
PHONE = {"viewport": {"width": 360, "height": 740}, "is_mobile": True, "has_touch": True}


@pytest.fixture
def long_run(demo, settings, tmp_path):
    """60 commands, 20 turns a page: step 3 says "zebrafish" (far from the loaded end),
    step 56 exits 1, and the last action waits for its result."""
    settings.EVENTVIEWER_PAGE_SIZE = 20
    events = [message("m0", None, "Run sixty commands, please.")]
    parent = "m0"
    for i in range(1, 60):
        events.append(action(f"a{i}", parent, f"call-{i}", response=f"r{i}"))
        text = "zebrafish <b>not bold</b> found" if i == 3 else f"step {i} done"
        result = observation(f"o{i}", f"a{i}", f"a{i}", f"call-{i}", text=text)
        if i == 56:
            result["observation"]["exit_code"] = 1
        events.append(result)
        parent = f"o{i}"
    events.append(action("a60", parent, "call-60", response="r60"))  # pending
    path = tmp_path / "long-run.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    (result,) = import_paths([(path, path.name)])
    return result.conversation


@pytest.mark.parametrize("device", [{}, PHONE], ids=["desktop", "phone"])
def test_a_search_from_the_box_opens_the_event_with_the_words_marked(new_context, long_run, device):
    page = new_context(**device).new_page()
    page.goto(long_run.get_absolute_url())
    expect(page.locator("#event-o3")).to_have_count(0)  # not in the loaded turns
    page.keyboard.press("/")
    box = page.get_by_role("searchbox", name="Search this conversation")
    expect(box).to_be_focused()
    box.press_sequentially("zebra*")
    box.press("Enter")

    expect(page.get_by_role("status")).to_contain_text("1 event matches")
    result = page.locator("[data-search-result]")
    expect(result).to_have_count(1)
    expect(page.locator(".snippet mark")).to_have_text("zebrafish")
    expect(page.locator(".snippet")).to_contain_text("<b>not bold</b>")  # text, not markup
    result.click()

    card = page.locator("#event-o3")
    expect(card).to_have_class(FOCUSED)
    expect(card).to_be_in_viewport()
    expect(card.locator("mark.hit")).to_have_text("zebrafish")
    assert re.search(r"[?&]at=o3(&|#|$)", page.url)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"] + 1


def test_n_walks_failures_and_capital_n_only_pending_and_mismatched(page, long_run):
    page.goto(long_run.get_absolute_url())
    page.locator("#event-o53").scroll_into_view_if_needed()
    page.keyboard.press("j")
    page.keyboard.press("n")
    expect(page.locator("#event-o56")).to_have_class(FOCUSED)  # the exit 1
    expect(page.locator("#event-o56")).to_contain_text("non-zero exit code")
    page.keyboard.press("N")
    expect(page.locator("#event-a60")).to_have_class(FOCUSED)  # the pending action
    page.keyboard.press("P")  # no pending or mismatched before it: the focus stays
    expect(page.locator("#event-a60")).to_have_class(FOCUSED)
    page.keyboard.press("p")
    expect(page.locator("#event-o56")).to_have_class(FOCUSED)


@pytest.fixture
def emoji_run(demo, tmp_path):
    """A run whose result says it shipped with an emoji, in the middle of a word."""
    events = [message("m0", None, "Ship it, please."), action("a1", "m0", "call-1")]
    events.append(observation("o1", "a1", "a1", "call-1", text="deployed🚀 to prod ✅"))
    path = tmp_path / "emoji-run.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    (result,) = import_paths([(path, path.name)])
    return result.conversation


@pytest.mark.parametrize("device", [{}, PHONE], ids=["desktop", "phone"])
def test_an_emoji_is_searched_like_a_word_and_marked_where_it_stands(new_context, emoji_run, device):
    page = new_context(**device).new_page()
    page.goto(emoji_run.get_absolute_url())
    page.keyboard.press("/")
    box = page.get_by_role("searchbox", name="Search this conversation")
    box.press_sequentially("🚀")
    box.press("Enter")
    expect(page.get_by_role("status")).to_contain_text("1 event matches")
    expect(page.locator(".snippet mark")).to_have_text("🚀")
    page.locator("[data-search-result]").click()
    card = page.locator("#event-o1")
    expect(card).to_have_class(FOCUSED)
    expect(card.locator("mark.hit")).to_have_text("🚀")
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"] + 1
