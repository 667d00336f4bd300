"""SDK features as a reader meets them: the model's view, hooks, sub-agents, images,
what turns cost, and the timeline strip. Each test starts from the list and clicks."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser


def open_from_list(page, conversation) -> None:
    page.goto("/")
    page.locator("#conversation-table").get_by_role("link", name=conversation.title, exact=True).click()
    expect(page.locator("h1")).to_contain_text(conversation.title[:30])


@pytest.mark.parametrize("scenario", ["condense-head-before", "condensation"])
def test_the_model_view_switch_shows_what_the_model_was_sent(page, demo, scenario):
    conversation = demo[scenario]
    open_from_list(page, conversation)
    forgotten = page.locator(".tag.forgotten").first
    expect(forgotten).to_be_visible()
    forgotten_event = forgotten.locator("xpath=ancestor::*[@data-event][1]").get_attribute("data-event")
    page.get_by_role("link", name="Model's view").click()
    expect(page).to_have_url(re.compile(r"[?&]view=model"))
    expect(page.locator(f'[data-event="{forgotten_event}"]')).to_have_count(0)
    expect(page.get_by_text("Summary of earlier events").first).to_be_visible()
    # The address reopens it.
    page.goto(page.url)
    expect(page.get_by_role("link", name="Model's view")).to_have_attribute("aria-current", "page")
    expect(page.locator(f'[data-event="{forgotten_event}"]')).to_have_count(0)
    page.get_by_role("link", name="Whole branch").click()
    expect(page.locator(f'[data-event="{forgotten_event}"]')).to_have_count(1)


def test_hooks_show_inline_and_the_conversation_is_one_branch(page, demo):
    conversation = demo["hooks"]
    open_from_list(page, conversation)
    expect(page.locator(".conv-head")).to_contain_text("1 branch")
    expect(page.locator(".branch-list tbody tr")).to_have_count(1)
    blocked = page.locator(".turn.side").filter(has_text="PreToolUse hook on terminal").filter(has_text="blocked")
    expect(blocked).to_be_visible()
    expect(blocked).to_contain_text("rm is not allowed by project policy")


def test_a_sub_agent_is_reached_from_its_task_call_and_leads_back(page, demo):
    parent = demo["subagent"]
    open_from_list(page, parent)
    page.get_by_role("link", name=re.compile("sub-agent: Count the lines")).first.click()
    expect(page.locator("h1")).to_have_text("Count the lines of README.md.")
    page.locator(".breadcrumb-parent").get_by_role("link").click()
    expect(page.locator("h1")).to_have_text(parent.title)
    expect(page).to_have_url(re.compile(r"#event-"))


def test_images_show_on_the_multimodal_conversation(page, demo):
    open_from_list(page, demo["multimodal"])
    images = page.locator(".images img")
    expect(images.first).to_be_visible()
    assert images.first.evaluate("img => img.complete && img.naturalWidth > 0")


def test_a_turn_says_what_it_cost_and_a_timeline_mark_opens_its_turn(page, demo):
    open_from_list(page, demo["tokens-and-logs"])
    expect(page.locator(".turn-figures").first).to_contain_text(" in")
    mark = page.locator(".timeline-strip a").nth(2)
    target = mark.get_attribute("href").split("#event-")[1]
    mark.click()
    expect(page).to_have_url(re.compile(f"at={target}"))
    expect(page.locator(f"#event-{target}")).to_be_in_viewport()
