"""Pages: what a user sees on the list, a conversation, an event, and the import page."""

from __future__ import annotations

import json
import re
import zipfile
from xml.etree import ElementTree

import pytest
from django.test import override_settings
from django.utils import timezone

from eventviewer.models import Conversation, Event, ShareLink

from .conftest import action, fixture_folder, message, observation, text_of

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def site(client, open_site):
    return client


def event_ids_on_page(html: str) -> list[str]:
    return re.findall(r'id="event-([^"]+)"', html)


# The list


def test_the_list_shows_each_conversation_with_its_figures(site, imported):
    imported("confirmation-pending")
    imported("branching-retries")
    html = site.get("/").content.decode()
    assert "Set up a new repository with a README." in html
    assert "waiting_for_confirmation" in html
    assert "waiting for confirmation 6 1 2 0" in text_of(html, "conversation-table")  # events, branches, pending, …
    assert "Write a script that counts words in data.txt." in html


def test_the_list_searches_titles_and_ids(site, imported):
    imported("simple")
    conversation = imported("errors")
    html = site.get("/", {"q": "config.toml"}).content.decode()
    assert "config.toml" in html and "hello.txt" not in html
    html = site.get("/", {"q": conversation.conversation_id[:10]}).content.decode()
    assert "config.toml" in html and "hello.txt" not in html
    assert "No conversation matches" in site.get("/", {"q": "zebra"}).content.decode()


def test_the_list_sorts_by_a_column_both_ways(site, imported):
    imported("simple")
    imported("long-300")
    desc = site.get("/", {"sort": "events", "dir": "desc"}).content.decode()
    asc = site.get("/", {"sort": "events", "dir": "asc"}).content.decode()
    assert desc.index("Turn 0") < desc.index("hello.txt")
    assert asc.index("hello.txt") < asc.index("Turn 0")
    assert 'aria-sort="ascending"' in asc


def test_sort_headers_and_pager_links_are_single_query_strings(site, imported):
    for scenario in ("simple", "errors"):
        imported(scenario)
    with override_settings(EVENTVIEWER_LIST_PAGE_SIZE=1):
        html = site.get("/", {"sort": "events", "dir": "asc"}).content.decode()
        hrefs = re.findall(r'href="(\?[^"]*)"', html)
        assert hrefs and not any(h.startswith("??") or "%3F" in h for h in hrefs)
        older = re.search(r'href="(\?[^"]*)">older', html).group(1).replace("&amp;", "&")
        second = site.get("/" + older).content.decode()
    assert "page 2 of 2" in second and "hello.txt" not in second


def test_an_unknown_address_gets_our_own_404_page(site):
    response = site.get("/no/such/page/")
    html = response.content.decode()
    assert response.status_code == 404
    assert "There is nothing at this address." in html and "Back to the conversations" in html
    assert "Resolver404" not in html and "tried" not in html


@pytest.mark.parametrize("query", [{"sort": "nonsense"}, {"dir": "sideways"}, {"page": "0"}, {"q": "x" * 201}])
def test_a_bad_list_query_is_a_400_with_a_reason(site, query):
    response = site.get("/", query)
    assert response.status_code == 400
    assert "Bad query" in response.content.decode()


def test_the_list_table_is_an_htmx_partial(site, imported):
    imported("simple")
    response = site.get("/", {"q": "hello"}, **HX)
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html and 'id="conversation-table"' in html
    assert "HX-Request" in [header.strip() for header in response["Vary"].split(",")]


# A conversation


def test_the_page_shows_the_head_branch_only(site, imported):
    conversation = imported("branching-retries")
    html = site.get(conversation.get_absolute_url()).content.decode()
    head_path = [e.event_id for e in conversation.read_path(conversation.head).path]
    assert event_ids_on_page(html) == head_path
    assert " HEAD " in text_of(html, "workspace").split("Whole branch")[0]  # the branch bar says so


