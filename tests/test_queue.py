"""Review queues: a filtered list's conversations walked one at a time from ``/review/``,
each opened at its first failure, with its place and next/previous links in the branch
bar; those the reviewer gave a verdict passed over; blind reviews."""

from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from eventviewer.imports.importer import import_paths
from eventviewer.models import Conversation, ConversationLabel, Instance, Label, ShareLink, Verdict

from .conftest import action, message, observation, text_of
from .reviewing import default_labels  # noqa: F401
from .test_runs import crafted  # noqa: F401, F811

pytestmark = pytest.mark.django_db

EXIT_1 = {"kind": "TerminalObservation", "content": [{"type": "text", "text": "1 failed"}], "exit_code": 1}


def failing(folder, title: str, minutes_ago: int) -> Conversation:
    """A conversation whose first failure is ``o2``, after a command that went well."""
    events = [
        message("m1", None, f"fix {title}"),
        action("a1", "m1", "c1"),
        observation("o1", "a1", "a1", "c1"),
        action("a2", "o1", "c2", response="r2", action={"kind": "TerminalAction", "command": "pytest"}),
        {**observation("o2", "a2", "a2", "c2"), "observation": EXIT_1},
        message("m2", "o2", "done", role="assistant"),
    ]
    conversation = import_paths([(folder(events, {"leaf_event_id": "m2"}), title)])[0].conversation
    Conversation.objects.filter(pk=conversation.pk).update(
        title=title, imported_at=timezone.now() - timedelta(minutes=minutes_ago)
    )
    return Conversation.objects.get(pk=conversation.pk)


@pytest.fixture
def three(folder) -> list[Conversation]:
    """Three failed conversations, newest first (the list's order), and one that went well."""
    found = [failing(folder, name, minutes) for name, minutes in (("first", 1), ("second", 2), ("third", 3))]
    fine = [message("m1", None, "hello"), message("m2", "m1", "hi", role="assistant")]
    import_paths([(folder(fine, {"leaf_event_id": "m2"}), "fine")])
    return found


def opened(client: Client, url: str) -> tuple[str, str]:
    """The page a queue link opens (following its redirect) and its URL."""
    response = client.get(url, follow=True)
    assert response.status_code == 200, response.content[:300]
    final = response.redirect_chain[-1][0] if response.redirect_chain else url
    return response.content.decode(), final


def link(html: str, marker: str) -> str:
    found = re.search(rf'<a\b[^>]*?href="([^"]+)"[^>]*?{marker}', html)
    assert found, marker
    return found.group(1).replace("&amp;", "&")


def position(html: str) -> str:
    return " ".join(re.search(r"data-queue-position>(.*?)</b>", html, re.S).group(1).split())


def test_review_these_opens_the_first_conversation_at_its_first_failure(user_client, three):
    response = user_client.get("/review/", {"failures": "1"})
    assert response.status_code == 302
    path, query = urlsplit(response.url)[2:4]
    assert path == three[0].get_absolute_url() and parse_qs(query) == {"queue": ["?failures=1"]}
    html, _ = opened(user_client, response.url)
    assert 'data-at="o2"' in html  # the first failure, focused
    assert position(html) == "1 of 3"
    assert "3 without your verdict" in text_of(html, "workspace")


def test_the_list_links_review_these_with_its_own_query(user_client, three):
    html = user_client.get("/", {"failures": "1", "sort": "title", "page": "1"}).content.decode()
    href = link(html, "data-review-these")
    assert urlsplit(href).path == "/review/" and parse_qs(urlsplit(href).query) == {
        "failures": ["1"],
        "sort": ["title"],
    }
    page, _ = opened(user_client, href)
    assert position(page) == "1 of 3" and "<b>first</b>" not in page  # sorted by title: first, second, third
    assert f'data-leaf="{three[0].head.event_id}"' in page


def test_next_and_previous_walk_the_list_in_its_order(user_client, three):
    html, _ = opened(user_client, "/review/?failures=1")
    second, url = opened(user_client, link(html, "data-queue-next"))
    assert urlsplit(url).path == three[1].get_absolute_url() and position(second) == "2 of 3"
    assert 'data-at="o2"' in second
    third, _ = opened(user_client, link(second, "data-queue-next"))
    assert position(third) == "3 of 3" and "no next" in third and "data-queue-next" not in third
    back, url = opened(user_client, link(third, "data-queue-previous"))
    assert urlsplit(url).path == three[1].get_absolute_url()
    assert 'hx-boost="true"' in back  # the links load the whole page


