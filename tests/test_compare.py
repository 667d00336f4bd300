"""Comparing two branches: of one conversation, of a fork pair of conversations, under
share links; opened from the branch list and from the diagram."""

from __future__ import annotations

import json
import re
import shutil
import uuid

import pytest

from eventviewer.imports.importer import import_paths
from eventviewer.models import Conversation, ShareLink

from .conftest import action, ev, fixture_folder, message, observation

pytestmark = pytest.mark.django_db


@pytest.fixture
def branching(imported, open_site) -> Conversation:
    return imported("branching-retries")


def leaves(conversation: Conversation) -> dict[str, str]:
    """Leaf id -> the first user message of its continuation, for the three branches."""
    return {n["id"]: n for n in conversation.skeleton["nodes"] if n["leaf"]}


FIRST, SECOND, THIRD = (
    "2a608ce4-8597-43e0-8c6f-7d3df25bb335",  # ls -1, create count.py, finish
    "29074545-e135-4ecf-9d2e-6d586ce5cc98",  # (HEAD) "check whether data.txt exists": ls -la, finish
    "54478077-49fa-4f43-9a3a-417c932bf54a",  # after ls -1, "prefer a shell script": echo > count.sh, cat, finish
)


def test_two_branches_show_the_shared_events_folded_and_the_rest_aligned(client, branching):
    assert set(leaves(branching)) == {FIRST, SECOND, THIRD}
    response = client.get(f"/c/{branching.conversation_id}/compare/", {"a": FIRST, "b": THIRD})
    assert response.status_code == 200
    html = response.content.decode()
    # The first branch and the third share the system prompt, the user message and ls -1 with its result.
    assert "The same 4 events, up to" in html and "9034920b-257a" in html
    assert "1 step alike" not in html  # shared events are not steps
    # A: create count.py, finish. B: a user message, echo > count.sh, cat count.sh, finish.
    assert "1 changed" in html and "1 only on A" in html and "3 only on B" in html
    rows = re.findall(r'class="compare-row row-(\w+)"', html)
    assert rows == ["only_a", "only_b", "only_b", "only_b", "changed"]
    # Each side: outcome, turns, tool calls, tokens.
    assert html.count("outcome-finished") == 2
    plain = re.sub(r"<[^>]+>", "", html)  # "turns" is explained on hover: it counts the model's responses
    assert "After the shared events: 4 events · 2 turns · 2 tool calls" in plain
    assert "After the shared events: 7 events · 3 turns · 3 tool calls" in plain
    # The files each side changed.
    assert "/workspace/count.py" in html and "/workspace/count.sh" in html


def test_aligned_steps_that_differ_show_their_differences_as_diffs(client, branching):
    html = client.get(f"/c/{branching.conversation_id}/compare/", {"a": FIRST, "b": SECOND}).content.decode()
    assert "The same 2 events, up to" in html
    # B's user message first, then ls -1 against ls -la: one call each, aligned, its
    # arguments and output as diffs; A's create count.py alone; both finish, differently.
    assert re.findall(r'class="compare-row row-(\w+)"', html) == ["only_b", "changed", "only_a", "changed"]
    assert '<span class="diff-line diff-del">- &quot;command&quot;: &quot;ls -1&quot;,</span>' in html
    assert '<span class="diff-line diff-add">+ &quot;command&quot;: &quot;ls -la&quot;,</span>' in html
    assert "Output differ" in html and '<span class="diff-line diff-add">+total 12</span>' in html


def test_the_same_branch_twice_has_nothing_to_compare(client, branching):
    html = client.get(f"/c/{branching.conversation_id}/compare/", {"a": FIRST, "b": FIRST}).content.decode()
    assert "The same 8 events, up to" in html and "the two branches are the same" in html


def test_the_branch_list_opens_compare_with_head(client, branching):
    html = client.get(branching.get_absolute_url()).content.decode()
    for leaf in (FIRST, THIRD):
        assert f'href="/c/{branching.conversation_id}/compare/?a={leaf}&amp;b={SECOND}"' in html
    assert f"compare/?a={SECOND}&amp;b={SECOND}" not in html
    assert f'href="/c/{branching.conversation_id}/compare/?a={SECOND}"' in html  # "Compare with…"
    # On another branch, its own row leaves comparing with HEAD to the branch bar.
    html = client.get(branching.get_absolute_url(), {"leaf": FIRST}).content.decode()
    assert html.count(f'href="/c/{branching.conversation_id}/compare/?a={FIRST}&amp;b={SECOND}"') == 1
    assert f'href="/c/{branching.conversation_id}/compare/?a={THIRD}&amp;b={SECOND}"' in html


def test_the_diagram_picks_two_leaves(client, branching):
    base = f"/c/{branching.conversation_id}/compare/"
    first = diagram_of(client.get(base).content.decode())
    assert f'href="{base}?a={THIRD}"' in first
    second = client.get(base, {"a": THIRD}).content.decode()
    assert "Now pick <b>B</b>" in second
    for leaf in (FIRST, SECOND):
        assert f'href="{base}?a={THIRD}&amp;b={leaf}"' in diagram_of(second)


