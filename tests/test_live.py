"""The live endpoint a conversation page polls: "nothing new" cheaply, else what to merge."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from eventviewer.imports.importer import import_paths
from eventviewer.models import Conversation, ShareLink

from .conftest import action, ev, message, observation, write_folder

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
START = [message("u", None, "Count the words."), action("a1", "u", "c1"), observation("o1", "a1", "a1", "c1")]


def append(folder: Path, *events: dict) -> None:
    """Events written after the ones already in the folder, as the SDK appends them."""
    files = folder / "events"
    seq = len(list(files.iterdir()))
    for offset, event in enumerate(events):
        (files / f"event-{seq + offset:05d}-{event['id']}.json").write_text(json.dumps(event))
    import_paths([(folder, "run")])


@pytest.fixture
def running(folder, open_site) -> tuple[Conversation, Path]:
    path = folder(START)
    (result,) = import_paths([(path, "run")])
    return result.conversation, path


def live_url(page: str) -> str:
    return re.search(r'id="live"[^>]*hx-get="([^"]+)"', page).group(1).replace("&amp;", "&")


def poll(client, url: str, **params: str):
    """The request the page's #live makes, with what app.js adds to it."""
    return client.get(f"{url}&{urlencode(params)}" if params else url, **HX)


def test_the_page_polls_its_live_url(client, running):
    conversation, _ = running
    page = client.get(conversation.get_absolute_url()).content.decode()
    assert live_url(page) == f"/c/{conversation.conversation_id}/live/?v={conversation.live_version}"
    assert 'hx-trigger="every 3s"' in page


def test_nothing_new_is_a_204_from_one_query(client, running, django_assert_num_queries):
    conversation, _ = running
    url = live_url(client.get(conversation.get_absolute_url()).content.decode())
    with django_assert_num_queries(1):
        response = poll(client, url, shown="o1", turn="2")
    assert response.status_code == 204
    assert response.content == b""


def test_new_events_come_as_turns_to_merge_with_the_counts_and_the_diagram(client, running):
    conversation, folder = running
    url = live_url(client.get(conversation.get_absolute_url()).content.decode())
    append(folder, action("a2", "o1", "c2", response="r2"), action("a3", "a2", "c3", response="r2"))

    response = poll(client, url, shown="o1", turn="2")

    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html
    template = re.search(r"<template data-live-turns([^>]*)>(.*)</template>", html, re.S)
    assert 'data-start="2" data-first-new="3" data-new="2" data-leaf="a3"' in template.group(1)
    # The last turn drawn (o1) is drawn again; the new batch of two calls is new.
    assert re.findall(r'data-turn="(\d+)"', template.group(2)) == ["2", "3"]
    assert re.findall(r'id="event-([^"]+)"', template.group(2)) == ["o1", "a2", "a3"]
    assert template.group(2).count("problem pending") == 2  # a2 and a3 wait for their results
    assert '<div id="diagram" class="diagram" hx-swap-oob="innerHTML"><svg' in html
    assert f'hx-get="/c/{conversation.conversation_id}/live/?v={Conversation.objects.get().live_version}"' in html


def test_a_turn_drawn_pending_is_drawn_again_once_answered(client, running):
    conversation, folder = running
    append(folder, action("a2", "o1", "c2", response="r2"), action("a3", "a2", "c3", response="r2"))
    url = live_url(client.get(conversation.get_absolute_url()).content.decode())
    append(folder, observation("o2", "a3", "a2", "c2"))

    html = poll(client, url, shown="a3", turn="3").content.decode()

    template = re.search(r"<template data-live-turns([^>]*)>(.*)</template>", html, re.S)
    assert 'data-start="3" data-first-new="4" data-new="1"' in template.group(1)
    assert re.findall(r'id="event-([^"]+)"', template.group(2)) == ["a2", "a3", "o2"]
    assert re.findall(r'class="event call( problem pending)?" id="event-(a\d)"', template.group(2)) == [
        ("", "a2"),
        (" problem pending", "a3"),
    ]