def test_another_leaf_shows_its_branch_and_offers_to_make_it_head(client, imported, user):
    conversation = imported("branching-retries")
    other = next(n["id"] for n in conversation.skeleton["nodes"] if n["leaf"] and not n["head"])
    client.force_login(user)
    html = client.get(conversation.get_absolute_url(), {"leaf": other}).content.decode()
    assert event_ids_on_page(html)[-1] == other
    assert "not HEAD" in html and "Make this the default branch" in html


def test_a_dashed_id_redirects_to_the_canonical_page(site, imported):
    conversation = imported("simple")
    import uuid

    response = site.get(f"/c/{uuid.UUID(conversation.conversation_id)}/", {"leaf": conversation.head.event_id})
    assert response.status_code == 302
    assert response["Location"] == f"{conversation.get_absolute_url()}?leaf={conversation.head.event_id}"


@pytest.mark.parametrize(
    ("url", "status", "text"),
    [
        ("/c/zzz/", 400, "is not a conversation id"),
        (f"/c/{'0' * 32}/", 404, "Not found"),
        ("/c/{cid}/?leaf=missing-event", 404, "has no event"),
        ("/c/{cid}/?leaf={head}&at=missing", 404, "is not on this branch"),
        ("/c/{cid}/?leaf=" + "x" * 300, 400, "leaf"),
        ("/c/{cid}/?at=a&before=b", 400, "at most one of at, before and after"),
        ("/c/{cid}/events/nope/", 404, "has no event"),
        ("/c/{cid}/diagram.svg?leaf=nope", 404, "has no event"),
    ],
)
def test_bad_or_missing_things_get_400_or_404(site, imported, url, status, text):
    conversation = imported("simple")
    response = site.get(url.format(cid=conversation.conversation_id, head=conversation.head.event_id))
    assert response.status_code == status
    assert text in response.content.decode()


def test_switching_branch_with_htmx_returns_only_the_workspace(site, imported):
    conversation = imported("branching-retries")
    leaf = next(n["id"] for n in conversation.skeleton["nodes"] if n["leaf"] and not n["head"])
    response = site.get(conversation.get_absolute_url(), {"leaf": leaf}, **HX)
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html and html.lstrip().startswith('<div id="workspace"')
    assert "<svg" in html and event_ids_on_page(html)[-1] == leaf
    assert "HX-Request" in response["Vary"]


