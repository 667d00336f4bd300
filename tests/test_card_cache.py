"""A branch page's turns are kept as HTML (eventviewer.cardhtml): a page built from what
was kept shows the links of its own scope (owner or share link) and branch, the comments
written since, and event text escaped."""

from __future__ import annotations

import json
import re

import pytest
from django.core.cache import caches

from eventviewer.fields import KeptJSONField
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


@pytest.fixture
def two_pending(folder) -> Conversation:
    """Two branches as long as each other, each with an action left without a result: a2 on one,
    a3 on the other (HEAD)."""
    events = [
        message("m1", None, "the task"),
        action("a1", "m1", "call-1"),
        observation("o1", "a1", "a1", "call-1"),
        message("m3", "o1", "one way"),
        action("a2", "m3", "call-2"),
        message("m2", "o1", "another way"),
        action("a3", "m2", "call-3"),
    ]
    (result,) = import_paths([(folder(events), "two pending")])
    return result.conversation


def problem_links(html: str) -> list[str]:
    problems = html.split('<details class="problems"', 1)[1].split("</details>", 1)[0]
    return re.findall(r'data-problem-link="([^"]*)"', problems)


def selected_branch(html: str) -> str:
    (row,) = re.findall(r'<tr class="selected">(.*?)</tr>', html, re.S)
    (leaf,) = set(re.findall(r'href="[^"]*\?leaf=(\w+)"', row))
    return leaf


def test_the_kept_problems_and_branch_list_are_the_branch_shown(open_site, client, two_pending):
    page = two_pending.get_absolute_url()
    for _ in range(2):  # built, then pasted from what was kept, each branch after the other
        for leaf, other in (("a2", "a3"), ("a3", "a2")):
            html = client.get(page, {"leaf": leaf}).content.decode()
            assert problem_links(html) == [leaf]
            assert selected_branch(html) == leaf
            assert f'data-problem-link="{other}"' not in html


def test_the_kept_branch_list_is_filtered_as_asked(open_site, client, two_pending):
    page = two_pending.get_absolute_url()
    for _ in range(2):
        everything = client.get(page, {"leaf": "a2"}).content.decode()
        filtered = client.get(page, {"leaf": "a2", "bq": "another way"}).content.decode()
        assert len(re.findall(r'data-label="events"', everything)) == 2
        assert len(re.findall(r'data-label="events"', filtered)) == 1
        assert 'value="another way"' in filtered and 'value="another way"' not in everything


def test_the_kept_branch_list_moves_its_head_tag_with_head(open_site, user_client, two_pending):
    page = two_pending.get_absolute_url()

    def head_row(html: str) -> str:
        rows = re.findall(r"<tr[^>]*>(.*?)</tr>", html.split('id="branch-list"', 1)[1], re.S)
        (row,) = [r for r in rows if '<span class="tag head">HEAD</span>' in r]
        (leaf,) = set(re.findall(r'href="[^"]*\?leaf=(\w+)"', row))
        return leaf

    assert head_row(user_client.get(page, {"leaf": "a2"}).content.decode()) == "a3"
    assert user_client.post(f"{page}head/", {"leaf": "a2"}).status_code == 302
    assert head_row(user_client.get(page, {"leaf": "a2"}).content.decode()) == "a2"


def test_the_path_api_answers_anew_when_head_changes(user_client, two_pending):
    api = f"/api/conversations/{two_pending.conversation_id}/path/"
    for _ in range(2):  # the kept answer is the one given again
        assert user_client.get(api).json()["leaf"] == "a3"
        assert user_client.get(api, {"leaf": "a2"}).json()["head"] == "a3"
    assert user_client.post(f"{two_pending.get_absolute_url()}head/", {"leaf": "a2"}).status_code == 302
    assert user_client.get(api).json()["leaf"] == "a2"
    body = user_client.get(api, {"leaf": "a2"}).json()
    assert body["head"] == "a2" and body["pending_action_ids"] == ["a2"]


def test_a_big_skeleton_read_again_is_the_new_one_after_an_import(open_site, client, folder):
    # Forty branches: a skeleton of several kilobytes, which a process keeps decoded.
    events = [message("m0", None, "the task")]
    events += [message(f"m{n}", "m0", f"try number {n} " + "x" * 60) for n in range(1, 41)]
    path = folder(events)
    (result,) = import_paths([(path, "forty")])
    conversation = result.conversation
    assert len(json.dumps(conversation.skeleton)) > KeptJSONField.MIN_KEPT
    page = conversation.get_absolute_url()
    assert 'Branches <span class="muted">(40)</span>' in client.get(page).content.decode()
    (path / "events" / "event-00041-m41.json").write_text(json.dumps(message("m41", "m0", "try number 41")))
    import_paths([(path, "forty-one")])
    html = client.get(page, {"leaf": "m1"}).content.decode()  # on another branch than the new one
    branches = html.split('id="branch-list"', 1)[1]
    assert 'Branches <span class="muted">(41)</span>' in branches and "try number 41" in branches