def diagram_of(html: str) -> str:
    assert "Pick <b>" in html or "Now pick <b>" in html
    return html[html.index("<svg") : html.index("</svg>")]


def test_a_compare_page_is_an_htmx_partial_of_itself(client, branching):
    url = f"/c/{branching.conversation_id}/compare/?a={FIRST}&b={THIRD}"
    response = client.get(url, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html and 'id="comparison"' in html
    assert "HX-Request" in response["Vary"]


@pytest.mark.parametrize(
    ("query", "status", "text"),
    [
        ({"a": "nope", "b": FIRST}, 404, "has no event"),
        ({"a": FIRST, "b": FIRST, "page": "0"}, 400, "page"),
        ({"a": FIRST, "b": FIRST, "page": "2"}, 404, "no page 2"),
        ({"a": FIRST, "b": "0" * 32 + ":x"}, 404, "There is no conversation"),
        ({"a": "x\x01", "b": FIRST}, 400, "control characters"),
    ],
)
def test_a_bad_comparison_says_what_is_wrong(client, branching, query, status, text):
    response = client.get(f"/c/{branching.conversation_id}/compare/", query)
    assert response.status_code == status and text in response.content.decode()


def test_comparing_across_conversations_needs_each_conversation_named(client, open_site):
    response = client.get("/compare/", {"a": FIRST, "b": SECOND})
    assert response.status_code == 400 and "&lt;conversation-id&gt;:&lt;event-id&gt;" in response.content.decode()
    assert client.get("/compare/").status_code == 400


@pytest.fixture
def fork_pair(tmp_path, open_site) -> tuple[Conversation, Conversation]:
    """The `simple` fixture, and a copy of its first four events (the same files) carried on
    differently in a conversation of its own, as a fork continued elsewhere would be."""
    original = fixture_folder("simple")
    fork_id = uuid.uuid4().hex
    events = tmp_path / fork_id / "events"
    events.mkdir(parents=True)
    for path in sorted((original / "events").glob("event-0000[0-3]-*.json")):
        shutil.copy(path, events / path.name)
    parent = sorted(events.iterdir())[-1].name.split("-", 2)[2].removesuffix(".json")
    more = [
        action("f-a1", parent, "call-f1", action={"kind": "TerminalAction", "command": "cat hello.txt"}),
        observation("f-o1", "f-a1", "f-a1", "call-f1", text="hello world"),
    ]
    for seq, event in enumerate(more, start=4):
        event["timestamp"] = "2026-11-29T19:00:00"
        (events / f"event-{seq:05d}-{event['id']}.json").write_text(json.dumps(event))
    (tmp_path / fork_id / "base_state.json").write_text(json.dumps({"id": str(uuid.UUID(fork_id))}))
    (simple,) = [r.conversation for r in import_paths([(original, "simple")])]
    (fork,) = [r.conversation for r in import_paths([(tmp_path / fork_id, "fork")])]
    return simple, fork


def test_two_conversations_sharing_their_first_events_compare_from_the_fork(client, fork_pair):
    simple, fork = fork_pair
    a, b = f"{simple.conversation_id}:{simple.skeleton['head']}", f"{fork.conversation_id}:f-o1"
    for url in ("/compare/", f"/c/{simple.conversation_id}/compare/"):
        response = client.get(url, {"a": a, "b": b})
        html = response.content.decode()
        assert response.status_code == 200
        assert "The same 4 events, up to" in html and "1253424e-cf49" in html
        # simple finishes; the fork runs cat instead: one step on each side only.
        assert re.findall(r'class="compare-row row-(\w+)"', html) == ["only_a", "only_b"]
        assert "cat hello.txt" in html
        assert f'href="/c/{fork.conversation_id}/?leaf=f-o1"' in html


def test_a_fork_whose_copy_was_rewritten_still_shares_its_events_by_id(client, fork_pair, tmp_path):
    simple, fork = fork_pair
    events = [json.loads(p.read_text()) for p in sorted((fixture_folder("simple") / "events").glob("*.json"))][:3]
    events.append(message("j-m1", events[-1]["id"], "something else"))
    path = tmp_path / "rewritten.jsonl"
    path.write_text("\n".join(json.dumps(e, indent=None) for e in events))  # other bytes (spaces), the same ids
    (rewritten,) = [r.conversation for r in import_paths([(path, path.name)])]
    query = {"a": f"{simple.conversation_id}:{simple.skeleton['head']}", "b": f"{rewritten.conversation_id}:j-m1"}
    assert "The same 3 events, up to" in client.get("/compare/", query).content.decode()


def test_a_share_link_compares_within_what_it_opens(client, imported, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    branching = imported("branching-retries")
    other = imported("simple")
    share = ShareLink.objects.create(conversation=branching)
    base = f"/s/{share.token}/compare/"
    html = client.get(base, {"a": FIRST, "b": THIRD}).content.decode()
    assert "The same 4 events" in html
    assert f'href="/s/{share.token}/?leaf={FIRST}' in html and f"/c/{branching.conversation_id}/" not in html
    response = client.get(base, {"a": FIRST, "b": f"{other.conversation_id}:{other.skeleton['head']}"})
    assert response.status_code == 404 and other.title not in response.content.decode()
    assert client.get(f"/c/{branching.conversation_id}/compare/", {"a": FIRST, "b": THIRD}).status_code == 302


HOSTILE = '<img src=x onerror="alert(1)"><script>alert(2)</script>'


def test_event_text_in_a_comparison_and_its_diffs_stays_text(client, folder, open_site):
    events = [
        message("m1", None, "go"),
        action("a1", "m1", "c1", action={"kind": "TerminalAction", "command": f"echo '{HOSTILE}'"}),
        observation("o1", "a1", "a1", "c1", text=HOSTILE),
        action("b1", "m1", "c2", response="r2", action={"kind": "TerminalAction", "command": "echo '<b>x</b>'"}),
        observation("p1", "b1", "b1", "c2", text="<b>x</b>"),
    ]
    (conversation,) = [r.conversation for r in import_paths([(folder(events), "hostile")])]
    html = client.get(f"/c/{conversation.conversation_id}/compare/", {"a": "o1", "b": "p1"}).content.decode()
    assert "1 changed" in html
    assert "<script>alert(2)" not in html and "<img src=x" not in html and "<b>x</b>" not in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_a_long_comparison_comes_a_page_at_a_time(client, branching, monkeypatch):
    monkeypatch.setattr("eventviewer.views.compare.ROWS_PER_PAGE", 2)
    url = f"/c/{branching.conversation_id}/compare/"
    first = client.get(url, {"a": FIRST, "b": THIRD}).content.decode()
    assert "page 1 of 3" in first and len(re.findall(r'class="compare-row ', first)) == 2
    next_url = f"{url}?a={FIRST}&amp;b={THIRD}&amp;page=2"
    assert f'href="{next_url}" hx-get="{next_url}"' in first
    third = client.get(url, {"a": FIRST, "b": THIRD, "page": "3"}, headers={"HX-Request": "true"}).content.decode()
    assert "<html" not in third and re.findall(r'class="compare-row row-(\w+)"', third) == ["changed"]
    assert f'href="{url}?a={FIRST}&amp;b={THIRD}&amp;page=2"' in third


def test_two_calls_that_failed_differently_differ(client, folder, open_site):
    def invalid(event_id: str, parent: str, call: str, error: str) -> list[dict]:
        bad = action(f"{event_id}-call", parent, call, tool="nonexistent", response=f"r-{event_id}", action=None)
        del bad["action"]
        return [
            bad,
            ev(
                event_id, "AgentErrorEvent", f"{event_id}-call", tool_name="nonexistent", tool_call_id=call, error=error
            ),
        ]

    events = [
        message("m1", None, "go"),
        *invalid("e1", "m1", "c1", "Tool 'nonexistent' not found"),
        *invalid("e2", "m1", "c2", "missing argument"),
    ]
    (conversation,) = [r.conversation for r in import_paths([(folder(events), "errors")])]
    html = client.get(f"/c/{conversation.conversation_id}/compare/", {"a": "e1", "b": "e2"}).content.decode()
    assert re.findall(r'class="compare-row row-(\w+)"', html) == ["changed"]
    assert '<span class="diff-line diff-del">-Tool &#x27;nonexistent&#x27; not found</span>' in html
    assert '<span class="diff-line diff-add">+missing argument</span>' in html


# --- bounded (issue 22.3): a comparison's memory ---------------------------------------------


def test_only_the_first_steps_are_aligned_and_the_page_says_what_it_left_out(client, branching, monkeypatch):
    from eventviewer.trajectory import compare

    monkeypatch.setattr(compare, "MAX_STEPS", 1)
    html = client.get(f"/c/{branching.conversation_id}/compare/", {"a": FIRST, "b": THIRD}).content.decode()
    note = " ".join(html[html.index("Only the first 1 steps") :].split())
    assert note.startswith(
        "Only the first 1 steps of each side after the shared events are compared: "
        "the 2 events after them on A and 6 events after them on B are left out: open the branch to read them."
    )
    assert len(re.findall(r'class="compare-row row-(\w+)"', html)) <= 2


def test_a_branch_longer_than_compare_reads_is_a_400_naming_the_setting(client, branching, settings):
    settings.EVENTVIEWER_COMPARE_MAX_EVENTS = 5
    page = client.get(f"/c/{branching.conversation_id}/compare/", {"a": FIRST, "b": THIRD})
    assert page.status_code == 400
    assert "over the 5 that Compare reads (EVENTVIEWER_COMPARE_MAX_EVENTS)" in page.content.decode()