def test_a_page_not_showing_the_end_gets_the_counts_only(client, running):
    conversation, folder = running
    url = live_url(client.get(conversation.get_absolute_url()).content.decode())
    append(folder, message("u2", "o1", "And the lines?"))
    response = poll(client, url, shown="o1")
    html = response.content.decode()
    assert response.status_code == 200
    assert "<template" not in html
    assert '<div id="diagram" class="diagram" hx-swap-oob="innerHTML"><svg' in html


def test_a_page_whose_head_moved_to_another_branch_keeps_its_own(client, running):
    conversation, folder = running
    url = live_url(client.get(conversation.get_absolute_url()).content.decode())
    append(folder, message("u2", "u", "Start over."))  # a second branch; HEAD moves there
    html = poll(client, url, shown="o1", turn="2").content.decode()
    assert "HEAD moved to another branch" in html
    assert f'<a href="/c/{conversation.conversation_id}/">go to HEAD</a>' in html
    assert "<template" not in html


def test_a_page_with_no_branch_yet_reloads_when_one_appears(client, tmp_path, open_site):
    # A conversation just started: its state written, no event of the tree yet.
    started = ev("s0", "ConversationStateUpdateEvent", source="environment", key="execution_status", value="idle")
    folder = write_folder(tmp_path, [started], base_state={})
    (result,) = import_paths([(folder, "run")])
    page = client.get(result.conversation.get_absolute_url()).content.decode()
    assert "This conversation has no active branch" in page
    url = live_url(page)
    append(folder, START[0])
    response = poll(client, url)
    assert response.status_code == 200
    assert response["HX-Refresh"] == "true"


def test_the_live_badge_shows_while_a_sync_follows(client, running):
    conversation, _ = running
    assert "badge live" not in client.get(conversation.get_absolute_url()).content.decode()
    Conversation.objects.update(live_until=timezone.now() + timedelta(seconds=30))
    assert '<span class="badge live"' in client.get(conversation.get_absolute_url()).content.decode()
    Conversation.objects.update(live_until=timezone.now() - timedelta(seconds=1))
    assert "badge live" not in client.get(conversation.get_absolute_url()).content.decode()


@pytest.mark.parametrize(
    "query, message",
    [
        ({"turn": "-1"}, "turn: Ensure this value is greater than or equal to 0."),
        ({"turn": "x"}, "turn: Enter a whole number."),
        ({"shown": "a\x00b"}, "shown: contains control characters"),
    ],
)
def test_a_bad_query_is_a_400_naming_it(client, running, query, message):
    conversation, _ = running
    response = client.get(f"/c/{conversation.conversation_id}/live/", query)
    assert response.status_code == 400
    assert message in response.content.decode()


def test_an_unknown_conversation_or_leaf_is_a_404(client, running):
    conversation, _ = running
    assert client.get(f"/c/{'0' * 32}/live/").status_code == 404
    assert client.get(f"/c/{conversation.conversation_id}/live/", {"leaf": "nope"}).status_code == 404


def test_a_share_link_follows_too_and_a_revoked_one_does_not(client, running, user):
    conversation, folder = running
    share = ShareLink.objects.create(conversation=conversation, leaf_event_id="o1", created_by=user)
    page = client.get(share.get_absolute_url()).content.decode()
    url = live_url(page)
    assert url == f"/s/{share.token}/live/?v={conversation.live_version}"
    assert poll(client, url).status_code == 204
    append(folder, message("u2", "o1", "And the lines?"))
    html = poll(client, url, shown="o1", turn="2").content.decode()
    assert "<template" not in html and "HEAD moved" not in html  # its own branch, which did not grow
    assert 'hx-swap-oob="innerHTML"><svg' in html
    share.revoked_at = timezone.now()
    share.save()
    assert poll(client, url).status_code == 410
