"""The review loop in the browser: an owner makes a commenting link, a reviewer without an
account comments on a pending action, labels it, gives a verdict; the owner finds it."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from eventviewer.models import Comment, Verdict

from ..reviewing import make_default_labels
from .conftest import log_in

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1400, 360])
def test_a_reviewer_answers_back_and_the_owner_finds_it(page, new_context, demo, make_user, settings, width):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    make_default_labels()
    conversation = demo["confirmation-pending"]
    page.set_viewport_size({"width": width, "height": 800})
    make_user("sharer")
    log_in(page, "sharer")
    page.goto(conversation.get_absolute_url())
    form = page.locator("#share form")
    form.get_by_label("Note").fill("check the pending call")
    form.get_by_label("the reviewer may comment").check()
    form.get_by_role("button", name="Share this conversation, opened at this branch").click()
    link = page.locator("#share .share-links li:target")
    expect(link).to_contain_text("may comment")
    shared = link.locator("a[href^='/s/']").get_attribute("href")

    reviewer = new_context(viewport={"width": width, "height": 800}).new_page()
    reviewer.goto(shared)
    pending = reviewer.locator("#turns .problem.pending").first
    pending.locator("[data-comment-form] > summary").click()
    comment_form = pending.locator("[data-comment-form] form")
    comment_form.get_by_label("Your name").fill("Ana")
    comment_form.get_by_label("Comment on this event").fill("This call is **never** answered.")
    comment_form.get_by_label("root cause").check()
    comment_form.get_by_role("button", name="Comment").click()
    thread = reviewer.locator("#turns .problem.pending").first.locator(".thread")
    expect(thread.locator(".comment-author")).to_have_text("Ana (via share link: check the pending call)")
    expect(thread.locator(".comment-body strong")).to_have_text("never")
    expect(thread.locator(".label-chip")).to_have_text("root cause")
    expect(reviewer.locator("[data-comment-count]")).to_have_text("1 open of 1")

    reviewer.locator("#comments-panel > summary").click()
    verdict = reviewer.locator(".verdict-form")
    expect(verdict.get_by_label("Your name")).to_have_value("Ana")  # typed once, kept in the browser
    verdict.get_by_label("fail").check()
    verdict.get_by_label("Verdict note").fill("stuck waiting")
    with reviewer.expect_response(lambda r: r.request.method == "POST" and "verdict" in r.url) as answer:
        verdict.get_by_role("button", name="Give verdict").click()
    assert answer.value.status < 400, answer.value.status  # the redirect back to the page
    given = reviewer.locator("#verdicts .verdicts")
    expect(given).to_contain_text("Ana (via share link: check the pending call): stuck waiting")
    reviewer.locator("#comments-panel > summary").click()
    expect(given).to_be_visible()
    assert Comment.objects.count() == 1 and Verdict.objects.get().outcome == "fail"

    page.goto(conversation.get_absolute_url())
    owner_thread = page.locator("#turns .problem.pending").first.locator(".thread")
    expect(owner_thread).to_contain_text("This call is never answered.")
    page.goto("/")
    page.locator(".list-filters > summary").click()
    page.get_by_label("Label").select_option("root cause")
    page.get_by_role("button", name="Apply").click()
    rows = page.locator("#conversation-table tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first.locator("a.one-line")).to_have_attribute("href", conversation.get_absolute_url())
    expect(rows.first.locator("td.verdicts")).to_have_text("fail")
    assert parse_qs(urlsplit(page.url).query)["label"] == ["root cause"]  # the filter is in the URL


def test_c_on_a_focused_card_starts_a_comment(page, demo, make_user):
    make_user("sharer")
    log_in(page, "sharer")
    page.goto(demo["confirmation-pending"].get_absolute_url())
    page.keyboard.press("j")
    page.keyboard.press("c")
    focused = page.locator("[data-event].focused")
    expect(focused.locator("[data-comment-form] textarea")).to_be_focused()
    page.keyboard.press("?")
    expect(page.locator("#keys")).to_contain_text("comment on the focused event")
