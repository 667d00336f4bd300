"""A conversation page left open while its conversation grows."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.cache import cache
from django.utils import timezone
from playwright.sync_api import expect

from eventviewer.imports.importer import import_paths
from eventviewer.models import Conversation

from ..conftest import action, message, observation, write_folder
from .conftest import assert_not_reloaded, event_ids, mark_page

pytestmark = pytest.mark.browser


def steps(start: int, count: int, parent: str) -> list[dict]:
    """``count`` tool calls with their results, each answering the one before."""
    events = []
    for n in range(start, start + count):
        events.append(action(f"a{n}", parent, f"c{n}", response=f"r{n}"))
        events.append(observation(f"o{n}", f"a{n}", f"a{n}", f"c{n}", text=f"step {n}\n" * 8))
        parent = f"o{n}"
    return events


def append(folder: Path, events: list[dict]) -> None:
    files = folder / "events"
    seq = len(list(files.iterdir()))
    for offset, event in enumerate(events):
        (files / f"event-{seq + offset:05d}-{event['id']}.json").write_text(json.dumps(event))
    import_paths([(folder, "agent")])


@pytest.fixture
def growing(transactional_db, live_server, settings, tmp_path) -> tuple[Conversation, Path]:
    settings.EVENTVIEWER_REQUIRE_LOGIN = False
    cache.clear()
    folder = write_folder(tmp_path, [message("u", None, "Do twenty things."), *steps(0, 20, "u")])
    (result,) = import_paths([(folder, "agent")])
    return result.conversation, folder


def test_new_events_appear_at_the_end_without_moving_a_reader_scrolled_up(page, growing):
    conversation, folder = growing
    page.goto(conversation.get_absolute_url())
    mark_page(page)
    page.locator("#event-a5").scroll_into_view_if_needed()
    page.evaluate("window.scrollBy(0, -100)")
    reading = page.evaluate("document.getElementById('event-a5').getBoundingClientRect().top")
    assert page.evaluate("window.scrollY") > 0

    Conversation.objects.update(live_until=timezone.now() + timedelta(seconds=60))  # as a sync following it
    append(folder, steps(20, 2, "o19"))

    expect(page.locator("#event-o21")).to_be_attached()
    assert event_ids(page)[-5:] == ["o19", "a20", "o20", "a21", "o21"]
    marker = page.locator("#live-marker")
    expect(marker).to_have_text("4 new events")
    assert page.evaluate("document.getElementById('live-marker').nextElementSibling.dataset.turn") == "41"
    expect(page.locator("#live .badge.live")).to_have_text("live")
    expect(page.locator(".conv-head .meta")).to_contain_text("45 events")  # the counts are redrawn
    expect(page.locator(".branch-bar")).to_contain_text("45 events · 22 turns · 22 tool calls")
    expect(page.locator(".branch-list tr.selected a").first).to_have_attribute("href", re.compile(r"leaf=o21$"))
    # The diagram's selected node is the new leaf (a node on the branch shown links to its event).
    expect(page.locator("#diagram svg g.node.selected a").first).to_have_attribute("data-anchor", "o21")
    # What the reader reads has not moved (the page above it grew: the browser kept it in place).
    assert page.evaluate("document.getElementById('event-a5').getBoundingClientRect().top") == reading
    assert_not_reloaded(page)

    # More events while the marker is still out of sight: it keeps its place and counts them.
    append(folder, steps(22, 1, "o21"))
    expect(page.locator("#event-o22")).to_be_attached()
    expect(marker).to_have_text("6 new events")
    assert page.evaluate("document.getElementById('live-marker').nextElementSibling.dataset.turn") == "41"
    assert page.evaluate("document.getElementById('event-a5').getBoundingClientRect().top") == reading


def test_a_pending_action_shown_is_redrawn_when_its_result_arrives(page, growing):
    conversation, folder = growing
    append(folder, [action("a20", "o19", "c20", response="r20")])
    page.goto(conversation.get_absolute_url())
    expect(page.locator("#event-a20.pending")).to_be_attached()
    mark_page(page)

    append(folder, [observation("o20", "a20", "a20", "c20")])

    expect(page.locator("#event-o20")).to_be_attached()
    expect(page.locator("#event-a20")).not_to_have_class("pending")
    assert event_ids(page).count("a20") == 1  # drawn again in place, not twice
    expect(page.locator("#live-marker")).to_have_text("1 new event")
    assert_not_reloaded(page)
