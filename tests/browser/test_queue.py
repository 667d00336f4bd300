"""A reviewer works through a filtered list in a review queue: Review these, each
conversation at its first failure, a verdict, ] to the next; reopened, the queue passes
over the ones reviewed."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from eventviewer.imports.importer import import_paths
from eventviewer.models import Comment, Verdict

from ..conftest import message
from ..test_queue import failing
from .conftest import log_in

pytestmark = pytest.mark.browser


@pytest.fixture
def three(transactional_db, live_server, folder, settings):
    """Three failed conversations (newest first: first, second, third) and one that went well."""
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    cache.clear()  # diagrams are cached by conversation pk, which a flushed database reuses
    found = [failing(folder, name, minutes) for name, minutes in (("first", 1), ("second", 2), ("third", 3))]
    import_paths([(folder([message("m1", None, "hello")], {"leaf_event_id": "m1"}), "fine")])
    return found


def open_queue_from_the_list(page) -> None:
    page.goto("/")
    page.locator(".list-filters > summary").click()
    page.get_by_label("failures").check()
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("#conversation-table tbody tr")).to_have_count(3)
    page.get_by_role("link", name="Review these").click()


def give_verdict(page, outcome: str) -> None:
    page.locator("#comments-panel > summary").click()
    form = page.locator(".verdict-form")
    form.get_by_label(outcome).check()
    form.get_by_role("button", name="Give verdict").click()
    expect(page.locator(f"#verdicts .verdicts .verdict-{outcome}")).to_have_count(1)  # given, the page redrawn


def at_first_failure(page, title: str, where: str) -> None:
    expect(page.locator("h1")).to_have_text(title)
    expect(page.locator("[data-queue-position]")).to_have_text(where)
    expect(page.locator("#event-o2")).to_have_class(re.compile(r"\bfocused\b"))  # its first failure
    expect(page.locator("#event-o2")).to_be_in_viewport()


@pytest.mark.parametrize("width", [1400, 360])
def test_a_reviewer_works_through_a_queue_of_failed_conversations(page, make_user, three, width):
    page.set_viewport_size({"width": width, "height": 800})
    me = make_user("reviewer")
    log_in(page, "reviewer")
    open_queue_from_the_list(page)
    at_first_failure(page, "first", "1 of 3")
    queue = parse_qs(urlsplit(page.url).query)["queue"][0]  # the queue is the URL
    assert parse_qs(queue.removeprefix("?")) == {"failures": ["1"], "sort": ["imported"], "dir": ["desc"]}
    expect(page.locator("[data-queue]")).to_contain_text("3 without your verdict")
    give_verdict(page, "fail")
    expect(page.locator("[data-queue]")).to_contain_text("2 without your verdict")
    page.keyboard.press("]")
    at_first_failure(page, "second", "2 of 3")
    page.keyboard.press("[")
    expect(page.locator("[data-queue-position]")).to_have_text("2 of 3")  # the reviewed first is passed over
    expect(page.locator("[data-queue]")).to_contain_text("no previous")

    # Reopened from the list, the queue passes over the one reviewed.
    open_queue_from_the_list(page)
    at_first_failure(page, "second", "2 of 3")
    give_verdict(page, "pass")
    page.keyboard.press("]")
    at_first_failure(page, "third", "3 of 3")
    expect(page.locator("[data-queue]")).to_contain_text("no next")
    give_verdict(page, "unsure")
    page.go_back()
    expect(page.locator("[data-queue-position]")).to_have_text("2 of 3")
    assert sorted(Verdict.objects.filter(user=me).values_list("conversation__title", "outcome")) == [
        ("first", "fail"),
        ("second", "pass"),
        ("third", "unsure"),
    ]
    open_queue_from_the_list(page)
    expect(page.locator("[data-queue-done]")).to_have_text(
        "You have given a verdict on all 3 conversations of this list."
    )
    page.get_by_role("link", name="Walk them again, reviewed ones included").click()
    at_first_failure(page, "first", "1 of 3")
    page.keyboard.press("?")
    expect(page.locator("#keys")).to_contain_text("next / previous conversation of the review queue")


@pytest.mark.parametrize("width", [1400, 360])
def test_a_comment_by_someone_else_appears_on_the_open_page(page, make_user, three, width):
    page.set_viewport_size({"width": width, "height": 800})
    make_user("reviewer")
    log_in(page, "reviewer")
    conversation = three[0]
    page.goto(conversation.get_absolute_url())
    expect(page.locator("#comments-o2 .thread")).to_have_count(0)
    page.locator("#event-o1 [data-comment-form] > summary").click()
    page.locator("#event-o1 [data-comment-form] textarea").fill("half written")
    Comment.objects.create(
        conversation=conversation, event_id="o2", leaf_event_id="m2", body="exit **1** here", author="Ana"
    )
    Comment.objects.create(conversation=conversation, event_id="m2", leaf_event_id="m2", body="the end", author="Ana")
    Comment.objects.create(conversation=conversation, event_id="o1", leaf_event_id="m2", body="and here", author="Ana")
    thread = page.locator("#comments-o2 .thread")
    expect(thread).to_contain_text("exit 1 here", timeout=15_000)  # the next poll, within a few seconds
    expect(thread.locator(".comment-body strong")).to_have_text("1")
    expect(page.locator("[data-comment-count]")).to_have_text("3 open of 3")
    expect(page.locator("#comments-m2 .thread")).to_contain_text("the end")
    expect(page.locator("#diagram g.commented")).to_have_count(1)  # m2, the leaf, is drawn; o1 and o2 are folded
    expect(page.locator("#diagram g.commented a title")).to_contain_text("1 comment")
    # The comment being written on o1 is left as it is; its card has the new thread at the next reload.
    expect(page.locator("#event-o1 [data-comment-form] textarea")).to_have_value("half written")
    expect(page.locator("#comments-o1 .thread")).to_have_count(0)
    page.reload()
    expect(page.locator("#comments-o1 .thread")).to_contain_text("and here")
