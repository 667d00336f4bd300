"""Comments written by others reach an open page without a reload (its #live poll), and
the branch diagram marks the events that have comments."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from eventviewer.imports.importer import import_paths
from eventviewer.models import Comment, Conversation

from .conftest import action, message, observation, text_of
from .reviewing import default_labels  # noqa: F401

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
EVENTS = [message("u", None, "Count the words."), action("a1", "u", "c1"), observation("o1", "a1", "a1", "c1")]


@pytest.fixture
def conversation(folder) -> Conversation:
    return import_paths([(folder(EVENTS, {"leaf_event_id": "o1"}), "t")])[0].conversation


def live_url(page: str) -> str:
    return re.search(r'id="live"[^>]*hx-get="([^"]+)"', page).group(1).replace("&amp;", "&")


def poll(client, page: str, **params: str):
    """The request the page's #live makes, with what app.js adds to it."""
    return client.get(f"{live_url(page)}&{urlencode({'shown': 'o1', **params})}", **HX)


def write(conversation: Conversation, event_id: str, body: str, author: str = "someone-else") -> Comment:
    return Comment.objects.create(
        conversation=conversation, event_id=event_id, leaf_event_id="o1", body=body, author=author
    )


def test_a_comment_by_someone_else_reaches_the_open_page_on_its_next_poll(user_client, conversation):
    page = user_client.get(conversation.get_absolute_url()).content.decode()
    assert poll(user_client, page).status_code == 204  # nothing new
    write(conversation, "a1", "look at *this* <b>call</b>")
    answer = poll(user_client, page)
    assert answer.status_code == 200
    html = answer.content.decode()
    threads = html[html.index("<template data-live-comments>") :]
    assert 'id="comments-a1"' in threads and "look at <em>this</em> &lt;b&gt;call&lt;/b&gt;" in threads
    # What the page then redraws its counts from (a fresh copy): the Comments panel's count.
    fresh = user_client.get(conversation.get_absolute_url(), {"leaf": "o1"}).content.decode()
    assert "1 open of 1" in text_of(fresh, "comments-panel")
    assert poll(user_client, fresh).status_code == 204  # and the page holding it hears nothing new


@pytest.mark.parametrize("change", ["resolve", "edit", "delete"])
def test_resolving_editing_or_deleting_a_comment_is_news_too(user_client, conversation, change):
    comment = write(conversation, "a1", "first")
    page = user_client.get(conversation.get_absolute_url()).content.decode()
    assert poll(user_client, page).status_code == 204
    if change == "resolve":
        Comment.objects.filter(pk=comment.pk).update(resolved=True)
    elif change == "edit":
        Comment.objects.filter(pk=comment.pk).update(body="second", updated_at=comment.updated_at.replace(year=2100))
    else:
        comment.delete()
    assert poll(user_client, page).status_code == 200


def test_the_live_answer_keeps_the_queue(user_client, conversation):
    page = user_client.get(conversation.get_absolute_url(), {"queue": "?", "blind": "1"}).content.decode()
    write(conversation, "a1", "first")
    html = poll(user_client, page, queue="?", blind="1").content.decode()
    threads = html[html.index("<template data-live-comments>") :]
    assert "comments/?queue=%3F&amp;blind=1" in threads  # the threads' forms post keeping the queue


def test_the_diagram_marks_an_event_with_comments(user_client, conversation):
    write(conversation, "o1", "one")
    write(conversation, "o1", "two <script>")
    svg = user_client.get(f"{conversation.get_absolute_url()}diagram.svg").content.decode()
    node = re.search(r'<g id="n\d+" class="node[^"]*commented[^"]*">.*?</g>\s*</g>', svg, re.S)
    assert node, svg
    assert "<title>2 comments\n" in node.group(0) and "✎ 2" in node.group(0)
    assert "<script>" not in svg
    page = user_client.get(conversation.get_absolute_url()).content.decode()
    assert re.search(r'<div class="diagram" id="diagram"[^>]*>.*class="node[^"]*commented', page, re.S)


def test_a_new_comment_redraws_the_diagram(user_client, conversation):
    before = user_client.get(f"{conversation.get_absolute_url()}diagram.svg").content.decode()
    assert "commented" not in before
    write(conversation, "o1", "one")
    after = user_client.get(f"{conversation.get_absolute_url()}diagram.svg").content.decode()
    assert "commented" in after and "<title>1 comment\n" in after
