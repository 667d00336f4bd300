"""Reviews on the conversation page: threads on their events' cards on every branch, the
Comments panel, verdicts, and the forms behind them."""

from __future__ import annotations

import pytest
from django.test import Client

from eventviewer.models import Comment, Conversation, ShareLink, Verdict

from .conftest import text_of
from .reviewing import default_labels  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.fixture
def branching(imported) -> Conversation:
    return imported("branching-retries")


def two_branches(conversation: Conversation) -> tuple[str, str, str]:
    """Two leaves and an event on both their branches (the root)."""
    first, second = [n["id"] for n in conversation.skeleton["nodes"] if n["leaf"]][:2]
    return first, second, conversation.events.get(seq=0).event_id


def page(client: Client, conversation: Conversation, leaf: str) -> str:
    response = client.get(conversation.get_absolute_url(), {"leaf": leaf})
    assert response.status_code == 200
    return response.content.decode()


def comment(client: Client, url: str, **fields) -> object:
    return client.post(url, fields)


def test_a_comment_in_the_shared_prefix_shows_on_both_branches_saying_where_it_was_written(user_client, branching):
    one, two, root = two_branches(branching)
    response = comment(
        user_client,
        f"{branching.get_absolute_url()}comments/",
        event_id=root,
        leaf=one,
        body="look *here*",
        labels=["root cause"],
    )
    assert response.status_code == 302 and response.url.endswith(f"#event-{root}")
    on_one = text_of(page(user_client, branching, one), f"comments-{root}")
    assert "look here" in on_one and "reviewer-lead" in on_one and "root cause" in on_one
    assert "written on branch" not in on_one
    on_two = text_of(page(user_client, branching, two), f"comments-{root}")
    assert "look here" in on_two and "written on branch" in on_two


def test_a_comment_on_one_branch_only_is_not_on_the_other(user_client, branching):
    one, two, _ = two_branches(branching)
    comment(user_client, f"{branching.get_absolute_url()}comments/", event_id=one, leaf=one, body="only here")
    assert "only here" in text_of(page(user_client, branching, one), "turns")
    on_two = page(user_client, branching, two)
    assert "only here" not in text_of(on_two, "turns")
    assert "only here" in text_of(on_two, "comments-panel")  # the panel lists every thread


def test_the_panel_counts_open_threads_and_lists_them_first(user_client, branching):
    one, _, root = two_branches(branching)
    url = f"{branching.get_absolute_url()}comments/"
    comment(user_client, url, event_id=root, leaf=one, body="first, resolved")
    comment(user_client, url, event_id=one, leaf=one, body="second, open")
    first = Comment.objects.get(body="first, resolved")
    assert user_client.post(f"{url}{first.pk}/", {"action": "resolve", "leaf": one}).status_code == 302
    panel = text_of(page(user_client, branching, one), "comments-panel")
    assert "1 open of 2" in panel
    assert panel.index("second, open") < panel.index("first, resolved")
    user_client.post(f"{url}{first.pk}/", {"action": "reopen", "leaf": one})
    assert "2 open of 2" in text_of(page(user_client, branching, one), "comments-panel")


def test_replies_edit_and_delete_own(user_client, branching, django_user_model):
    one, _, root = two_branches(branching)
    url = f"{branching.get_absolute_url()}comments/"
    comment(user_client, url, event_id=root, leaf=one, body="why?")
    first = Comment.objects.get()
    comment(user_client, url, parent=str(first.pk), leaf=one, body="because")
    thread = text_of(page(user_client, branching, one), f"comments-{root}")
    assert "because" in thread and "edited" not in thread  # new comments are not marked edited
    user_client.post(f"{url}{first.pk}/", {"action": "edit", "body": "why, really?", "leaf": one})
    thread = text_of(page(user_client, branching, one), f"comments-{root}")
    assert "why, really?" in thread and thread.count("edited") == 1
    other = Client()
    other.force_login(django_user_model.objects.create_user("someone-else", password="a-long-test-password"))
    assert other.post(f"{url}{first.pk}/", {"action": "delete", "leaf": one}).status_code == 403
    assert user_client.post(f"{url}{first.pk}/", {"action": "delete", "leaf": one}).status_code == 302
    assert not Comment.objects.exists()  # its replies with it


def test_an_htmx_comment_answers_with_the_workspace(user_client, branching):
    one, _, root = two_branches(branching)
    response = user_client.post(
        f"{branching.get_absolute_url()}comments/",
        {"event_id": root, "leaf": one, "body": "swapped in"},
        follow=True,
        headers={"HX-Request": "true"},
    )
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html and "swapped in" in html


