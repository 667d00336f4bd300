"""A run read as an experiment: its totals, its failure patterns, two runs compared."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from urllib.parse import quote_plus

import pytest

from eventviewer.models import Instance

from .conftest import run_import, text_of

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PARALLEL_PENDING = FIXTURES / "evaluation" / "parallel-pending.jsonl"
SDK_OUTPUT = FIXTURES / "evaluation" / "output.jsonl"
V0_OUTPUT = FIXTURES / "v0" / "output.jsonl"

pytestmark = pytest.mark.django_db


def totals(client, slug: str) -> str:
    return text_of(client.get(f"/runs/{slug}/").content.decode(), "run-totals")


def test_the_run_page_opens_with_its_totals_and_resolve_rate(user_client):
    run_import(PARALLEL_PENDING, "--run", "fixtures")
    text = totals(user_client, "fixtures")
    assert "Instances 2 Resolved 1 Failed 1 Error 0 Not scored 0" in text
    assert "Resolve rate 50.0% 95% 9.5%–90.5%" in text  # Wilson, 1 of 2
    assert "Turns 5 median 2.5" in text
    assert "Pending or mismatched 1" in text  # confirmation-pending
    assert "Pending or mismatched 1 Imported" in text


def test_a_v0_run_counts_its_error_as_scored_and_the_unscored_apart(user_client):
    run_import(V0_OUTPUT, "--run", "pony")
    text = totals(user_client, "pony")
    assert "Instances 2 Resolved 0 Failed 0 Error 1 Not scored 1" in text
    assert "Resolve rate 0.0% 95% 0.0%–79.3%" in text
    assert "Turns 72 median 36" in text


def test_a_run_with_nothing_scored_says_so(user_client):
    run_import(SDK_OUTPUT, "--run", "safety")
    text = totals(user_client, "safety")
    assert "Resolve rate none scored" in text and "Not scored 2" in text


# A crafted run with known patterns: rows made from a real SDK row (parallel-with-invalid-call)


def crafted_rows() -> list[dict]:
    """12 instances: 4 failed on a missing module (each a different module and path),
    2 on the invalid web_search call, 1 on a hostile error, 2 finished without passing,
    1 ran out of turns, 2 resolved."""
    (template,) = [r for r in read_rows(PARALLEL_PENDING) if r["instance_id"] == "parallel-with-invalid-call"]

    def row(
        instance_id: str, resolved: bool, output: str | None = None, invalid: bool = False, finish: bool = True
    ) -> dict:
        data = copy.deepcopy(template)
        data["instance_id"] = instance_id
        data["test_result"] = {"git_patch": "", "resolved": resolved}
        history = data["history"]
        if output is not None:
            observation = history[9]["observation"]
            observation["exit_code"] = observation["metadata"]["exit_code"] = 1
            observation["content"][0]["text"] = output
        if not invalid:
            dropped = {e["id"]: e.get("parent_id") for e in history[3:5]}
            del history[3:5]
            for event in history:
                while event.get("parent_id") in dropped:  # the tree closes over the gap
                    event["parent_id"] = dropped[event["parent_id"]]
        if not finish:
            del history[-2:]
        return data

    def missing(module: str, path: str) -> str:
        return (
            "Traceback (most recent call last):\n"
            f'  File "{path}", line 7, in <module>\n'
            f"ModuleNotFoundError: No module named '{module}'"
        )

    return [
        row("mod-a", False, missing("requests", "/workspace/a.py")),
        row("mod-b", False, missing("numpy", "/tmp/x/b.py")),
        row("mod-c", False, missing("yaml", "/workspace/src/c.py")),
        row("mod-d", False, missing("pandas", "./d.py")),
        row("web-a", False, invalid=True),
        row("web-b", False, invalid=True),
        row("hostile", False, "ValueError: bad <img src=x onerror=alert(1)>"),
        row("done-a", False),
        row("done-b", False),
        row("turns-a", False, finish=False),
        row("ok-a", True),
        row("ok-b", True),
    ]


def read_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def crafted(tmp_path) -> str:
    path = tmp_path / "crafted.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in crafted_rows()))
    run_import(path, "--run", "crafted")
    return "crafted"


MISSING = "terminal exit 1: ModuleNotFoundError: No module named <name>"


def test_failing_instances_are_grouped_by_what_went_wrong_first(user_client, crafted):
    text = text_of(user_client.get("/runs/crafted/").content.decode(), "run-patterns")
    assert f"{MISSING} × 4 33.3% mod-a , mod-b" in text
    assert "web_search invalid call: web_search × 2 16.7% web-a , web-b" in text
    assert "finished without passing tests × 2 16.7% done-a , done-b" in text
    assert "ran out of turns × 1 8.3% turns-a" in text
    assert text.index(MISSING) < text.index("web_search invalid call")  # the biggest first
    assert "ok-a" not in text


def test_a_pattern_filters_the_table_in_the_url(user_client, crafted):
    html = user_client.get("/runs/crafted/").content.decode()
    assert f'href="?pattern={quote_plus(MISSING)}"' in html
    table = text_of(user_client.get("/runs/crafted/", {"pattern": MISSING}).content.decode(), "instance-table")
    assert all(f"mod-{x}" in table for x in "abcd") and "web-a" not in table and "done-a" not in table
    assert "non-zero exit code terminal ModuleNotFoundError: No module named 'numpy'" in table


def test_the_first_failure_links_to_its_event(user_client, crafted):
    html = user_client.get("/runs/crafted/", {"q": "web-a"}).content.decode()
    conversation = Instance.objects.get(run__slug="crafted", instance_id="web-a")
    event = conversation.conversation.events.get(event_id=conversation.first_failure)
    assert event.failure == "invalid_call"
    assert f'href="{event.get_absolute_url()}"' in html
    assert user_client.get(event.get_absolute_url()).status_code == 200


def test_an_error_text_from_an_event_is_escaped_in_patterns_and_the_table(user_client, crafted):
    html = user_client.get("/runs/crafted/").content.decode()
    assert "<img src=x" not in html
    assert "terminal exit 1: ValueError: bad &lt;img src=x onerror=alert(&lt;n&gt;)&gt;" in html


def test_has_pending_filters_to_instances_with_pending_or_mismatched_results(user_client):
    run_import(PARALLEL_PENDING, "--run", "fixtures")
    table = text_of(user_client.get("/runs/fixtures/?pending=1").content.decode(), "instance-table")
    assert "confirmation-pending" in table and "parallel-with-invalid-call" not in table


@pytest.mark.django_db(transaction=True)
def test_rows_imported_before_patterns_are_signed_by_the_migration(migrate):
    run_import(V0_OUTPUT, "--run", "pony")
    migrate(("eventviewer", "0012_reading_symbols"))
    migrate(("eventviewer", "0013_runs_patterns"))
    error = Instance.objects.get(instance_id="ponylang__ponyc-4588")
    assert error.pattern == "execute_bash exit 1" and error.first_failure_kind == "exit_code"
    assert Instance.objects.get(instance_id="ponylang__ponyc-4595").pattern == ""  # not scored


# Two runs compared


@pytest.fixture
def two_runs(tmp_path) -> None:
    """A: the crafted run. B: nine of its failures fixed, ok-a broken, turns-a not run,
    new-x run only by B (and failed)."""
    a = crafted_rows()
    b = []
    for data in copy.deepcopy(a):
        if data["instance_id"] == "turns-a":
            continue
        if data["instance_id"] != "ok-b":
            data["test_result"]["resolved"] = data["instance_id"] != "ok-a"
        b.append(data)
    extra = copy.deepcopy(a[-1])
    extra["instance_id"], extra["test_result"]["resolved"] = "new-x", False
    b.append(extra)
    for name, data in (("run-a", a), ("run-b", b)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in data))
        run_import(path, "--run", name)


def test_compare_counts_each_change_and_tests_the_difference(user_client, two_runs):
    html = user_client.get("/runs/compare/?a=run-a&b=run-b").content.decode()
    counts = text_of(html, "compare-table")
    assert counts.startswith("all 13 fixed 9 broken 1 still failing 0 still resolved 1 only in A 1 only in B 1")
    totals = text_of(html, "run-totals")
    assert "Instances 12 12" in totals and "Resolved 2 10" in totals
    assert "Resolve rate 16.7% 4.7%–44.8% 83.3% 55.2%–95.3% +66.7 pp" in totals
    assert "Cost $0.00 $0.00 ±$0.00" in totals
    assert "on the 11 instances both ran: p = 0.0215 (the difference is more than chance)" in text_of(
        html, "run-significance"
    )


def test_compare_lists_each_instance_with_both_sides_and_filters_by_change(user_client, two_runs):
    table = text_of(user_client.get("/runs/compare/?a=run-a&b=run-b&change=fixed").content.decode(), "compare-table")
    assert "mod-a fixed failed 3 turns · 21.1k · $0.00 non-zero exit code terminal : ModuleNotFoundError" in table
    assert "ok-a" not in table and "new-x" not in table
    only = text_of(user_client.get("/runs/compare/?a=run-a&b=run-b&change=only-b").content.decode(), "compare-table")
    assert "new-x only in B not in this run failed" in only


def test_a_compare_page_holds_its_rows_with_every_change_counted(user_client, two_runs, settings):
    settings.EVENTVIEWER_LIST_PAGE_SIZE = 5
    last = text_of(user_client.get("/runs/compare/?a=run-a&b=run-b&page=3").content.decode(), "compare-table")
    assert last.startswith("all 13 fixed 9 broken 1") and "11–13 of 13" in last
    rows = re.findall(
        r"<tr>\s*<td class=\"title-cell\"><span class=\"one-line mono\">([^<]+)<",
        user_client.get("/runs/compare/?a=run-a&b=run-b&page=3").content.decode(),
    )
    assert rows == ["turns-a", "web-a", "web-b"]  # by instance id, the last page
    fixed = user_client.get("/runs/compare/?a=run-a&b=run-b&change=fixed&page=2").content.decode()
    assert "6–9 of 9" in text_of(fixed, "compare-table") and "fixed 9" in text_of(fixed, "compare-table")


def test_each_instance_opens_its_two_trajectories_side_by_side(user_client, two_runs):
    html = user_client.get("/runs/compare/?a=run-a&b=run-b&change=broken").content.decode()
    one, other = (Instance.objects.get(run__slug=s, instance_id="ok-a").conversation for s in ("run-a", "run-b"))
    link = (
        f"/compare/?a={one.conversation_id}%3A{one.head.event_id}&amp;b={other.conversation_id}%3A{other.head.event_id}"
    )
    assert f'href="{link}">trajectories</a>' in html
    page = user_client.get(link.replace("&amp;", "&"))
    assert page.status_code == 200


def test_the_compare_partial_and_its_bad_queries(user_client, two_runs):
    response = user_client.get("/runs/compare/?a=run-a&b=run-b&change=broken", HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "<html" not in response.content.decode()
    assert "HX-Request" in response["Vary"]
    assert user_client.get("/runs/compare/?a=run-a&b=run-b&change=nope").status_code == 400
    assert user_client.get("/runs/compare/?a=run-a&b=run-b&page=0").status_code == 400


def test_a_share_link_does_not_reach_runs(client, user, two_runs):
    from eventviewer.models import ShareLink

    conversation = Instance.objects.get(run__slug="run-a", instance_id="ok-a").conversation
    link = ShareLink.objects.create(conversation=conversation)
    assert client.get(link.get_absolute_url()).status_code == 200
    for url in (
        "/runs/",
        "/runs/run-a/",
        "/runs/compare/?a=run-a&b=run-b",
        "/runs/run-a/export.jsonl?format=summary",
        "/runs/compare/?runs=run-a,run-b",
        "/export.jsonl?format=summary",
        "/?run=run-a&run=run-b",
        "/api/runs/",
        "/api/runs/run-a/",
    ):
        assert client.get(url).status_code in (302, 401, 403), url


# JSON


def test_the_api_gives_a_runs_totals_patterns_and_a_page_of_instances(user_client, crafted):
    body = user_client.get("/api/runs/crafted/").json()
    assert set(body) == {"run", "totals", "patterns", "instances", "page", "next"}
    assert body["run"] == "crafted" and body["next"] is None
    assert body["totals"] == {
        "instances": 12,
        "resolved": 2,
        "failed": 10,
        "error": 0,
        "not_scored": 0,
        "resolve_rate": pytest.approx(2 / 12),
        "tokens": body["totals"]["tokens"],
        "cost": body["totals"]["cost"],
    }
    assert body["patterns"][0] == {
        "signature": MISSING,
        "count": 4,
        "instance_ids": ["mod-a", "mod-b", "mod-c", "mod-d"],
    }
    (web,) = [i for i in body["instances"] if i["instance_id"] == "web-a"]
    assert set(web) == {"instance_id", "conversation_id", "outcome", "turns", "tokens", "cost", "first_failure"}
    assert web["outcome"] == "failed" and web["first_failure"]["kind"] == "invalid_call"
    assert web["first_failure"]["tool"] == "web_search"
    (ok,) = [i for i in body["instances"] if i["instance_id"] == "ok-a"]
    assert ok["first_failure"] is None
    listed = user_client.get("/api/runs/").json()
    assert [r["run"] for r in listed["runs"]] == ["crafted"] and listed["runs"][0]["totals"]["resolved"] == 2


def test_the_api_pages_a_runs_instances(user_client, crafted, monkeypatch):
    from eventviewer import api

    monkeypatch.setattr(api, "RUN_PAGE", 5)
    first = user_client.get("/api/runs/crafted/").json()
    assert len(first["instances"]) == 5 and first["next"] == "?page=2"
    last = user_client.get("/api/runs/crafted/?page=3").json()
    assert [i["instance_id"] for i in last["instances"]] == ["web-a", "web-b"] and last["next"] is None
    assert user_client.get("/api/runs/crafted/?page=4").status_code == 404
    assert user_client.get("/api/runs/crafted/?page=x").json() == {"error": "page must be a positive integer"}
    assert user_client.get("/api/runs/nope/").status_code == 404


def test_the_api_compares_two_runs(user_client, two_runs):
    body = user_client.get("/api/runs/compare/?a=run-a&b=run-b").json()
    assert set(body) == {"a", "b", "counts", "instances", "mcnemar_p"}
    assert body["counts"] == {
        "fixed": 9,
        "broken": 1,
        "still-failing": 0,
        "still-resolved": 1,
        "only-a": 1,
        "only-b": 1,
    }
    assert body["mcnemar_p"] == pytest.approx(22 / 1024)
    by_id = {i["instance_id"]: i for i in body["instances"]}
    assert by_id["turns-a"]["b"] is None and by_id["turns-a"]["change"] == "only-a"
    assert by_id["ok-a"]["a"]["outcome"] == "resolved" and by_id["ok-a"]["b"]["outcome"] == "failed"
    assert user_client.get("/api/runs/compare/?a=run-a").status_code == 400
    assert user_client.get("/api/runs/compare/?a=run-a&b=zzz").json() == {"error": "There is no run zzz."}
    assert user_client.post("/api/runs/compare/?a=run-a&b=run-b").status_code == 405


# Export


def lines_of(response) -> list[dict]:
    assert response.streaming and response["Content-Type"] == "application/x-ndjson"
    return [json.loads(line) for line in b"".join(response.streaming_content).decode().splitlines()]


def test_a_runs_summary_export_is_one_json_line_per_instance(user_client, crafted):
    response = user_client.get("/runs/crafted/export.jsonl?format=summary")
    assert 'filename="crafted.summary.jsonl"' in response["Content-Disposition"]
    found = lines_of(response)
    assert [line["instance_id"] for line in found][:3] == ["done-a", "done-b", "hostile"] and len(found) == 12
    (mod,) = [line for line in found if line["instance_id"] == "mod-a"]
    assert mod["run"] == "crafted" and mod["outcome"] == "failed" and mod["labels"] == []
    assert mod["test_result"] == {"git_patch": "", "resolved": False} and mod["pattern"] == MISSING
    assert "events" not in mod and "messages" not in mod


def test_a_runs_export_carries_each_branch_as_messages_or_verbatim_events(user_client, crafted):
    events = {
        line["instance_id"]: line for line in lines_of(user_client.get("/runs/crafted/export.jsonl?format=events"))
    }
    source = {r["instance_id"]: r for r in crafted_rows()}
    assert [e["id"] for e in events["web-a"]["events"]] == [e["id"] for e in source["web-a"]["history"]]
    assert events["mod-b"]["events"] == source["mod-b"]["history"]  # verbatim
    messages = {
        line["instance_id"]: line for line in lines_of(user_client.get("/runs/crafted/export.jsonl?format=messages"))
    }
    roles = [m["role"] for m in messages["ok-a"]["messages"]]
    assert roles[:2] == ["system", "user"] and "assistant" in roles and "tool" in roles


def test_a_bad_export_query_is_a_400_and_a_missing_run_a_404(user_client, crafted):
    assert user_client.get("/runs/crafted/export.jsonl").status_code == 400
    assert user_client.get("/runs/crafted/export.jsonl?format=zip").status_code == 400
    assert user_client.get("/runs/nope/export.jsonl?format=summary").status_code == 404


def export_peaks(client, tmp_path, settings, monkeypatch, url: str) -> list[int]:
    """The peak memory of exporting a run of 20 and of 160 instances (``url`` formatted
    with the run's name), each export checked to hold a line per instance. An export held
    whole would peak 8 times higher at 8 times the instances; a streamed one stays near
    constant. What a first export sets up once (templates, queries, lazy imports) is done
    before either is measured, so that it does not hide the growth: measured, 1.2 to 1.4
    times streamed, 4.2 to 4.6 times when the export is built whole first."""
    import tracemalloc

    from cachetools import LRUCache

    from eventviewer import caches

    # What the process caches (read branches and cards, up to the caches' bounds) is not the export's.
    settings.CACHES = {**settings.CACHES, "default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
    monkeypatch.setattr(caches, "_cards", LRUCache(maxsize=0))
    template = read_rows(PARALLEL_PENDING)[0]
    peaks = []
    for n in (20, 160):
        path = tmp_path / f"m{n}.jsonl"
        path.write_text("".join(json.dumps(dict(template, instance_id=f"case-{i:03d}")) + "\n" for i in range(n)))
        run_import(path, "--run", f"m{n}")
    for _ in client.get(url.format(run="m20")).streaming_content:  # the warm-up
        pass
    for n in (20, 160):
        tracemalloc.start()
        try:
            response = client.get(url.format(run=f"m{n}"))
            count = sum(chunk.count(b"\n") for chunk in response.streaming_content)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
        assert count == n
    return peaks


@pytest.mark.slow
def test_the_export_streams_in_constant_memory(user_client, tmp_path, settings, monkeypatch):
    peaks = export_peaks(user_client, tmp_path, settings, monkeypatch, "/runs/{run}/export.jsonl?format=events")
    assert peaks[1] < 2.5 * peaks[0], f"peaks {peaks}: 8 times the instances"


# Charts


def test_the_run_page_draws_turns_cost_and_duration_and_a_bar_filters_the_table(user_client, crafted):
    html = user_client.get("/runs/crafted/").content.decode()
    charts = html[html.index('id="run-charts"') : html.index('id="run-patterns"')]
    assert charts.count("<svg") == 3 and "<script" not in charts
    assert 'aria-label="Turns per instance"' in charts
    # turns-a stopped a turn early: 2 turns, the others 3
    assert "2 to 3: 1 instances (1 failed)" in charts and "3 to 4: 11 instances (2 resolved, 9 failed)" in charts
    link = re.search(r'<a href="([^"]+)" class="bar"><title>2 to 3', charts).group(1).replace("&amp;", "&")
    assert link == "?turns=2.0%3A3.0"
    table = text_of(user_client.get("/runs/crafted/" + link).content.decode(), "instance-table")
    assert "turns-a" in table and "mod-a" not in table


@pytest.mark.parametrize("query", ["turns=3", "turns=a:b", "cost=5:1", "duration=nan:1"])
def test_a_bad_range_is_a_400(user_client, crafted, query):
    response = user_client.get(f"/runs/crafted/?{query}")
    assert response.status_code == 400 and b"low" in response.content


# The conversation list: several runs, the run column, the list's export

V0_TRAJECTORY = FIXTURES / "v0" / "trajectory.json"


def test_the_list_filters_by_several_runs_and_names_an_unknown_one(user_client, two_runs):
    run_import(V0_TRAJECTORY)
    one = text_of(user_client.get("/?run=run-a").content.decode(), "conversation-table")
    both = text_of(user_client.get("/?run=run-a&run=run-b").content.decode(), "conversation-table")
    assert "new-x" not in one and "12 of" in one
    assert "Instances of runs run-a , run-b" in both and "new-x" in both and "24 of 25" in both
    assert "2048" not in both  # the v0 trajectory is in no run
    missing = user_client.get("/?run=run-a&run=nope")
    assert missing.status_code == 404 and "nope" in missing.content.decode()
    bad = user_client.get("/?run=run-a&run=not%20a%20slug")
    assert bad.status_code == 400 and "not a run" in bad.content.decode()


def test_the_list_sorts_by_run_with_conversations_outside_a_run_last(user_client, two_runs):
    run_import(V0_TRAJECTORY)
    html = user_client.get("/").content.decode()
    assert re.search(r'<a href="\?sort=run&amp;dir=asc"[^>]*>Run</a>', html)
    cells = re.findall(r'<td class="run-cell"[^>]*>(.*?)</td>', user_client.get("/?sort=run&dir=asc").content.decode())
    names = [re.sub(r"<[^>]+>", "", c) for c in cells]
    assert names[:12] == ["run-a"] * 12 and names[12:24] == ["run-b"] * 12 and names[24:] == [""]
    back = re.findall(r'<td class="run-cell"[^>]*>(.*?)</td>', user_client.get("/?sort=run&dir=desc").content.decode())
    assert re.sub(r"<[^>]+>", "", back[0]) == "run-b" and re.sub(r"<[^>]+>", "", back[-1]) == ""


def test_the_list_exports_what_it_shows_one_line_per_conversation(user_client, two_runs):
    run_import(V0_TRAJECTORY)
    html = user_client.get("/?run=run-b&sort=title&dir=asc").content.decode()
    link = re.search(r'href="(/export\.jsonl\?[^"]*format=summary[^"]*)"', html).group(1).replace("&amp;", "&")
    assert "run=run-b" in link and "sort=title" in link
    response = user_client.get(link)
    assert 'filename="conversations.summary.jsonl"' in response["Content-Disposition"]
    found = lines_of(response)
    assert len(found) == 12 and {line["run"] for line in found} == {"run-b"}
    (new,) = [line for line in found if line["instance_id"] == "new-x"]
    assert new["outcome"] == "failed" and new["labels"] == [] and new["test_result"]["resolved"] is False
    assert "events" not in new and "messages" not in new
    everything = lines_of(user_client.get("/export.jsonl?format=summary"))
    outside = [line for line in everything if line["run"] is None]
    assert len(everything) == 25 and len(outside) == 1 and outside[0]["instance_id"] is None


def test_the_list_export_carries_branches_and_keeps_the_lists_search(user_client, crafted):
    source = {r["instance_id"]: r for r in crafted_rows()}
    events = {line["instance_id"]: line for line in lines_of(user_client.get("/export.jsonl?format=events"))}
    assert events["mod-b"]["events"] == source["mod-b"]["history"]  # verbatim, as the run's export
    messages = lines_of(user_client.get("/export.jsonl?format=messages&q=ok-a"))
    assert [line["instance_id"] for line in messages] == ["ok-a"]
    roles = [m["role"] for m in messages[0]["messages"]]
    assert roles[:2] == ["system", "user"] and "tool" in roles
    assert user_client.get("/export.jsonl").status_code == 400
    assert user_client.get("/export.jsonl?format=zip").status_code == 400
    assert user_client.get("/export.jsonl?format=summary&run=nope").status_code == 404


@pytest.mark.slow
def test_the_list_export_streams_in_constant_memory(user_client, tmp_path, settings, monkeypatch):
    peaks = export_peaks(user_client, tmp_path, settings, monkeypatch, "/export.jsonl?format=events&run={run}")
    assert peaks[1] < 2.5 * peaks[0], f"peaks {peaks}: 8 times the conversations"


# Several runs compared


def test_several_runs_compare_as_a_heat_table_the_most_disagreed_on_first(user_client, two_runs):
    run_import(PARALLEL_PENDING, "--run", "third")
    runs_page = user_client.get("/runs/").content.decode()
    assert 'action="/runs/compare/"' in runs_page and 'name="runs" value="third"' in runs_page
    html = user_client.get("/runs/compare/?runs=run-a&runs=run-b").content.decode()
    table = text_of(html, "heat-table")
    assert table.startswith("Instance run-a run-b")
    # The nine fixed and ok-a (broken) split the two runs; ok-b is resolved in both, last of the ran-in-both.
    order = re.findall(r'<span class="one-line mono">([^<]+)</span>', html)
    assert len(order) == 13 and "ok-a" in order[:10] and order[:10] == sorted(order[:10])
    assert order[10:] == ["new-x", "ok-b", "turns-a"]  # the runs agree, or only one ran it
    cells = re.findall(r'<td class="heat-cell (outcome-\w+|not-run)"', html)
    assert cells[:2] in (["outcome-failed", "outcome-resolved"], ["outcome-resolved", "outcome-failed"])
    assert "not run" in table  # turns-a in A only, new-x in B only: said in words, not by colour alone
    three = user_client.get("/runs/compare/?runs=run-a,run-b,third")
    assert three.status_code == 200 and "Instance run-a run-b third" in text_of(three.content.decode(), "heat-table")


def test_the_heat_table_pages_and_refuses_bad_queries(user_client, two_runs, settings):
    settings.EVENTVIEWER_LIST_PAGE_SIZE = 5
    first = user_client.get("/runs/compare/?runs=run-a,run-b").content.decode()
    second = user_client.get("/runs/compare/?runs=run-a,run-b&page=3", headers={"HX-Request": "true"})
    assert "page 1 of 3" in first and second.content.decode().strip().startswith('<div id="heat-table">')
    assert "11–13 of 13" in text_of(second.content.decode(), "heat-table")
    assert user_client.get("/runs/compare/?runs=run-a").status_code == 400
    assert user_client.get("/runs/compare/?runs=run-a,bad%20slug").status_code == 400
    missing = user_client.get("/runs/compare/?runs=run-a,nope")
    assert missing.status_code == 404 and "nope" in missing.content.decode()
