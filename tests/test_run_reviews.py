"""Reviews on the run page: the instance table's review columns, filters and sort, the
agreement between reviewers, and the run's reviews as a download."""

from __future__ import annotations

import csv
import io
import re

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from eventviewer.models import Comment, ConversationLabel, Instance, Label, Verdict

from .conftest import text_of
from .reviewing import default_labels  # noqa: F401
from .test_runs import crafted  # noqa: F401

pytestmark = pytest.mark.django_db
RUN = "/runs/crafted/"


def instance(instance_id: str) -> Instance:
    return Instance.objects.select_related("conversation").get(run__slug="crafted", instance_id=instance_id)


def comment_on(instance_id: str, body: str = "why?", resolved: bool = False, labels: tuple[str, ...] = ()) -> Comment:
    conversation = instance(instance_id).conversation
    event = conversation.events.get(seq=0).event_id
    made = Comment.objects.create(
        conversation=conversation, event_id=event, body=body, author="reviewer-lead", resolved=resolved
    )
    made.labels.set(Label.objects.filter(name__in=labels))
    return made


def judge(instance_id: str, reviewer: str, outcome: str) -> None:
    Verdict.objects.create(conversation=instance(instance_id).conversation, reviewer=reviewer, outcome=outcome)


def label_on(instance_id: str, name: str) -> None:
    ConversationLabel.objects.create(
        conversation=instance(instance_id).conversation, label=Label.objects.get(name=name), author="reviewer-lead"
    )


def listed(client: Client, **query: str) -> list[str]:
    """The instance ids the run's table shows, in its order."""
    response = client.get(RUN, query)
    assert response.status_code == 200, response.content
    table = response.content.decode().split('id="instance-table"')[1]
    return re.findall(r'<a class="one-line mono" href="[^"]+">([^<]+)</a>', table)


def row_of(client: Client, instance_id: str, **query: str) -> str:
    html = client.get(RUN, query).content.decode().split('id="instance-table"')[1]
    row = html[html.index(f">{instance_id}</a>") :]
    return row[: row.index("</tr>")]


@pytest.fixture
def reviewed(crafted) -> None:  # noqa: F811
    comment_on("mod-a", "open one", labels=("root cause",))
    comment_on("mod-a", "settled", resolved=True)
    comment_on("web-a", "settled", resolved=True)
    label_on("web-b", "gave up")
    judge("mod-a", "ann", "fail")
    judge("mod-a", "bob", "pass")
    judge("ok-a", "ann", "pass")


def test_each_instance_shows_its_open_and_all_threads_labels_and_verdicts(user_client, reviewed):
    head = text_of(user_client.get(RUN).content.decode(), "instance-table")
    assert "Comments" in head and "Labels" in head and "Verdicts" in head
    row = row_of(user_client, "mod-a")
    assert ">1/2<" in row and "root cause" in row
    assert '<span class="badge verdict-fail">fail</span> <span class="badge verdict-pass">pass</span>' in row
    assert "gave up" in row_of(user_client, "web-b")  # a label on the whole conversation
    assert ">0/1<" in row_of(user_client, "web-a")


def test_the_review_columns_wait_for_the_first_review(user_client, crafted):  # noqa: F811
    head = text_of(user_client.get(RUN).content.decode(), "instance-table")
    assert "Verdicts" not in head and "Instance" in head
    assert "Verdicts" in text_of(user_client.get(RUN, {"verdict": "none"}).content.decode(), "instance-table")


@pytest.mark.parametrize(
    ("query", "shown"),
    [
        ({"label": "root cause"}, ["mod-a"]),
        ({"label": "gave up"}, ["web-b"]),
        ({"label": "environment problem"}, []),
        ({"verdict": "fail"}, ["mod-a"]),
        ({"verdict": "pass"}, ["mod-a", "ok-a"]),
        ({"verdict": "unsure"}, []),
        ({"comments": "open"}, ["mod-a"]),
        ({"comments": "any"}, ["mod-a", "web-a"]),
        ({"comments": "any", "outcome": "failed", "q": "web"}, ["web-a"]),  # with the run's own filters
    ],
)
def test_the_review_filters_pick_instances(user_client, reviewed, query, shown):
    assert listed(user_client, **query) == shown