def test_hostile_markdown_in_a_comment_is_inert_on_the_page(user_client, branching):
    one, _, root = two_branches(branching)
    body = "<script>alert(1)</script> <img src=x onerror=alert(1)> [x](javascript:alert(1))"
    comment(user_client, f"{branching.get_absolute_url()}comments/", event_id=root, leaf=one, body=body)
    html = page(user_client, branching, one)
    block = html[html.index(f'id="comments-{root}"') :]
    block = block[: block.index("</details>")]
    assert "<script>" not in block and "<img" not in block and 'href="javascript:' not in block
    assert "&lt;script&gt;" in block


def test_a_verdict_per_reviewer_with_their_agreement(user_client, branching, django_user_model):
    one, _, _ = two_branches(branching)
    url = f"{branching.get_absolute_url()}verdict/"
    assert user_client.post(url, {"verdict": "fail", "note": "gave up early", "leaf": one}).status_code == 302
    other = Client()
    other.force_login(django_user_model.objects.create_user("second", password="a-long-test-password"))
    other.post(url, {"verdict": "fail", "leaf": one})
    verdicts = text_of(page(user_client, branching, one), "verdicts")
    assert "reviewer-lead: gave up early" in verdicts and "second" in verdicts
    assert "all agree" in text_of(page(user_client, branching, one), "comments-panel")
    other.post(url, {"verdict": "pass", "leaf": one})
    assert Verdict.objects.count() == 2
    assert "reviewers disagree" in text_of(page(user_client, branching, one), "comments-panel")
    assert user_client.post(url, {"verdict": "maybe"}).status_code == 400


# Share links


def test_an_owner_creates_a_commenting_link_read_only_by_default(user_client, branching):
    url = f"{branching.get_absolute_url()}share/"
    assert "the reviewer may comment" in page(user_client, branching, "")
    user_client.post(url, {"leaf": "", "note": "read"})
    user_client.post(url, {"leaf": "", "note": "write", "can_comment": "on"})
    assert dict(ShareLink.objects.values_list("note", "can_comment")) == {"read": False, "write": True}


def test_a_reviewer_comments_and_gives_a_verdict_through_a_commenting_link(branching, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    one, _, root = two_branches(branching)
    share = ShareLink.objects.create(conversation=branching, can_comment=True, note="check the retry")
    reviewer = Client()
    html = reviewer.get(share.get_absolute_url(), {"leaf": one}).content.decode()
    assert "data-reviewer-name" in html and 'action="/s/' in html
    response = reviewer.post(
        f"{share.get_absolute_url()}comments/", {"event_id": root, "leaf": one, "body": "odd", "author": "Ana"}
    )
    assert response.status_code == 302 and response.url.startswith(share.get_absolute_url())
    assert (
        reviewer.post(
            f"{share.get_absolute_url()}comments/", {"event_id": root, "leaf": one, "body": "odd"}
        ).status_code
        == 400
    )
    reviewer.post(f"{share.get_absolute_url()}verdict/", {"verdict": "unsure", "author": "Ana", "leaf": one})
    shown = reviewer.get(share.get_absolute_url(), {"leaf": one}).content.decode()
    assert "Ana (via share link: check the retry)" in text_of(shown, f"comments-{root}")
    assert "Ana (via share link: check the retry)" in text_of(shown, "verdicts")


def test_a_read_only_link_shows_no_comments_and_cannot_post(user_client, branching):
    one, _, root = two_branches(branching)
    comment(user_client, f"{branching.get_absolute_url()}comments/", event_id=root, leaf=one, body="owners only")
    share = ShareLink.objects.create(conversation=branching)
    html = Client().get(share.get_absolute_url(), {"leaf": one}).content.decode()
    assert "owners only" not in html and "comments-panel" not in html
    response = Client().post(
        f"{share.get_absolute_url()}comments/", {"event_id": root, "leaf": one, "body": "x", "author": "A"}
    )
    assert response.status_code == 403 and Comment.objects.count() == 1


def test_a_link_cannot_change_another_conversations_comment(user_client, branching, imported):
    one, _, root = two_branches(branching)
    comment(user_client, f"{branching.get_absolute_url()}comments/", event_id=root, leaf=one, body="theirs")
    other = ShareLink.objects.create(conversation=imported("simple"), can_comment=True)
    pk = Comment.objects.get().pk
    response = Client().post(f"{other.get_absolute_url()}comments/{pk}/", {"action": "resolve", "author": "A"})
    assert response.status_code == 404 and not Comment.objects.get().resolved


# The conversation list


def test_the_list_shows_and_filters_by_comments_labels_and_verdicts(user_client, branching, imported):
    plain = imported("simple")
    one, _, root = two_branches(branching)
    url = f"{branching.get_absolute_url()}comments/"
    comment(user_client, url, event_id=root, leaf=one, body="a", labels=["root cause"])
    comment(user_client, url, event_id=one, leaf=one, body="b")
    user_client.post(f"{url}{Comment.objects.get(body='b').pk}/", {"action": "resolve", "leaf": one})
    user_client.post(f"{branching.get_absolute_url()}verdict/", {"verdict": "fail"})

    def listed(**query) -> list[str]:
        response = user_client.get("/", query)
        assert response.status_code == 200
        html = response.content.decode()
        return [c.conversation_id for c in (branching, plain) if f"/c/{c.conversation_id}/" in html]

    html = user_client.get("/").content.decode()
    row = html[html.index(f"/c/{branching.conversation_id}/") :]
    row = row[: row.index("</tr>")]
    assert "1/2" in row and "root cause" in row and "fail" in row
    assert listed(label="root cause") == [branching.conversation_id]
    assert listed(label="gave up") == []
    assert listed(verdict="fail") == [branching.conversation_id]
    assert listed(verdict="pass") == []
    assert listed(verdict="none") == [plain.conversation_id]
    assert listed(comments="open") == [branching.conversation_id]
    assert listed(comments="none") == [plain.conversation_id]
    assert listed(comments="any", sort="comments") == [branching.conversation_id]


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"label": "no such"}, "label: there is no label"),
        ({"verdict": "maybe"}, "verdict:"),
        ({"comments": "lots"}, "comments:"),
    ],
)
def test_bad_review_filters_get_a_400_naming_them(user_client, query, named):
    response = user_client.get("/", query)
    assert response.status_code == 400 and named in response.content.decode()