@pytest.mark.parametrize("page", ["list", "conversation", "event"])
def test_a_history_restore_gets_the_whole_page(site, imported, page):
    conversation = imported("simple")
    url = {
        "list": "/",
        "conversation": conversation.get_absolute_url(),
        "event": f"{conversation.get_absolute_url()}events/{conversation.events.get(seq=1).event_id}/",
    }[page]
    partial = site.get(url, **HX).content.decode()
    restored = site.get(url, HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true").content.decode()
    assert "<html" in restored and "<html" not in partial


def test_pending_actions_and_their_count_are_flagged(site, imported):
    conversation = imported("confirmation-pending")
    html = site.get(conversation.get_absolute_url()).content.decode()
    assert "2 pending" in text_of(html, "workspace")
    for action_id in conversation.read_path(conversation.head).pairing.pending:
        assert text_of(html, f"event-{action_id}").split()[1:2] == ["pending"]


def test_a_batch_is_one_assistant_turn_with_its_calls(site, imported):
    conversation = imported("parallel-with-invalid-call")
    html = site.get(conversation.get_absolute_url()).content.decode()
    assert "2 tool calls" in html
    assert "invalid call" in html
    assert "continues" in html  # A3 is the same response, split by the AgentErrorEvent
    assert "Let me set up the project" in html  # the shared thought, once
    assert "The user wants a tiny module" in html  # reasoning, folded


def test_errors_and_system_prompt_are_shown(site, imported):
    conversation = imported("errors")
    html = site.get(conversation.get_absolute_url()).content.decode()
    conversation_error = text_of(html, "event-4443b767-bac2-4148-b485-162f3530b757")
    assert "LLMAuthenticationError" in conversation_error
    assert "Your LLM API key appears to be invalid or has expired." in conversation_error
    agent_error = text_of(html, "event-dcdfad74-2603-4a1d-bb69-e2531f476a89")
    assert "Tool 'search_files' not found. Available: ['terminal', 'file_editor', 'finish', 'think']" in agent_error
    assert "the tool reported an error" in html
    assert "System prompt" in html and "<summary>" in html


def test_a_rejected_action_shows_who_rejected_it_and_why(site, imported):
    conversation = imported("hooks")
    html = site.get(conversation.get_absolute_url()).content.decode()
    rejection = text_of(html, "event-d034952d-19ad-4aeb-96ee-86648192cac1")
    assert "Rejected: rm is not allowed by project policy" in rejection
    assert "by a hook" in rejection


def test_condensation_summaries_are_shown(site, imported):
    conversation = imported("condensation")
    html = site.get(conversation.get_absolute_url()).content.decode()
    assert "History condensed" in html and "USER_CONTEXT: user asked to build up a log file" in html


def test_long_output_is_truncated_with_a_way_to_see_all(site, folder):
    long_text = "\n".join(f"line {i}" for i in range(500))
    path = folder(
        [message("m1", None, "go"), action("a1", "m1", "c1"), observation("o1", "a1", "a1", "c1", text=long_text)]
    )
    from eventviewer.imports.importer import import_paths

    (result,) = import_paths([(path, "t")])
    page = site.get(result.conversation.get_absolute_url()).content.decode()
    assert "line 39" in page and "line 499" not in page and "show all output" in page
    event_page = site.get(f"{result.conversation.get_absolute_url()}events/o1/").content.decode()
    assert "line 499" in event_page


def test_a_long_branch_is_windowed_and_loads_earlier_turns(site, imported, settings):
    settings.EVENTVIEWER_PAGE_SIZE = 20
    conversation = imported("long-300")
    path = [e.event_id for e in conversation.read_path(conversation.head).path]
    html = site.get(conversation.get_absolute_url()).content.decode()
    shown = event_ids_on_page(html)
    assert shown[-1] == path[-1] and len(shown) < 60
    earlier = re.search(r'href="([^"]*before=[^"]*)"', html).group(1).replace("&amp;", "&")
    fragment = site.get(earlier, **HX).content.decode()
    more = event_ids_on_page(fragment)
    assert "<html" not in fragment
    assert more == path[path.index(more[0]) : path.index(shown[0])]


def test_a_link_to_an_event_outside_the_window_opens_the_window_around_it(site, imported, settings):
    settings.EVENTVIEWER_PAGE_SIZE = 20
    conversation = imported("long-300")
    target = conversation.read_path(conversation.head).path[40].event_id
    html = site.get(conversation.get_absolute_url(), {"at": target}).content.decode()
    assert target in event_ids_on_page(html)
    assert "Load earlier turns" in html and "Load later turns" in html


def test_the_event_page_has_the_raw_json_and_a_way_back_to_its_branch(site, imported):
    conversation = imported("branching-retries")
    on_head = conversation.events.get(seq=1)
    html = site.get(f"{conversation.get_absolute_url()}events/{on_head.event_id}/").content.decode()
    assert "Raw JSON" in html and "&quot;llm_message&quot;" in html
    assert f"?leaf={conversation.head.event_id}&amp;at={on_head.event_id}#event-{on_head.event_id}" in html
    # Off HEAD's branch: shown on the most recent branch through it.
    off_head = conversation.events.get(seq=3)
    latest = max(
        (n for n in conversation.skeleton["nodes"] if n["leaf"] and n["id"] != conversation.head.event_id),
        key=lambda n: n["seq"],
    )
    html = site.get(f"{conversation.get_absolute_url()}events/{off_head.event_id}/").content.decode()
    assert f"?leaf={latest['id']}&amp;at={off_head.event_id}" in html


def test_an_event_in_a_folded_run_of_a_side_branch_is_shown_on_that_branch(site, folder):
    # R - A - B - C (HEAD); A - S1 - S2 - S3 - X - {L1, L2}: S1..S3 fold into X's run.
    tree = [("R", None), ("A", "R"), ("B", "A"), ("C", "B"), ("S1", "A"), ("S2", "S1"), ("S3", "S2")]
    tree += [("X", "S3"), ("L1", "X"), ("L2", "X")]
    path = folder([message(i, p, f"text of {i}") for i, p in tree], base_state={"leaf_event_id": "C"})
    from eventviewer.imports.importer import import_paths

    (result,) = import_paths([(path, "t")])
    html = site.get(f"{result.conversation.get_absolute_url()}events/S2/").content.decode()
    (href,) = re.findall(r'<a\b[^>]*\bhref="([^"]*)"[^>]*>\s*Show in the conversation\s*</a>', html)
    assert href.replace("&amp;", "&") == f"{result.conversation.get_absolute_url()}?leaf=L2&at=S2#event-S2"


def test_the_standalone_svg_parses_and_links_every_leaf(site, imported):
    conversation = imported("branching-retries")
    response = site.get(f"{conversation.get_absolute_url()}diagram.svg")
    assert response["Content-Type"].startswith("image/svg+xml")
    assert (
        "script-src" not in response["Content-Security-Policy"]
        and "default-src 'none'" in response["Content-Security-Policy"]
    )
    root = ElementTree.fromstring(response.content)
    hrefs = {
        a.get("href") or a.get("{http://www.w3.org/1999/xlink}href") for a in root.iter("{http://www.w3.org/2000/svg}a")
    }
    head = conversation.head.event_id
    for node in conversation.skeleton["nodes"]:
        if node["leaf"] and node["id"] != head:
            assert f"{conversation.get_absolute_url()}?leaf={node['id']}" in hrefs
    # HEAD's branch is the one drawn selected: its nodes go to their events on it.
    assert f"{conversation.get_absolute_url()}?leaf={head}&at={head}#event-{head}" in hrefs


# Import page


def test_the_import_page_imports_an_uploaded_zip(site, tmp_path):
    folder = fixture_folder("simple")
    archive = tmp_path / "simple.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in folder.rglob("*"):
            if path.is_file():
                z.write(path, f"{folder.name}/{path.relative_to(folder)}")
    with open(archive, "rb") as f:
        response = site.post("/import/", {"files": f})
    assert response.status_code == 302 and response["Location"].startswith("/import/")
    html = site.get(response["Location"]).content.decode()
    assert f'href="/c/{folder.name}/"' in html and "6 new events, 0 unchanged" in html


def test_the_import_page_refuses_bad_files_and_says_why(site, tmp_path):
    bad = tmp_path / "broken.jsonl"
    bad.write_text('{"id": "m1", "kind": "MessageEvent"}\n{"id": \n')
    with open(bad, "rb") as f:
        response = site.post("/import/", {"files": f})
    html = site.get(response["Location"]).content.decode()
    assert "Nothing was imported" in html and "broken.jsonl:2" in html and "malformed JSON" in html
    assert Conversation.objects.count() == 0


def test_the_import_page_refuses_other_file_types(site, tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    with open(other, "rb") as f:
        response = site.post("/import/", {"files": f})
    assert response.status_code == 400 and "upload a .zip" in response.content.decode()


@override_settings(EVENTVIEWER_MAX_UPLOAD_BYTES=10)
def test_the_import_page_caps_upload_size(site, tmp_path):
    big = tmp_path / "big.json"
    big.write_text(json.dumps([message("m1", None, "hello there")]))
    with open(big, "rb") as f:
        response = site.post("/import/", {"files": f})
    assert response.status_code == 400 and "EVENTVIEWER_MAX_UPLOAD_BYTES" in response.content.decode()


# Login


@pytest.mark.parametrize("url", ["/", "/c/{cid}/", "/c/{cid}/events/{eid}/", "/c/{cid}/diagram.svg", "/import/"])
def test_pages_need_a_login_by_default(client, imported, settings, url):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    conversation = imported("simple")
    response = client.get(url.format(cid=conversation.conversation_id, eid=conversation.head.event_id))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")


def test_a_logged_in_user_reads_everything(user_client, imported, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    conversation = imported("simple")
    assert user_client.get("/").status_code == 200
    assert user_client.get(conversation.get_absolute_url()).status_code == 200


def test_every_page_has_a_strict_content_security_policy(site, imported):
    conversation = imported("simple")
    for url in ("/", conversation.get_absolute_url(), "/import/", "/accounts/login/"):
        policy = site.get(url)["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy


def test_absurdly_nested_tool_arguments_still_render(site, folder):
    nested = "[" * 5000 + "]" * 5000
    call = action("a1", "m1", "c1")
    call["tool_call"]["arguments"] = nested
    path = folder([message("m1", None, "go"), call])
    from eventviewer.imports.importer import import_paths

    (result,) = import_paths([(path, "t")])
    response = site.get(result.conversation.get_absolute_url())
    assert response.status_code == 200 and "[[[[" in response.content.decode()


def test_huge_arguments_and_messages_are_cut_on_the_page_and_whole_on_the_event_page(site, folder):
    from eventviewer.imports.importer import import_paths

    call = action("a1", "m1", "c1")
    call["tool_call"]["arguments"] = json.dumps({"file_text": "\n".join(f"row {i}" for i in range(5000))})
    path = folder([message("m1", None, "word " * 10_000), call])
    (result,) = import_paths([(path, "t")])
    page = site.get(result.conversation.get_absolute_url()).content.decode()
    assert "row 4999" not in page and page.count("Cut here") == 2 and len(page) < 200_000
    assert "row 4999" in site.get(f"{result.conversation.get_absolute_url()}events/a1/").content.decode()


def test_an_impossible_timestamp_is_shown_as_text(site, folder):
    from eventviewer.imports.importer import import_paths

    odd = message("m1", None, "hi")
    odd["timestamp"] = "9999-12-31T23:59:59-23:59"
    (result,) = import_paths([(folder([odd]), "t")])
    response = site.get(result.conversation.get_absolute_url())
    assert response.status_code == 200 and "9999-12-31T23:59:59-23:59" in response.content.decode()


def test_an_uploaded_jsonl_named_by_its_id_keeps_that_id(site, tmp_path):
    target = tmp_path / "0123456789abcdef0123456789abcdef.jsonl"
    target.write_text(json.dumps(message("m1", None, "hi")) + "\n")
    with open(target, "rb") as f:
        response = site.post("/import/", {"files": f})
    assert 'href="/c/0123456789abcdef0123456789abcdef/"' in site.get(response["Location"]).content.decode()


def test_a_corrupt_zip_member_is_a_problem_line(site, tmp_path):
    archive = tmp_path / "bad.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(f"{'a' * 32}/events/event-00000-m1.json", json.dumps(message("m1", None, "hello there")))
    data = bytearray(archive.read_bytes())
    data[data.index(b"hello there")] ^= 0xFF
    archive.write_bytes(bytes(data))
    with open(archive, "rb") as f:
        response = site.post("/import/", {"files": f})
    assert "cannot be read" in site.get(response["Location"]).content.decode()


def test_a_branch_title_is_one_clean_line_whatever_the_text(site, tmp_path):
    """Summaries are stored as written and cleaned where they show."""
    from eventviewer.imports.importer import import_paths

    from .conftest import write_folder

    messy = "\n\n   first\tline\r\nsecond \u202eline\x00 \u2066end" + " padding" * 100
    events = [message("m1", None, "start"), message("m2", "m1", messy, role="assistant"), message("m3", "m1", "other")]
    (result,) = import_paths([(write_folder(tmp_path, events), "t")])

    html = site.get(result.conversation.get_absolute_url()).content.decode()
    # The branch list: what its leaf says, one line.
    (title,) = re.findall(r'\?leaf=m2"[^>]*>[^<]*</a>\s*<span class="one-line muted small" title="([^"]*)">', html)
    assert title.startswith("Agent: first line second line end padding padding")
    assert len(title) == len("Agent: ") + 200 and title.endswith("…")
    assert not any(c in title for c in "\n\r\t\x00\u202e\u2066")


def test_events_named_like_dot_segments_have_pages_a_browser_can_open(site, tmp_path):
    """A browser drops "." and ".." path segments: those ids go in the query instead."""
    import html as html_module
    from urllib.parse import urlsplit

    from eventviewer.imports.importer import import_paths

    ids = [".", "..", "a/../b"]
    path = tmp_path / "dots.jsonl"
    events = [message(".", None, "first"), message("..", ".", "second"), message("a/../b", "..", "third")]
    path.write_text("\n".join(json.dumps(e) for e in events))
    (result,) = import_paths([(path, "dots.jsonl")])

    page = site.get(result.conversation.get_absolute_url()).content.decode()
    links = {html_module.unescape(h) for h in re.findall(r'href="([^"]*/events/[^"]*)"', page)}
    shown = set()
    for link in links:
        assert not {".", ".."} & set(urlsplit(link).path.split("/")), link
        event_page = site.get(link).content.decode()
        shown.add(
            html_module.unescape(re.search(r'<h1>MessageEvent <span class="mono muted">(.*?)</span>', event_page)[1])
        )
    assert shown == set(ids)
    for event in result.conversation.events.all():
        assert event.event_id in html_module.unescape(site.get(event.get_absolute_url()).content.decode())
    share = ShareLink.objects.create(conversation=result.conversation)
    shared = site.get(share.get_absolute_url() + "events/?id=..").content.decode()
    assert re.search(r'<h1>MessageEvent <span class="mono muted">(.*?)</span>', shared)[1] == ".."


# The branch list, the diagram panel, problems


def _import_demo(name: str) -> Conversation:
    from pathlib import Path

    from eventviewer.imports.importer import import_paths

    root = Path(__file__).resolve().parents[1] / "demo" / name
    (result,) = import_paths([(next(p for p in root.iterdir() if p.is_dir()), name)])
    return result.conversation


def test_the_branch_list_says_where_each_branch_leaves_the_one_shown(site, imported):
    conversation = imported("branching-retries")
    html = site.get(conversation.get_absolute_url()).content.decode()
    rows = re.findall(r'<tr class="(selected)?">(.*?)</tr>', html, re.S)
    assert len(rows) == 3
    selected = [row for flag, row in rows if flag]
    assert len(selected) == 1 and "this branch" in selected[0]
    for _, row in (r for r in rows if not r[0]):
        assert re.search(r"data-anchor=\"[^\"]+\" title=\"Where it leaves the selected branch", row)
        assert "terminal: ls" in row  # its first action of its own, with its command
        assert "ends: finish result" in row


@pytest.mark.parametrize(
    ("query", "first_length"),
    [({"bsort": "length", "bdir": "desc"}, "11"), ({"bsort": "length", "bdir": "asc"}, "7")],
)
def test_the_branch_list_sorts_by_a_column_as_an_htmx_partial(site, imported, query, first_length):
    conversation = imported("branching-retries")
    response = site.get(conversation.get_absolute_url(), query, HTTP_HX_TARGET="branch-list", **HX)
    html = response.content.decode()
    assert response.status_code == 200 and "HX-Request" in response["Vary"]
    assert "<html" not in html and html.lstrip().startswith('<section class="branch-list" id="branch-list"')
    lengths = re.findall(r'<td class="num" data-label="events">(\d+)</td>', html)
    assert lengths[0] == first_length
    assert f"bsort=length&amp;bdir={'asc' if query['bdir'] == 'desc' else 'desc'}" in html  # the next click flips it


def test_each_branch_row_counts_its_own_problems_as_reading_that_branch_does(site, db):
    conversation = _import_demo("problems")
    html = site.get(conversation.get_absolute_url(), {"bsort": "problems", "bdir": "desc"}).content.decode()
    rows = re.findall(r'<tr class="(?:selected)?">(.*?)</tr>', html, re.S)
    assert len(rows) == 2
    texts = [re.sub(r"<[^>]+>", " ", row) for row in rows]
    leaves = [re.search(r'href="[^"]*\?leaf=([^&"]+)', row).group(1) for row in rows]
    for text, leaf_id in zip(texts, leaves, strict=True):
        pairing = conversation.read_path(Event.objects.get(conversation=conversation, event_id=leaf_id)).pairing
        if pairing.problem_count:
            assert f"{len(pairing.pending)} pending" in text and f"{len(pairing.mismatched)} mismatched" in text
        else:
            assert "none" in text and "pending" not in text
    assert "2 pending" in texts[0] and "3 mismatched" in texts[0]  # sorted: most problems first
    assert "none" in texts[1]


def test_a_single_branchs_row_counts_its_problems_too(site, imported):
    conversation = imported("confirmation-pending")
    html = site.get(conversation.get_absolute_url()).content.decode()
    (row,) = re.findall(r'<tr class="(?:selected)?">(.*?)</tr>', html, re.S)
    assert "2 pending" in re.sub(r"<[^>]+>", " ", row)


def test_the_branch_list_filters_and_says_when_nothing_matches(site, imported):
    conversation = imported("branching-retries")
    html = site.get(conversation.get_absolute_url(), {"bq": "wc -w"}).content.decode()
    assert len(re.findall(r'<td class="what">', html)) == 1
    html = site.get(conversation.get_absolute_url(), {"bq": "zebra"}).content.decode()
    assert "No branch matches “zebra”" in html


@pytest.mark.parametrize("query", [{"bsort": "size"}, {"bdir": "up"}, {"bpage": "0"}])
def test_a_bad_branch_list_query_is_a_400(site, imported, query):
    conversation = imported("branching-retries")
    response = site.get(conversation.get_absolute_url(), query)
    assert response.status_code == 400 and "Bad query" in response.content.decode()


def test_the_diagram_panel_has_a_hint_a_folded_legend_and_a_large_view(site, imported):
    conversation = imported("branching-retries")
    html = site.get(conversation.get_absolute_url()).content.decode()
    assert "Click a node on the highlighted branch to go to that event" in html
    legend = html[html.index('<details class="legend">') :]
    assert "mismatched observation" in legend[: legend.index("</details>")]
    assert f'href="{conversation.get_absolute_url()}diagram.svg?leaf=' in html and 'target="_blank"' in html
    svg = html[html.index("<svg") : html.index("</svg>")]
    assert "selected branch" not in svg  # the legend is no longer drawn inside the graph


def test_problems_name_their_tool_and_link_the_events_in_their_reasons(site, db):
    conversation = _import_demo("problems")
    html = site.get(conversation.get_absolute_url()).content.decode()
    start = html.index('<details class="problems">')
    problems = html[start : html.index("</details>", start)]
    assert problems.count('data-code="pending"') + problems.count('data-code="mismatched"') == 5
    assert problems.count("<li>") == 6  # and one failure
    assert "terminal" in problems
    assert "second result for action <a " in problems  # the id is a link, shortened
    assert "its only result does not match (see <a " in html


def test_the_event_page_shows_a_mismatch_and_links_its_parent(site, db):
    conversation = _import_demo("problems")
    reading = conversation.read_path(conversation.head)
    mismatched = next(iter(reading.pairing.mismatched))
    event = conversation.events.get(event_id=mismatched)
    html = site.get(f"{conversation.get_absolute_url()}events/{mismatched}/").content.decode()
    assert '<span class="badge mismatched"' in html and "(on this branch)" in html
    assert f'title="The parent event">{event.parent.event_id}</a>' in html


def test_an_event_page_gives_each_problem_the_reason_the_whole_branch_gives(site, db):
    from django.template.loader import render_to_string

    from eventviewer.scope import Scope
    from eventviewer.views.problems import Reasons

    conversation = _import_demo("problems")
    reading = conversation.read_path(conversation.head)
    reasons = Reasons.of_branch(Scope(conversation), conversation.head, reading)
    assert reading.pairing.pending and reading.pairing.mismatched
    for event_id in reading.problem_ids:
        html = site.get(f"{conversation.get_absolute_url()}events/{event_id}/").content.decode()
        note = html[html.index('<p class="problem-note">') : html.index("(on this branch)")]
        badge = "mismatched" if event_id in reading.pairing.mismatched else "pending"
        assert f">{badge}</span>" in note
        said = render_to_string("conversations/_reason.html", {"reason": reasons.of(event_id)})
        assert " ".join(said.split()) in " ".join(note.split())


def test_the_event_card_alone_is_an_htmx_partial(site, folder):
    from eventviewer.imports.importer import import_paths

    long_text = "\n".join(f"line {i}" for i in range(500))
    path = folder(
        [message("m1", None, "go"), action("a1", "m1", "c1"), observation("o1", "a1", "a1", "c1", text=long_text)]
    )
    (result,) = import_paths([(path, "t")])
    response = site.get(f"{result.conversation.get_absolute_url()}events/o1/", **HX)
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html and "HX-Request" in response["Vary"]
    assert html.lstrip().startswith('<article class="card event') and "line 499" in html


def test_a_title_is_one_line_with_inline_code_and_its_whole_text_on_hover(site, db):
    conversation = _import_demo("problems")
    html = site.get(conversation.get_absolute_url()).content.decode()
    heading = re.search(r'<h1 class="one-line" title="([^"]*)">(.*?)</h1>', html)
    assert heading[1] == conversation.title == "The test suite fails since yesterday. Find out why and fix `calc.py`."
    assert heading[2].endswith("fix <code>calc.py</code>.")
    assert "<summary>Full title</summary>" in html
    listed = site.get("/").content.decode()
    assert "fix <code>calc.py</code>" in listed and "```" not in listed


def test_a_branch_is_read_once_until_the_conversation_changes(site, db):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    conversation = _import_demo("problems")

    def reads_the_branch(url: str) -> bool:
        with CaptureQueriesContext(connection) as queries:
            assert site.get(url).status_code == 200
        return any("WITH RECURSIVE" in q["sql"] for q in queries)

    page = conversation.get_absolute_url()
    assert reads_the_branch(page)
    assert not reads_the_branch(page)
    assert not reads_the_branch(page + "?view=model")
    Conversation.objects.filter(pk=conversation.pk).update(updated_at=timezone.now())  # as an import does
    assert reads_the_branch(page)


@pytest.mark.parametrize(
    "stamp", ["0001-01-01T00:00:00", "9999-12-31T23:59:59.999999", "0001-01-01T00:00:00+23:59", "yesterday", ""]
)
def test_any_timestamp_the_import_accepts_renders_every_page(client, open_site, folder, stamp):
    from eventviewer.imports.importer import import_paths

    events = [
        message("m1", None, "hello"),
        action("a1", "m1", "c1"),
        observation("o1", "a1", "a1", "c1"),
        message("m2", "o1", "done", role="assistant"),
    ]
    events[1]["timestamp"] = stamp
    conversation = import_paths([(folder(events), "t")])[0].conversation
    share = ShareLink.objects.create(conversation=conversation)
    base = conversation.get_absolute_url()
    for url in (base, f"{base}?view=model", f"/s/{share.token}/", "/", f"{base}events/a1/", f"{base}compare/"):
        page = client.get(url)
        assert page.status_code == 200, url
        assert "hello" in page.content.decode() or url.endswith(("/a1/", "compare/"))
