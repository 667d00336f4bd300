"""A branch page's turns are kept as HTML (eventviewer.cardhtml): a page built from what
was kept shows the links of its own scope (owner or share link) and branch, the comments
written since, and event text escaped."""

from __future__ import annotations

import re

import pytest
from django.core.cache import caches

from eventviewer.imports.importer import import_paths
from eventviewer.models import Comment, Conversation, ShareLink

from .conftest import action, message, observation

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert(1)</script><img src=x onerror=alert(2)> "quoted" <!--event-href--> <!--threads:0-->'


@pytest.fixture(autouse=True)
def nothing_kept():
    caches["cards"].clear()
    yield
    caches["cards"].clear()


@pytest.fixture
def conversation(folder) -> Conversation:
    long_output = "\n".join(f"line {n}" for n in range(100))  # cut on the page: "show all output"
    events = [
        message("m1", None, HOSTILE),
        action("a1", "m1", "call-1", thought=[{"type": "text", "text": HOSTILE}]),
        observation("o1", "a1", "a1", "call-1", text=long_output),
        action("a2", "o1", "call-2", response="r2"),
        observation("o2", "a2", "a2", "call-2", text=HOSTILE),
        message("m2", "o1", "another branch"),
    ]
    (result,) = import_paths([(folder(events), "cache test")])
    return result.conversation


def show_all_links(html: str) -> list[str]:
    return re.findall(r'<a href="([^"]*)" data-full-output>show all output</a>', html)


@pytest.mark.parametrize("leaf", ["o2", None])
def test_a_kept_card_links_within_the_owners_pages_and_the_share_link(open_site, client, conversation, leaf):
    share = ShareLink.objects.create(conversation=conversation)
    owner = conversation.get_absolute_url() + (f"?leaf={leaf}" if leaf else "")
    shared = share.get_absolute_url() + (f"?leaf={leaf}" if leaf else "")
    branch = leaf or conversation.head.event_id
    for _ in range(2):  # built, then pasted from what was kept
        owner_html = client.get(owner).content.decode()
        shared_html = client.get(shared).content.decode()
        assert show_all_links(owner_html) == [f"{conversation.get_absolute_url()}events/o1/?leaf={branch}"]
        assert show_all_links(shared_html) == [f"{share.get_absolute_url()}events/o1/?leaf={branch}"]
        assert f'href="{share.get_absolute_url()}' not in owner_html
        assert f'href="{conversation.get_absolute_url()}' not in shared_html
        assert f'href="{share.get_absolute_url()}?leaf={branch}&amp;at=a1#event-a1"' in shared_html  # the head's link
    assert len(caches["cards"]._cache) > 0  # type: ignore[attr-defined]


def test_a_comment_written_after_the_turn_was_kept_shows(open_site, client, conversation):
    page = conversation.get_absolute_url()
    assert "A comment written later" not in client.get(page).content.decode()
    Comment.objects.create(conversation=conversation, event_id="a1", author="Ann", body="A comment written later")
    html = client.get(page).content.decode()
    assert 'id="comments-a1"' in html
    comments = html.split('id="comments-a1"', 1)[1].split("</li>", 1)[0]
    assert "A comment written later" in comments
    assert "<!--threads:" not in html


def test_hostile_event_text_stays_escaped_in_kept_html(open_site, client, conversation):
    page = conversation.get_absolute_url() + "?leaf=o2"
    for _ in range(2):
        html = client.get(page).content.decode()
        assert "<script>alert(1)</script>" not in html
        assert "<img src=x" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        # The placeholders typed in an event stay text: never filled in with a link or threads.
        assert html.count("&lt;!--event-href--&gt;") >= 3  # the message, the thought, the output
        assert "<!--event-href-->" not in html and "<!--threads:" not in html
    kept = [value for value in caches["cards"]._cache.values()]  # type: ignore[attr-defined]
    assert kept and not any(b"<script>alert" in value for value in kept)