@pytest.mark.parametrize("sort", ["comments", "labels", "verdicts"])
def test_the_list_sorts_by_review_columns(user_client, branching, imported, sort):
    plain = imported("simple")
    one, _, root = two_branches(branching)
    comment(
        user_client, f"{branching.get_absolute_url()}comments/", event_id=root, leaf=one, body="a", labels=["gave up"]
    )
    user_client.post(f"{branching.get_absolute_url()}verdict/", {"verdict": "pass"})
    for direction, first in (("desc", branching), ("asc", plain)):
        html = user_client.get("/", {"sort": sort, "dir": direction}).content.decode()
        others = {branching: plain, plain: branching}
        assert html.index(f"/c/{first.conversation_id}/") < html.index(f"/c/{others[first].conversation_id}/")


def test_a_label_on_the_whole_conversation_is_added_shown_filtered_and_taken_off(user_client, branching):
    one, _, _ = two_branches(branching)
    url = f"{branching.get_absolute_url()}labels/"
    assert user_client.post(url, {"label": "environment problem", "leaf": one}).status_code == 302
    user_client.post(url, {"label": "environment problem", "leaf": one})  # once only
    assert "environment problem" in text_of(page(user_client, branching, one), "comments-panel")
    assert branching.conversation_labels.count() == 1
    listed = user_client.get("/", {"label": "environment problem"}).content.decode()
    assert f"/c/{branching.conversation_id}/" in listed
    assert user_client.post(url, {"label": "nonsense"}).status_code == 400
    user_client.post(url, {"label": "environment problem", "action": "remove", "leaf": one})
    assert not branching.conversation_labels.exists()


def test_a_read_only_link_cannot_label_the_conversation(branching):
    share = ShareLink.objects.create(conversation=branching)
    response = Client().post(f"{share.get_absolute_url()}labels/", {"label": "gave up", "author": "A"})
    assert response.status_code == 403 and not branching.conversation_labels.exists()
    commenting = ShareLink.objects.create(conversation=branching, can_comment=True, note="n")
    assert (
        Client().post(f"{commenting.get_absolute_url()}labels/", {"label": "gave up", "author": "A"}).status_code == 302
    )
    assert branching.conversation_labels.get().author == "A (via share link: n)"


def test_the_list_shows_the_review_columns_once_anything_is_reviewed(user_client, branching):
    def headers(**query) -> list[str]:
        html = user_client.get("/", query).content.decode()
        return [h for h in ("Comments", "Labels", "Verdicts") if f">{h}<" in html]

    assert headers() == []  # nothing reviewed yet: the title keeps the room
    assert headers(comments="none") == ["Comments", "Labels", "Verdicts"]  # asked for
    one, _, root = two_branches(branching)
    comment(user_client, f"{branching.get_absolute_url()}comments/", event_id=root, leaf=one, body="a")
    assert headers() == ["Comments", "Labels", "Verdicts"]
