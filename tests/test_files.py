"""The Files tab, and what ran on other branches: a branch is not a snapshot of the workspace."""

from __future__ import annotations

import re

import pytest

from eventviewer.imports.importer import import_paths
from eventviewer.imports.packing import pack
from eventviewer.models import Conversation, Event, EventPayload, ShareLink
from eventviewer.trajectory import files

from .conftest import action, ev, message

pytestmark = pytest.mark.django_db


def at(seconds: int) -> str:
    return f"2026-01-01T00:00:{seconds:02d}"


def editor(
    event_id: str, parent: str, call: str, command: str, path: str, old: str | None, new: str, when: int
) -> list[dict]:
    """A file_editor call and its result, as the SDK writes them."""
    arguments = {"kind": "FileEditorAction", "command": command, "path": path}
    call_event = action(f"{event_id}-call", parent, call, tool="file_editor", action=arguments)
    result = ev(
        event_id,
        "ObservationEvent",
        f"{event_id}-call",
        source="environment",
        action_id=f"{event_id}-call",
        tool_call_id=call,
        tool_name="file_editor",
        observation={
            "kind": "FileEditorObservation",
            "command": command,
            "path": path,
            "prev_exist": old is not None,
            "old_content": old,
            "new_content": new,
            "is_error": False,
            "content": [{"type": "text", "text": "done"}],
        },
    )
    call_event["timestamp"] = result["timestamp"] = at(when)
    return [call_event, result]


def terminal(event_id: str, parent: str, call: str, command: str, when: int) -> list[dict]:
    call_event = action(f"{event_id}-call", parent, call, action={"kind": "TerminalAction", "command": command})
    result = ev(
        event_id,
        "ObservationEvent",
        f"{event_id}-call",
        source="environment",
        action_id=f"{event_id}-call",
        tool_call_id=call,
        tool_name="terminal",
        observation={
            "kind": "TerminalObservation",
            "command": command,
            "exit_code": 0,
            "content": [{"type": "text", "text": ""}],
            "metadata": {"working_dir": "/workspace"},
        },
    )
    call_event["timestamp"] = result["timestamp"] = at(when)
    return [call_event, result]


@pytest.fixture
def forked(folder, open_site) -> Conversation:
    """A user message and an `ls`; then, from the `ls`, an attempt that created a.py, ran
    `make` and appended to log.txt; then, later, the user went back to the `ls` and asked
    again: the second attempt (HEAD) created b.py and edited it."""
    start = message("m1", None, "go")
    start["timestamp"] = at(0)
    events = [start, *terminal("ls", "m1", "c0", "ls", 1)]
    events += editor("a-py", "ls", "c1", "create", "/workspace/a.py", None, "print('a')\n", 2)
    events += terminal("make", "a-py", "c2", "make", 3)
    events += terminal("log", "make", "c3", "echo done >> log.txt", 4)
    again = message("m2", "ls", "again, differently")
    again["timestamp"] = at(10)
    events += [again, *editor("b-py", "m2", "c4", "create", "/workspace/b.py", None, "x = 1\n", 11)]
    events += editor("b-py-2", "b-py", "c5", "str_replace", "/workspace/b.py", "x = 1\n", "x = 2\n", 12)
    (result,) = import_paths([(folder(events, {"leaf_event_id": "b-py-2"}), "forked")])
    return result.conversation


def test_the_effect_of_each_result_is_stored_at_import(forked):
    effects = dict(forked.events.exclude(effect="").values_list("event_id", "effect"))
    assert effects == {"a-py": "edit", "make": "command", "log": "edit", "b-py": "edit", "b-py-2": "edit"}


def test_the_files_tab_lists_each_file_with_its_changes_as_diffs_linked_to_their_events(client, forked):
    response = client.get(f"/c/{forked.conversation_id}/files/")
    html = response.content.decode()
    assert response.status_code == 200
    assert re.findall(r'class="mono file-path">([^<]*)<', html) == ["/workspace/b.py"]
    assert '<span class="file-status file-created">created</span>' in html
    assert (
        '<span class="diff-line diff-del">-x = 1</span>' in html
        and '<span class="diff-line diff-add">+x = 2</span>' in html
    )
    base = f"/c/{forked.conversation_id}/"
    assert f'href="{base}?leaf=b-py-2&amp;at=b-py#event-b-py"' in html
    assert f'href="{base}?leaf=b-py-2&amp;at=b-py-2#event-b-py-2"' in html