def test_no_verdict_and_no_comments_are_filters_too(user_client, reviewed):
    everyone = listed(user_client)
    assert len(everyone) == 12
    assert listed(user_client, verdict="none") == [i for i in everyone if i not in ("mod-a", "ok-a")]
    assert listed(user_client, comments="none") == [i for i in everyone if i not in ("mod-a", "web-a")]


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ({"label": "no such"}, "label: there is no label"),
        ({"verdict": "maybe"}, "verdict:"),
        ({"comments": "lots"}, "comments:"),
        ({"sort": "kappa"}, "sort:"),
    ],
)
def test_junk_review_filters_are_a_400_naming_them(user_client, reviewed, query, named):
    response = user_client.get(RUN, query)
    assert response.status_code == 400 and named in response.content.decode()


@pytest.mark.parametrize(
    ("sort", "first"),
    [("comments", ["mod-a"]), ("verdicts", ["mod-a", "ok-a"]), ("labels", ["mod-a", "web-b"])],
)
def test_the_table_sorts_by_each_review_column_both_ways(user_client, reviewed, sort, first):
    descending = listed(user_client, sort=sort, dir="desc")
    assert descending[: len(first)] == first  # equal counts in instance order
    ascending = listed(user_client, sort=sort, dir="asc")
    assert sorted(ascending[-len(first) :]) == first and len(ascending) == 12
    # the header's link flips the order of the sorted column
    html = user_client.get(RUN, {"sort": sort, "dir": "desc"}).content.decode()
    assert f'href="?sort={sort}&amp;dir=asc"' in html


