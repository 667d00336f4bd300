"""Reviews: comments, labels and verdicts over JSON, for owners and for share links."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from eventviewer.imports.importer import import_paths
from eventviewer.models import Comment, Conversation, Label, ShareLink, Verdict
from eventviewer.templatetags.eventviewer import markdown

from .conftest import FIXTURES
from .reviewing import default_labels  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.fixture
def branching(imported) -> Conversation:
    return imported("branching-retries")


@pytest.fixture
def leaves(branching) -> list[str]:
    return [n["id"] for n in branching.skeleton["nodes"] if n["leaf"]]


def api(conversation: Conversation) -> str:
    return f"/api/conversations/{conversation.conversation_id}/comments/"


def post(client: Client, url: str, body: dict):
    return client.post(url, json.dumps(body), content_type="application/json")


def first_event(conversation: Conversation) -> str:
    return conversation.events.get(seq=0).event_id


@pytest.fixture
def commenting(branching) -> ShareLink:
    return ShareLink.objects.create(conversation=branching, can_comment=True, note="check the retry")


def shared_api(share: ShareLink) -> str:
    return f"{share.get_absolute_url()}api/comments/"


@pytest.mark.django_db(transaction=True)
def test_the_migration_makes_the_default_labels(migrate):
    migrate(("eventviewer", "0011_search_merges"))
    migrate()
    assert {
        "root cause",
        "environment problem",
        "wrong tool use",
        "gave up",
        "hallucinated result",
        "reward hacking",
    } <= set(Label.objects.values_list("name", flat=True))


def test_a_user_comments_on_an_event_and_reads_it_back(user_client, branching, leaves):
    event = first_event(branching)
    response = post(
        user_client,
        api(branching),
        {"event_id": event, "leaf": leaves[0], "body": "**here**", "labels": ["root cause"]},
    )
    assert response.status_code == 201
    made = response.json()
    assert (made["event_id"], made["leaf"], made["author"], made["labels"]) == (
        event,
        leaves[0],
        "reviewer-lead",
        ["root cause"],
    )
    listed = user_client.get(api(branching)).json()
    assert [c["body"] for c in listed["comments"]] == ["**here**"]
    assert listed["comments"][0]["replies"] == [] and listed["verdicts"] == []


def test_a_reply_joins_its_thread(user_client, branching):
    root = post(user_client, api(branching), {"event_id": first_event(branching), "body": "why?"}).json()
    assert post(user_client, api(branching), {"parent": root["id"], "body": "because"}).status_code == 201
    (thread,) = user_client.get(api(branching)).json()["comments"]
    assert [r["body"] for r in thread["replies"]] == ["because"]
    assert thread["replies"][0]["event_id"] == root["event_id"]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"body": "no event"}, "event_id: required"),
        ({"event_id": "nope", "body": "x"}, "event_id: this conversation has no event 'nope'"),
        ({"event_id": "E", "body": ""}, "body: required"),
        ({"event_id": "E", "body": 5}, "body: must be a string"),
        ({"event_id": "E", "body": "x" * 20_001}, "body: 20,001 characters, over the limit of 20,000"),
        ({"event_id": "E", "body": "x", "labels": ["nonsense"]}, "labels: there is no label 'nonsense'"),
        ({"event_id": "E", "body": "x", "leaf": "nope"}, "leaf: 'nope' is not a branch"),
        ({"event_id": "E", "body": "x", "parent": 999}, "parent: this conversation has no comment 999"),
    ],
)
def test_bad_comments_get_a_400_naming_the_field(user_client, branching, body, named):
    body = {k: (first_event(branching) if v == "E" else v) for k, v in body.items()}
    response = post(user_client, api(branching), body)
    assert response.status_code == 400
    assert named in response.json()["error"]
    assert not Comment.objects.exists()


def test_a_comment_on_an_event_not_on_the_named_branch_is_refused(user_client, branching, leaves):
    # Each leaf is on its own branch only.
    response = post(user_client, api(branching), {"event_id": leaves[0], "leaf": leaves[1], "body": "x"})
    assert response.status_code == 400 and "is not on the branch ending at" in response.json()["error"]


def test_a_body_that_is_not_json_is_a_400(user_client, branching):
    response = user_client.post(api(branching), "{nope", content_type="application/json")
    assert response.status_code == 400 and "not JSON" in response.json()["error"]


def test_posting_a_comment_needs_a_csrf_token(user, branching):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert post(client, api(branching), {"event_id": first_event(branching), "body": "x"}).status_code == 403
    assert not Comment.objects.exists()


def test_posting_needs_a_login(client, branching, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    assert post(client, api(branching), {"event_id": first_event(branching), "body": "x"}).status_code == 401
    settings.EVENTVIEWER_REQUIRE_LOGIN = False
    response = post(client, api(branching), {"event_id": first_event(branching), "body": "x"})
    assert response.status_code == 403 and "Log in" in response.json()["error"]


def test_thirty_comments_a_minute_per_user_then_429(user_client, branching):
    event = first_event(branching)
    for _ in range(30):
        assert post(user_client, api(branching), {"event_id": event, "body": "x"}).status_code == 201
    response = post(user_client, api(branching), {"event_id": event, "body": "x"})
    assert response.status_code == 429 and "at most 30 a minute per user" in response.json()["error"]
    Comment.objects.update(created_at=timezone.now() - timedelta(minutes=2))
    assert post(user_client, api(branching), {"event_id": event, "body": "x"}).status_code == 201


# Share links


def test_a_reviewer_comments_under_a_commenting_link(client, commenting, branching, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    response = post(
        client, shared_api(commenting), {"event_id": first_event(branching), "body": "odd", "author": "Ana"}
    )
    assert response.status_code == 201
    assert response.json()["author"] == "Ana (via share link: check the retry)"
    assert [c["author"] for c in client.get(shared_api(commenting)).json()["comments"]] == [response.json()["author"]]
    assert Comment.objects.get().share == commenting


def test_a_reviewer_must_give_a_name(client, commenting, branching):
    response = post(client, shared_api(commenting), {"event_id": first_event(branching), "body": "odd"})
    assert response.status_code == 400 and response.json()["error"] == "author: required"


def test_a_read_only_link_cannot_comment_or_read_comments(client, branching):
    share = ShareLink.objects.create(conversation=branching)
    assert client.get(shared_api(share)).status_code == 403
    response = post(client, shared_api(share), {"event_id": first_event(branching), "body": "x", "author": "Ana"})
    assert response.status_code == 403 and "read-only" in response.json()["error"]
    assert not Comment.objects.exists()


@pytest.mark.parametrize("ended", [{"revoked_at": timezone.now()}, {"expires_at": timezone.now() - timedelta(days=1)}])
def test_a_revoked_or_expired_link_can_no_longer_comment_and_what_was_written_stays(
    client, commenting, branching, ended
):
    assert (
        post(
            client, shared_api(commenting), {"event_id": first_event(branching), "body": "x", "author": "A"}
        ).status_code
        == 201
    )
    ShareLink.objects.filter(pk=commenting.pk).update(**ended)
    assert (
        post(
            client, shared_api(commenting), {"event_id": first_event(branching), "body": "y", "author": "A"}
        ).status_code
        == 410
    )
    assert Comment.objects.count() == 1


def test_a_link_reaches_only_its_conversation(client, commenting, branching, imported):
    other = imported("simple")
    ours = post(client, shared_api(commenting), {"event_id": first_event(branching), "body": "x", "author": "A"})
    assert ours.status_code == 201
    # An event of the other conversation is not an event of this one.
    response = post(client, shared_api(commenting), {"event_id": first_event(other), "body": "x", "author": "A"})
    assert response.status_code == 400
    base = commenting.get_absolute_url()
    for url in (f"{base}sub/{other.conversation_id}/api/comments/", f"{base}sub/{other.conversation_id}/api/verdict/"):
        assert client.get(url).status_code == 404
        assert (
            post(
                client, url, {"event_id": first_event(other), "body": "x", "author": "A", "verdict": "pass"}
            ).status_code
            == 404
        )
    other_link = ShareLink.objects.create(conversation=other, can_comment=True)
    assert [c["body"] for c in client.get(shared_api(other_link)).json()["comments"]] == []
    assert client.get("/s/not-a-token/api/comments/").status_code == 404
    assert Comment.objects.count() == 1 and not Verdict.objects.exists()


def test_a_link_reaches_its_sub_agents(client):
    import_paths([(FIXTURES / "subagent", "subagent")])
    parent = Conversation.objects.get(conversation_id="9045bd153bf34257918dd33313c0296c")
    child = parent.subagents.first()
    share = ShareLink.objects.create(conversation=parent, can_comment=True)
    url = f"{share.get_absolute_url()}sub/{child.conversation_id}/api/comments/"
    assert post(client, url, {"event_id": first_event(child), "body": "x", "author": "A"}).status_code == 201
    assert Comment.objects.get().conversation == child


def test_thirty_comments_a_minute_per_link_then_429(client, commenting, branching):
    event = first_event(branching)
    for _ in range(30):
        post(client, shared_api(commenting), {"event_id": event, "body": "x", "author": "A"})
    response = post(client, shared_api(commenting), {"event_id": event, "body": "x", "author": "B"})
    assert response.status_code == 429 and "per share link" in response.json()["error"]


def test_a_shared_comment_needs_a_csrf_token(commenting, branching):
    client = Client(enforce_csrf_checks=True)
    assert (
        post(
            client, shared_api(commenting), {"event_id": first_event(branching), "body": "x", "author": "A"}
        ).status_code
        == 403
    )


# Verdicts


def test_one_verdict_per_reviewer_replaced_by_the_next(user_client, client, branching, commenting):
    url = f"/api/conversations/{branching.conversation_id}/verdict/"
    assert post(user_client, url, {"verdict": "fail", "note": "gave up"}).status_code == 200
    assert post(user_client, url, {"verdict": "pass"}).status_code == 200
    shared = f"{commenting.get_absolute_url()}api/verdict/"
    assert post(Client(), shared, {"verdict": "unsure", "author": "Ana"}).status_code == 200
    verdicts = user_client.get(api(branching)).json()["verdicts"]
    assert [(v["reviewer"], v["verdict"]) for v in verdicts] == [
        ("reviewer-lead", "pass"),
        ("Ana (via share link: check the retry)", "unsure"),
    ]
    response = post(user_client, url, {"verdict": "maybe"})
    assert response.status_code == 400 and response.json()["error"].startswith("verdict: must be one of")


# Kept and deleted with the conversation


def test_comments_survive_a_reimport_and_go_with_the_conversation(user_client, branching, imported):
    post(user_client, api(branching), {"event_id": first_event(branching), "body": "kept", "labels": ["gave up"]})
    post(user_client, f"/api/conversations/{branching.conversation_id}/verdict/", {"verdict": "fail"})
    again = imported("branching-retries")
    assert again.pk == branching.pk
    assert [c["body"] for c in user_client.get(api(again)).json()["comments"]] == ["kept"]
    again.delete_in_batches()
    assert not Comment.objects.exists() and not Verdict.objects.exists()
    assert Label.objects.filter(name="gave up").exists()


# Hostile Markdown


HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "[click](javascript:alert(1))",
    '<a href="javascript:alert(1)">x</a>',
    "![x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
]


@pytest.mark.parametrize("body", HOSTILE)
def test_hostile_markdown_in_a_comment_is_inert(body):
    html = str(markdown(body))
    assert "<script" not in html and "<img src=x" not in html and '<a href="javascript' not in html.lower()
    assert 'href="javascript:' not in html.lower() and 'src="javascript:' not in html.lower()
    assert " onerror=" not in html.replace("&quot;", '"').split("&lt;")[0]


def test_labels_are_managed_in_the_admin(client, django_user_model):
    admin = django_user_model.objects.create_superuser("boss", password="a-long-test-password")
    client.force_login(admin)
    html = client.get("/admin/eventviewer/label/").content.decode()
    assert "root cause" in html and "reward hacking" in html
    response = client.post(
        "/admin/eventviewer/label/add/", {"name": "flaky test", "colour": "#123456", "description": "d"}
    )
    assert response.status_code == 302 and Label.objects.filter(name="flaky test").exists()