def test_the_queue_links_are_kept_by_the_pages_own_links(user_client, three):
    html, _ = opened(user_client, "/review/?failures=1")
    leaf = three[0].head.event_id
    # Jump to another event of the branch: the page's links keep the queue, and no longer move to the failure.
    focused = user_client.get(three[0].get_absolute_url(), {"queue": "?failures=1", "leaf": leaf, "at": "o1"})
    page = focused.content.decode()
    assert 'data-at="o1"' in page and position(page) == "1 of 3"
    # A card's own link, the diagram's links and the branch list's keep it.
    assert re.search(rf'href="[^"]*\?queue=%3Ffailures%3D1&amp;leaf={leaf}&amp;at=o2#event-o2"', html)
    assert re.search(r'<a [^>]*xlink:href="[^"]*queue=%3Ffailures%3D1', html)
    assert re.search(r'action="[^"]*/verdict/\?queue=%3Ffailures%3D1"', page)


def test_a_verdict_given_in_a_queue_answers_with_the_queue_kept(user_client, three):
    url = three[0].get_absolute_url()
    response = user_client.post(
        f"{url}verdict/?queue=%3Ffailures%3D1", {"verdict": "fail", "leaf": three[0].head.event_id}
    )
    assert response.status_code == 302 and "queue=%3Ffailures%3D1" in response.url
    html, _ = opened(user_client, response.url)
    assert position(html) == "1 of 3" and "2 without your verdict" in html


def test_conversations_with_my_verdict_are_passed_over_unless_asked_for(user_client, user, three, django_user_model):
    Verdict.objects.create(conversation=three[0], reviewer=user.username, user=user, outcome="fail")
    other = django_user_model.objects.create_user("someone-else")
    Verdict.objects.create(conversation=three[1], reviewer="someone-else", user=other, outcome="pass")
    response = user_client.get("/review/", {"failures": "1"})
    assert urlsplit(response.url).path == three[1].get_absolute_url()  # another's verdict is no reason to skip
    html, _ = opened(user_client, response.url)
    assert position(html) == "2 of 3" and "no previous" in html
    with_reviewed = link(html, r'title="walk the conversations you gave a verdict too"')
    assert parse_qs(urlsplit(with_reviewed).query)["reviewed"] == ["1"]
    html, _ = opened(user_client, with_reviewed)
    assert urlsplit(link(html, "data-queue-previous")).path == three[0].get_absolute_url()
    assert "reviewed=1" in link(html, "data-queue-previous")
    response = user_client.get("/review/", {"failures": "1", "reviewed": "1"})
    assert urlsplit(response.url).path == three[0].get_absolute_url()


def test_a_queue_all_reviewed_says_so(user_client, user, three):
    for c in three:
        Verdict.objects.create(conversation=c, reviewer=user.username, user=user, outcome="fail")
    response = user_client.get("/review/", {"failures": "1"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "You have given a verdict on all 3 conversations of this list." in html
    again = re.search(r'<a href="([^"]+)">Walk them again', html).group(1).replace("&amp;", "&")
    assert user_client.get(again).status_code == 302


def test_a_conversation_that_left_the_list_goes_on_with_the_queues_first(user_client, user, three):
    # A verdict takes a conversation out of a ``verdict=none`` list: its next is the first still to review.
    Verdict.objects.create(conversation=three[0], reviewer=user.username, user=user, outcome="fail")
    html = user_client.get(three[0].get_absolute_url(), {"queue": "?failures=1&verdict=none"}).content.decode()
    assert position(html) == "not on the list of 2"
    assert urlsplit(link(html, "data-queue-next")).path == three[1].get_absolute_url()


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"queue": "from=yesterday"}, "Bad queue: imported_from:"),
        ({"queue": "verdict=maybe"}, "Bad queue: verdict:"),
        ({"queue": "q=%22unclosed"}, "Bad queue: q:"),
        ({"queue": "x" * 2001}, "Bad query: queue:"),
        ({"queue": "?sort=nonsense"}, "Bad queue: sort:"),
    ],
)
def test_a_garbled_queue_is_refused_naming_the_parameter(user_client, three, query, named):
    response = user_client.get(three[0].get_absolute_url(), query)
    assert response.status_code == 400 and named in response.content.decode()


