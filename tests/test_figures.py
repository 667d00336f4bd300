"""The figures a reader meets. On the list: every status shown is one the filter offers,
problems and failures are two filters, a row names its run and when it started, a search
hit shows its snippet. On a conversation: when it started, turns counted as on its run
page, a timeline with an axis."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import run_import, text_of

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent / "fixtures"
V0_OUTPUT = FIXTURES / "v0" / "output.jsonl"
PARALLEL_PENDING = FIXTURES / "evaluation" / "parallel-pending.jsonl"


@pytest.fixture
def site(client, open_site):
    return client


def shown_statuses(html: str) -> list[str]:
    return re.findall(r'<span class="status status-[^"]*"[^>]*>([^<]*)</span>', html)


def filter_options(html: str) -> list[str]:
    select = re.search(r'<select name="status">(.*?)</select>', html, re.S).group(1)
    return re.findall(r'<option value="([^"]+)"', select)


def conversation_header(html: str) -> str:
    start = html.index('<header class="conv-head">')
    return html[start : html.index("</header>", start)]


def titles(html: str) -> list[str]:
    return re.findall(r'class="one-line" href="[^"]*" title="([^"]*)"', html)


def test_an_evaluation_instance_without_a_status_shows_its_outcome_not_unknown(site, imported):
    run_import(V0_OUTPUT, "--run", "v0")
    run_import(PARALLEL_PENDING, "--run", "parallel")
    html = site.get("/").content.decode()
    statuses = shown_statuses(html)
    assert "unknown" not in statuses
    assert sorted(statuses) == ["error", "failed", "resolved", "unscored"]
    row = text_of(html, "conversation-table")
    assert "ponylang__ponyc-4588 run v0" in row  # the outcome "error", beside its run
    assert re.search(r"ponylang__ponyc-4588 run v0 · \w+… · [^ ]+ v0 error", row)  # the Run column, then it


def test_every_status_the_list_shows_is_one_its_filter_offers_and_selects(site, imported):
    run_import(V0_OUTPUT, "--run", "v0")
    imported("confirmation-pending")
    imported("simple")
    html = site.get("/").content.decode()
    shown = {s.replace(" ", "_") for s in shown_statuses(html)}
    assert shown <= set(filter_options(html))
    for status in shown:
        filtered = site.get("/", {"status": status}).content.decode()
        assert set(shown_statuses(filtered)) == {status.replace("_", " ")}, status


def test_a_conversation_with_no_status_and_no_instance_is_filterable_as_unknown(site, folder):
    from .conftest import message

    run_import(folder([message("m1", None, "a conversation without base_state")]))
    html = site.get("/").content.decode()
    assert shown_statuses(html) == ["unknown"] and "unknown" in filter_options(html)
    assert titles(site.get("/", {"status": "unknown"}).content.decode()) == ["a conversation without base_state"]


def test_an_instance_page_shows_its_outcome_once_not_unknown_beside_it(site, imported):
    run_import(V0_OUTPUT, "--run", "v0")
    from eventviewer.models import Instance

    conversation = Instance.objects.get(instance_id="ponylang__ponyc-4588").conversation
    html = site.get(conversation.get_absolute_url()).content.decode()
    header = conversation_header(html)
    assert "unknown" not in header
    assert text_of(html, "instance").startswith("error instance ponylang__ponyc-4588 of run v0")


def test_problems_and_failures_are_two_filters_and_failures_finds_every_failure_kind(site, imported):
    imported("errors")  # 8 failures, no pending action, no mismatched result
    imported("confirmation-pending")  # pending actions
    imported("simple")
    html = site.get("/").content.decode()
    labels = [
        re.sub(r"<[^>]+>", "", label).split("(")[0].strip()
        for label in re.findall(
            r'<label[^>]*><input type="checkbox" name="(?:problems|failures)"[^>]*>(.*?)</label>', html
        )
    ]
    assert labels == ["problems", "failures"]
    failures = site.get("/", {"failures": "1"}).content.decode()
    assert titles(failures) == ["Show me the contents of config.toml."]
    assert "8" in text_of(failures, "conversation-table").split()
    problems = titles(site.get("/", {"problems": "1"}).content.decode())
    assert problems == ["Set up a new repository with a README."]
    assert site.get("/", {"failures": "maybe"}).status_code == 200  # a checkbox: any value but "" is on
    assert site.get("/", {"sort": "failure"}).status_code == 400


def test_the_list_has_a_started_column_sortable_both_ways(site, imported):
    imported("simple")  # started 2025-11-29 18:44
    imported("errors")
    html = site.get("/").content.decode()
    head = re.findall(r"<th[^>]*>\s*<a[^>]*>([^<]*)</a>", html)
    assert [h.split(" ")[0] for h in head][-2:] == ["Started", "Imported"]
    started = re.findall(r'<td class="started"[^>]*><time datetime="([^"]+)"[^>]*>([^<]+)</time>', html)
    assert len(started) == 2
    asc = site.get("/", {"sort": "started", "dir": "asc"}).content.decode()
    desc = site.get("/", {"sort": "started", "dir": "desc"}).content.decode()
    order = [d for d, _ in sorted(started)]
    assert re.findall(r'<td class="started"[^>]*><time datetime="([^"]+)"', asc) == order
    assert re.findall(r'<td class="started"[^>]*><time datetime="([^"]+)"', desc) == order[::-1]
    assert 'aria-sort="ascending"' in asc


def test_a_conversation_header_says_when_it_started(site, imported):
    conversation = imported("simple")
    first = conversation.events.order_by("seq").values_list("timestamp", flat=True).first()
    html = site.get(conversation.get_absolute_url()).content.decode()
    header = conversation_header(html)
    assert f'started <time datetime="{first}"' in header


def test_turns_mean_one_thing_on_an_instance_its_run_and_explained_on_hover(site, imported):
    run_import(V0_OUTPUT, "--run", "v0")
    from eventviewer.models import Instance

    instance = Instance.objects.select_related("conversation", "run").get(instance_id="ponylang__ponyc-4588")
    run_page = site.get(instance.run.get_absolute_url()).content.decode()
    row = re.search(r"<td class=\"title-cell\"><a[^>]*>ponylang__ponyc-4588</a>.*?</tr>", run_page, re.S).group(0)
    on_run = re.search(r'<td class="num" data-label="turns" title="([^"]+)">(\d+)</td>', row)
    page = site.get(instance.conversation.get_absolute_url()).content.decode()
    on_page = re.search(r'<span title="([^"]+)">(\d+) turns</span>', page)
    assert on_run and on_page
    assert on_run.group(2) == on_page.group(2) == "49"  # its 50 tool calls came in 49 responses
    assert on_run.group(1) == on_page.group(1)
    assert on_page.group(1).startswith("turns: the model&#x27;s responses that called tools")
    assert "103 events · " in text_of(page, "workspace")


def test_a_search_hit_inside_an_event_shows_its_snippet_escaped_and_links_to_the_event(site, folder):
    from .conftest import message

    events = [
        message("m1", None, "Please look at the logs."),
        message("m2", "m1", "Found <script>alert(1)</script> near the zebrafish handler.", role="assistant"),
    ]
    path = folder(events)
    run_import(path)
    html = site.get("/", {"q": "zebrafish"}).content.decode()
    hit = re.search(
        r'<p class="list-hit small"><a href="([^"]+)"[^>]*>([^<]+)</a> <span class="snippet">(.*?)</span></p>', html
    )
    assert hit, "no snippet under the row"
    href, what, snippet = hit.groups()
    assert "at=m2" in href and href.endswith("#event-m2") and "hl=zebrafish" in href
    assert what == "Message"
    assert "<mark>zebrafish</mark>" in snippet
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in snippet and "<script>" not in snippet
    # Found by its id alone: no snippet.
    by_id = site.get("/", {"q": path.name[:12]}).content.decode()
    assert "Please look at the logs." in by_id and "list-hit" not in by_id


def test_the_timeline_has_an_axis_and_each_mark_says_when_and_how_long(site, imported):
    run_import(V0_OUTPUT, "--run", "v0")
    from eventviewer.models import Instance

    conversation = Instance.objects.get(instance_id="ponylang__ponyc-4588").conversation
    html = site.get(conversation.get_absolute_url()).content.decode()
    axis = re.search(r'<ol class="timeline-axis" aria-label="Time axis: ([^"]+)">(.*?)</ol>', html, re.S)
    assert axis, "no axis under the timeline"
    labels = re.findall(r"<li>(?:<time[^>]*>)?([^<]+)", axis.group(2))
    assert axis.group(1) == "7 min 29 s"
    assert re.fullmatch(r"\d\d:\d\d:\d\d", labels[0])  # the first turn's clock time
    assert labels[1:] == ["+1:52", "+3:44", "+5:37", "+7:29"]
    strip = html[html.index('class="timeline"') :]
    titles = re.findall(r"<title>([^<]*)</title>", strip[: strip.index("</svg>")])
    assert titles and all(" · at +" in t or " turns at +" in t for t in titles)
    assert any(", took " in t for t in titles)