def test_the_sorted_table_comes_alone_to_htmx(user_client, reviewed):
    response = user_client.get(RUN, {"sort": "verdicts", "dir": "desc"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html and 'id="instance-table"' in html
    assert "verdict-fail" in html and "HX-Request" in response["Vary"]


def queries_for(client: Client, **query: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(RUN, query).status_code == 200
    return len(captured)


@pytest.mark.parametrize("query", [{}, {"sort": "verdicts"}, {"label": "root cause", "comments": "any"}])
def test_the_page_reads_the_same_queries_however_many_rows_are_reviewed(user_client, reviewed, query):
    few = queries_for(user_client, **query)
    for i in Instance.objects.filter(run__slug="crafted"):
        comment_on(i.instance_id, labels=("root cause", "gave up"))
        judge(i.instance_id, "cat", "unsure")
        label_on(i.instance_id, "environment problem")
    assert queries_for(user_client, **query) == few
    assert few <= 20, few


# Agreement between reviewers


def agreement_of(client: Client) -> str:
    return text_of(client.get(RUN).content.decode(), "run-agreement")


def test_two_reviewers_get_their_kappa_over_the_instances_both_judged(user_client, crafted):  # noqa: F811
    # 8 instances both judged: 4 fail/fail, 2 pass/pass, 1 fail/pass, 1 pass/fail.
    # p_o = 6/8 = 75%; p_e = (5*5 + 3*3) / 64 = 34/64; kappa = (48 - 34) / (64 - 34) = 0.47.
    ids = [i.instance_id for i in Instance.objects.filter(run__slug="crafted").order_by("instance_id")]
    pairs = [("fail", "fail")] * 4 + [("pass", "pass")] * 2 + [("fail", "pass"), ("pass", "fail")]
    for instance_id, (a, b) in zip(ids, pairs, strict=False):
        judge(instance_id, "ann", a)
        judge(instance_id, "bob", b)
    judge(ids[-1], "ann", "unsure")  # judged by one of them only: not counted
    text = agreement_of(user_client)
    assert "Agreement between reviewers" in text
    assert "ann · bob 8 75.0% 0.47 moderate" in text


def test_a_small_overlap_is_not_enough_to_say(user_client, crafted):  # noqa: F811
    for instance_id in ("mod-a", "mod-b", "mod-c"):
        judge(instance_id, "ann", "fail")
        judge(instance_id, "bob", "pass")
    assert "ann · bob 3 0.0% not enough overlap" in agreement_of(user_client)


def test_agreeing_on_one_verdict_everywhere_shows_kappa_undefined(user_client, crafted):  # noqa: F811
    for i in Instance.objects.filter(run__slug="crafted")[:6]:
        judge(i.instance_id, "ann", "fail")
        judge(i.instance_id, "bob", "fail")
    assert "ann · bob 6 100.0% undefined: all fail" in agreement_of(user_client)


def test_three_reviewers_get_a_row_per_pair(user_client, crafted):  # noqa: F811
    for i in Instance.objects.filter(run__slug="crafted"):
        for who in ("ann", "bob", "cat"):
            judge(i.instance_id, who, "pass" if i.outcome == "resolved" or who == "cat" else "fail")
    text = agreement_of(user_client)
    assert "with 3 reviewers, every pair" in text
    assert "ann · bob 12 100.0% 1.00 almost perfect" in text
    assert "ann · cat 12 16.7% 0.00 slight" in text and "bob · cat 12 16.7%" in text


def test_one_reviewer_or_none_shows_no_agreement(user_client, reviewed):
    Verdict.objects.filter(reviewer="bob").delete()
    assert 'id="run-agreement"' not in user_client.get(RUN).content.decode()


def test_reviewers_without_an_instance_in_common_are_told_so(user_client, crafted):  # noqa: F811
    judge("mod-a", "ann", "fail")
    judge("mod-b", "bob", "fail")
    assert "no instance has verdicts from two of them yet" in agreement_of(user_client)


# The run's reviews as a download


def export_reviews(*args: str) -> str:
    out = io.StringIO()
    call_command("export_reviews", *args, stdout=out)
    return out.getvalue()


def links_of(client: Client) -> dict[str, str]:
    facts = client.get(RUN).content.decode()
    facts = facts[facts.index('id="run-facts"') :]
    facts = facts[: facts.index("</p>")]
    return {text: href.replace("&amp;", "&") for href, text in re.findall(r'<a href="([^"]+)"[^>]*>([^<]+)</a>', facts)}


@pytest.mark.parametrize(
    ("link", "format", "content_type", "lines"),
    [("JSON lines", "jsonl", "application/x-ndjson", 7), ("CSV", "csv", "text/csv; charset=utf-8", 8)],
)
def test_the_download_is_what_export_reviews_writes_for_the_run(
    user_client, reviewed, link, format, content_type, lines
):
    outside = Comment.objects.create(conversation=instance("ok-b").conversation, event_id="x", body="b", author="a")
    outside.conversation.instance.delete()  # now a conversation outside any run
    href = links_of(user_client)[link]
    response = user_client.get(href)
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == content_type
    assert response["Content-Disposition"] == f'attachment; filename="crafted.reviews.{format}"'
    body = b"".join(response.streaming_content).decode()
    assert body == export_reviews("--run", "crafted", "--format", format)
    assert body.count("\n") == lines  # 3 comments, 1 label, 3 verdicts (and CSV's header)
    assert "reviewer-lead" in body and ",b," not in body and '"text":"b"' not in body


def test_the_csv_download_has_a_row_per_comment_label_and_verdict_with_its_instance(user_client, reviewed):
    body = b"".join(user_client.get(links_of(user_client)["CSV"]).streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(body)))
    assert sorted((r["type"], r["instance_id"], r["labels"], r["verdict"]) for r in rows) == [
        ("comment", "mod-a", "", ""),
        ("comment", "mod-a", "root cause", ""),
        ("comment", "web-a", "", ""),
        ("label", "web-b", "gave up", ""),
        ("verdict", "mod-a", "", "fail"),
        ("verdict", "mod-a", "", "pass"),
        ("verdict", "ok-a", "", "pass"),
    ]


def test_the_download_refuses_a_bad_format_and_a_missing_run(user_client, reviewed):
    response = user_client.get("/runs/crafted/export-reviews/", {"format": "xlsx"})
    assert response.status_code == 400 and "format:" in response.content.decode()
    assert user_client.get("/runs/crafted/export-reviews/").status_code == 400
    assert user_client.get("/runs/nope/export-reviews/", {"format": "csv"}).status_code == 404


def test_the_download_needs_a_login_and_a_share_link_does_not_reach_it(client, reviewed):
    from eventviewer.models import ShareLink

    share = ShareLink.objects.create(conversation=instance("mod-a").conversation, can_comment=True)
    assert client.get(share.get_absolute_url()).status_code == 200  # the link itself opens
    response = client.get("/runs/crafted/export-reviews/", {"format": "jsonl"})
    assert response.status_code == 302 and "/login/" in response["Location"]