def test_review_checks_the_lists_query_as_the_list_does(user_client, three):
    response = user_client.get("/review/", {"from": "yesterday"})
    assert response.status_code == 400 and "Bad queue: imported_from:" in response.content.decode()
    assert user_client.get("/review/", {"run": "no-such-run"}).status_code == 404


def test_the_queue_reaches_only_what_the_list_shows(user_client, three):
    Conversation.objects.filter(pk=three[1].pk).update(deleting=True)  # hidden everywhere
    html, _ = opened(user_client, "/review/?failures=1")
    assert position(html) == "1 of 2"
    assert urlsplit(link(html, "data-queue-next")).path == three[2].get_absolute_url()
    # The list without its filter holds the fine one too; with it, never.
    assert position(opened(user_client, "/review/")[0]) == "1 of 3"


def test_the_place_costs_one_query_on_ids(user_client, three):
    url = three[1].get_absolute_url()
    leaf = three[1].head.event_id
    user_client.get(url, {"leaf": leaf})  # caches warm (the diagram's links differ in a queue: its own)
    user_client.get(url, {"leaf": leaf, "queue": "?failures=1"})
    with CaptureQueriesContext(connection) as alone:
        user_client.get(url, {"leaf": leaf})
    with CaptureQueriesContext(connection) as queued:
        html = user_client.get(url, {"leaf": leaf, "queue": "?failures=1"}).content.decode()
    assert position(html) == "2 of 3"
    assert len(queued) == len(alone) + 1

    # (The session's query holds the time it was made: on PostgreSQL its text differs each time.)
    def texts(captured: CaptureQueriesContext) -> set[str]:
        return {q["sql"] for q in captured.captured_queries if "django_session" not in q["sql"]}

    extra = texts(queued) - texts(alone)
    assert len(extra) == 1 and "skeleton" not in extra.pop()


def test_a_share_link_page_has_no_queue(client, user, three):
    share = ShareLink.objects.create(conversation=three[0], created_by=user, can_comment=True)
    html = client.get(share.get_absolute_url(), {"queue": "?failures=1"}).content.decode()
    assert "data-queue" not in html


def test_the_run_page_links_its_filtered_instances_queue(user_client, crafted):  # noqa: F811
    html = user_client.get("/runs/crafted/", {"outcome": "failed"}).content.decode()
    href = link(html, "data-review-these")
    assert parse_qs(urlsplit(href).query) == {"run": ["crafted"], "outcome": ["failed"]}
    response = user_client.get(href)
    assert response.status_code == 302
    queue = parse_qs(urlsplit(response.url).query)["queue"][0]
    assert parse_qs(queue.removeprefix("?")) == {"run": ["crafted"], "outcome": ["failed"]}
    html, _ = opened(user_client, response.url)
    failed = Instance.objects.filter(run__slug="crafted", outcome="failed").count()
    assert position(html) == f"1 of {failed}" and 0 < failed < 12


# --- Blind reviews -------------------------------------------------------------------


def test_a_blind_queue_hides_the_others_verdicts_and_labels_until_mine(user_client, user, three, django_user_model):
    other = django_user_model.objects.create_user("someone-else")
    conversation = three[0]
    Verdict.objects.create(conversation=conversation, reviewer="someone-else", user=other, outcome="pass")
    ConversationLabel.objects.create(conversation=conversation, label=Label.objects.first(), author="someone-else")
    url = conversation.get_absolute_url()
    seen = user_client.get(url, {"queue": "?failures=1"}).content.decode()
    assert "someone-else" in text_of(seen, "verdicts") and "verdict-pass" in seen
    blind = user_client.get(url, {"queue": "?failures=1", "blind": "1"}).content.decode()
    verdicts = text_of(blind, "verdicts")
    assert "someone-else" not in verdicts and "verdict-pass" not in blind
    assert "hidden until you give your verdict" in verdicts
    chip = rf'class="label-chip"[^>]*>{Label.objects.first().name}<'
    assert re.search(chip, seen) and not re.search(chip, blind)
    response = user_client.post(f"{url}verdict/?queue=%3Ffailures%3D1&blind=1", {"verdict": "fail", "leaf": "m2"})
    assert "blind=1" in response.url
    after = user_client.get(response.url).content.decode()
    assert "someone-else" in text_of(after, "verdicts") and "verdict-pass" in after
    assert "you have given your verdict, so the others'" in text_of(after, "verdicts")