def test_edits_and_commands_on_another_branch_after_the_fork_are_listed_at_the_fork(client, forked):
    html = client.get(f"/c/{forked.conversation_id}/files/").content.decode()
    assert 'id="drift-ls"' in html
    assert (
        "2 file edits and 1 command on other branches ran after this point; the workspace may not match this branch"
        in html
    )
    for event_id, label in (
        ("a-py", "create /workspace/a.py"),
        ("make", "make"),
        ("log", "echo done &gt;&gt; log.txt"),
    ):
        assert f'href="/c/{forked.conversation_id}/events/{event_id}/"' in html and f"<code>{label}</code>" in html


def test_the_branch_page_says_so_at_the_fork_point(client, forked):
    html = client.get(f"/c/{forked.conversation_id}/").content.decode()
    (note,) = re.findall(r'<p class="drift-note"[^>]*data-drift="([^"]+)"', html)
    assert note == "ls"
    turn = html[html.index('id="event-ls"') : html.index('id="event-m2"')]
    assert "2 file edits and 1 command on other branches ran after this point" in turn
    assert f'href="/c/{forked.conversation_id}/files/?leaf=b-py-2#drift-ls"' in turn
    assert "ran after this branch forked from them" in html  # in the branch bar


def test_the_other_branch_sees_the_edits_that_ran_after_it(client, forked):
    html = client.get(f"/c/{forked.conversation_id}/files/", {"leaf": "log"}).content.decode()
    assert "2 file edits on other branches ran after this point" in html and "create /workspace/b.py" in html
    assert re.findall(r'class="mono file-path">([^<]*)<', html) == ["/workspace/a.py", "/workspace/log.txt"]
    assert "<code>make</code>" in html  # a command on this branch that may have changed files


def test_a_branch_alone_has_nothing_that_ran_elsewhere(client, imported, open_site):
    conversation = imported("long-300")
    html = client.get(f"/c/{conversation.conversation_id}/files/").content.decode()
    assert "No file edits or commands on other branches ran after this branch forked from them." in html
    assert "drift-note" not in client.get(conversation.get_absolute_url()).content.decode()
    paths = re.findall(r'class="mono file-path">([^<]*)<', html)
    assert len(paths) == len(set(paths)) > 20 and "/workspace/progress.log" in paths


def test_the_fixture_edits_on_a_branch_are_its_files(imported):
    conversation = imported("long-300")
    path = conversation.read_path(conversation.head).path
    changes = conversation.file_changes(path)
    editor_results = [e for e in path if e.effect == files.EDIT and e.tool_name == "file_editor"]
    assert len([c for c in changes if c.exact]) == len(editor_results) > 40


def test_a_share_link_has_the_files_tab(client, forked, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    share = ShareLink.objects.create(conversation=forked)
    html = client.get(f"/s/{share.token}/files/").content.decode()
    assert "/workspace/b.py" in html and f"/s/{share.token}/events/a-py/" in html
    assert f"/c/{forked.conversation_id}/" not in html
    assert client.get(f"/c/{forked.conversation_id}/files/").status_code == 302


@pytest.mark.parametrize(("query", "status"), [({"leaf": "nope"}, 404), ({"leaf": "x\x00"}, 400)])
def test_a_bad_files_query_is_refused(client, forked, query, status):
    assert client.get(f"/c/{forked.conversation_id}/files/", query).status_code == status


def test_file_contents_stay_text(client, folder, open_site):
    hostile = "<script>alert(1)</script>\n"
    events = [message("m1", None, "go"), *editor("x", "m1", "c1", "create", "/w/<b>.html", None, hostile, 1)]
    (result,) = import_paths([(folder(events), "hostile")])
    html = client.get(f"/c/{result.conversation.conversation_id}/files/").content.decode()
    assert "<script>alert(1)" not in html and "+&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "/w/&lt;b&gt;.html" in html


@pytest.mark.django_db(transaction=True)
def test_conversations_imported_before_get_their_effects(migrate):
    old = migrate(("eventviewer", "0003_kinds_usage_subagents"))
    conversation = old.get_model("eventviewer", "Conversation").objects.create(conversation_id="b" * 32)
    OldEvent, OldPayload = old.get_model("eventviewer", "Event"), old.get_model("eventviewer", "EventPayload")
    import orjson

    for seq, data in enumerate(
        [*editor("e", "m", "c", "create", "/w/a", None, "a", 1), *terminal("t", "e", "c2", "ls", 2)]
    ):
        event = OldEvent.objects.create(
            conversation=conversation, event_id=data["id"], seq=seq, depth=seq, kind=data["kind"], digest="d"
        )
        OldPayload.objects.create(event=event, packed=pack(orjson.dumps(data)))
    migrate(("eventviewer", "0005_compare"))
    assert dict(Event.objects.values_list("event_id", "effect")) == {"e-call": "", "e": "edit", "t-call": "", "t": ""}
    assert EventPayload.objects.count() == 4


def test_a_long_branch_shows_its_edits_a_page_at_a_time(client, forked, monkeypatch):
    monkeypatch.setattr("eventviewer.views.files.EDITS_PER_PAGE", 1)
    url = f"/c/{forked.conversation_id}/files/"
    first = client.get(url).content.decode()
    assert "Edits 1–1 of 2 on this branch" in first and "page 1 of 2" in first
    assert re.findall(r'class="mono file-path">([^<]*)<', first) == ["/workspace/b.py"]
    assert f'href="{url}?leaf=b-py-2&amp;page=2#files"' in first
    second = client.get(url, {"leaf": "b-py-2", "page": "2"}).content.decode()
    assert "Edits 2–2 of 2" in second and '<span class="diff-line diff-add">+x = 2</span>' in second
    assert client.get(url, {"page": "3"}).status_code == 404
    assert client.get(url, {"page": "0"}).status_code == 400


def test_what_ran_elsewhere_is_listed_up_to_a_bound_and_counted_in_full(client, forked, monkeypatch):
    monkeypatch.setattr("eventviewer.views.files.LABELLED", 1)
    html = client.get(f"/c/{forked.conversation_id}/files/").content.decode()
    drift = html[html.index('id="drift"') :]
    assert "2 file edits and 1 command on other branches ran after this point" in drift
    assert drift.count("<li>") == 1 and "<code>create /workspace/a.py</code>" in drift and "… and 2 more." in drift


def test_the_listing_bound_spans_every_fork_point(client, folder, open_site, monkeypatch):
    """Two fork points, one edit after each elsewhere: with room for one, the second is only counted."""
    start = message("m1", None, "go")
    start["timestamp"] = at(0)
    events = [start, *terminal("ls1", "m1", "c1", "ls", 1), *terminal("ls2", "ls1", "c2", "ls", 2)]
    events += editor("x", "ls1", "c3", "create", "/w/x.py", None, "x\n", 3)
    events += editor("y", "ls2", "c4", "create", "/w/y.py", None, "y\n", 4)
    again = message("m2", "ls2", "again")
    again["timestamp"] = at(5)
    (result,) = import_paths([(folder([*events, again], {"leaf_event_id": "m2"}), "two-forks")])
    monkeypatch.setattr("eventviewer.views.files.LABELLED", 1)
    html = client.get(f"/c/{result.conversation.conversation_id}/files/").content.decode()
    first, second = (
        html[html.index('id="drift-ls1"') : html.index('id="drift-ls2"')],
        html[html.index('id="drift-ls2"') :],
    )
    assert "<code>create /w/x.py</code>" in first and "/w/y.py" not in second and "… and 1 more." in second


# --- bounded diffs (issue 22.2) ------------------------------------------------------------


def _big_file(distinct: int, seed: int) -> list[str]:
    """10,000 lines of ``distinct`` values: few distinct lines make difflib quadratic."""
    import random

    rng = random.Random(seed)
    return [f"value = {rng.randrange(distinct)}\n" for _ in range(10_000)]


@pytest.fixture
def big_edits(folder, open_site) -> Conversation:
    """Two branches after a message, each editing a 10,000-line file of repeated lines in
    scattered places: too costly to match within a page's budget."""
    start = message("m1", None, "go")
    start["timestamp"] = at(0)
    events = [start]
    for branch in ("x", "y"):
        old = _big_file(150, seed=len(branch) + ord(branch))
        new = list(old)
        for n in range(0, 10_000, 500):
            new[n] = f"changed on {branch} {n}\n"
        events += editor(f"{branch}1", "m1", f"c{branch}", "str_replace", "/w/big.py", "".join(old), "".join(new), 1)
    path = folder(events, {"leaf_event_id": "y1"}, conversation_id="b1" * 16)
    return import_paths([(path, "test")])[0].conversation


def _download_link(html: str) -> str:
    (href,) = re.findall(r'<a href="([^"]+)" download>Download the whole diff</a>', html)
    return href.replace("&amp;", "&")


def test_a_diff_too_costly_for_the_page_says_so_and_offers_the_whole_one(client, big_edits):
    html = client.get(f"/c/{big_edits.conversation_id}/files/", {"leaf": "x1"}).content.decode()
    assert "Its lines were not matched in time: what differs shows as replaced whole." in html
    assert "more lines of this diff not shown" in html
    href = _download_link(html)
    assert href.startswith(f"/c/{big_edits.conversation_id}/files/diff/?event=x1&file=")
    download = client.get(href)
    assert download.status_code == 200 and download["Content-Type"].startswith("text/x-diff")
    assert download["Content-Disposition"].startswith('attachment; filename="x1-_w_big.py.diff"')
    body = download.content.decode()
    assert body.startswith("--- a/w/big.py\n+++ b/w/big.py\n@@ ")
    assert body.count("\n+changed on x") == 20  # every change, matched line by line


def test_compare_bounds_its_diffs_and_offers_the_whole_ones(client, big_edits):
    html = client.get(f"/c/{big_edits.conversation_id}/compare/", {"a": "x1", "b": "y1"}).content.decode()
    assert "Its lines were not matched in time" in html
    hrefs = re.findall(r'<a href="([^"]+)" download>Download the whole diff</a>', html)
    assert {h.replace("&amp;", "&").split("&")[0] for h in hrefs} == {
        f"/c/{big_edits.conversation_id}/files/diff/?event=x1",
        f"/c/{big_edits.conversation_id}/files/diff/?event=y1",
    }


def test_the_whole_diff_under_a_share_link_stays_under_it(client, big_edits, forked, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    share = ShareLink.objects.create(conversation=big_edits)
    html = client.get(f"/s/{share.token}/files/", {"leaf": "x1"}).content.decode()
    href = _download_link(html)
    assert href.startswith(f"/s/{share.token}/files/diff/?event=x1&file=")
    assert client.get(href).status_code == 200
    other = ShareLink.objects.create(conversation=forked)
    assert client.get(href.replace(share.token, other.token)).status_code == 404  # not that link's event
    assert (
        client.get(f"/c/{big_edits.conversation_id}/files/diff/", {"event": "x1", "file": "/w/big.py"}).status_code
        == 302
    )


@pytest.mark.parametrize(
    "query, status",
    [
        ({"event": "x1", "file": "/w/other.py"}, 404),
        ({"event": "nope", "file": "/w/big.py"}, 404),
        ({"file": "/w/big.py"}, 400),
    ],
)
def test_a_whole_diff_of_nothing_is_refused(client, big_edits, query, status):
    assert client.get(f"/c/{big_edits.conversation_id}/files/diff/", query).status_code == status


# --- the Files tab reads at a glance (issue 23.22) ------------------------------------------


def test_a_short_branch_shows_its_diffs_unfolded_with_a_net_diff_per_file(client, forked):
    html = client.get(f"/c/{forked.conversation_id}/files/").content.decode()
    assert re.search(r'<li class="file">\s*<details open>', html)
    net = html[html.index('class="file-net"') : html.index("Step by step:")]
    # b.py was created as "x = 1" then edited to "x = 2": net, one file holding "x = 2".
    assert "from before its first change to after its last" in net
    assert '<span class="diff-line diff-head">--- /dev/null</span>' in net
    assert '<span class="diff-line diff-add">+x = 2</span>' in net and "x = 1" not in net


def test_a_file_changed_once_has_no_net_diff(client, forked):
    html = client.get(f"/c/{forked.conversation_id}/files/", {"leaf": "log"}).content.decode()
    assert "/workspace/a.py" in html and 'class="file-net"' not in html


def test_a_long_branch_keeps_its_files_folded(client, folder, open_site):
    start = message("m1", None, "go")
    start["timestamp"] = at(0)
    events, parent = [start], "m1"
    for n in range(11):
        events += editor(f"e{n}", parent, f"c{n}", "create", f"/w/f{n}.py", None, f"n = {n}\n", 1)
        parent = f"e{n}"
    (result,) = import_paths([(folder(events, {"leaf_event_id": parent}), "long")])
    html = client.get(f"/c/{result.conversation.conversation_id}/files/").content.decode()
    assert html.count('<li class="file">') == 11 and "<details open>" not in html


def test_an_append_shows_its_lines_without_a_hunk_header(client, forked):
    html = client.get(f"/c/{forked.conversation_id}/files/", {"leaf": "log"}).content.decode()
    assert '<span class="diff-line diff-add">+done</span>' in html
    assert "@@ +1,1 @@" not in html
