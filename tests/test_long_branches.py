"""A branch longer than EVENTVIEWER_FULL_READ_MAX is never read whole: pages show a window
read from a stretch of it (found by the events' anchors), the path API pages through it,
and what would need the whole branch is left out with a note, never guessed. Here a
branch of 3,000 events and a threshold of 1,000 stand in for a million and 200,000; what
the long-branch pages show is compared with what the same pages show read whole."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache

from eventviewer.imports.importer import import_paths
from eventviewer.models import Event
from eventviewer.trajectory.tree import anchor_depth

from .conftest import FIXTURES, SCENARIOS, SET_A2, action, message, observation

pytestmark = [pytest.mark.slow, pytest.mark.django_db]  # a 3,000-event import per test

BLOCKS = 600  # of five events: 3,001 on the main branch (depth 3,000)


def long_conversation() -> list[dict]:
    """Batches of two calls and their results, and a message, over and over; some calls
    never get a result (pending), some results name the wrong tool (mismatched), one
    answers an action of another branch; a side branch forks off block 100."""
    events = [message("m0", None, "start")]
    parent = "m0"
    for k in range(1, BLOCKS + 1):
        a, b = f"a{k}x", f"a{k}y"
        events.append(action(a, parent, f"c{k}x", response=f"r{k}"))
        events.append(action(b, a, f"c{k}y", response=f"r{k}"))
        tool = "editor" if k % 70 == 3 else "terminal"
        events.append(observation(f"o{k}x", b, a, f"c{k}x", tool=tool))
        if k % 50 == 7:  # no result for the second call
            events.append(message(f"n{k}", f"o{k}x", "nothing came back", role="assistant"))
        elif k == 300:  # the result of the side branch's action
            events.append(observation(f"o{k}y", f"o{k}x", "side-a", "side-c"))
        else:
            events.append(observation(f"o{k}y", f"o{k}x", b, f"c{k}y"))
        parent = events[-1]["id"]
        events.append(message(f"m{k}", parent, f"block {k}", role="assistant"))
        parent = f"m{k}"
        if k == 100:
            events.append(message("side-0", "m100", "try the other way"))
            events.append(action("side-a", "side-0", "side-c", response="side-r"))
    return events


@pytest.fixture
def long(folder, open_site):
    (result,) = import_paths([(folder(long_conversation()), "long")])
    return result.conversation


def whole(settings):
    settings.EVENTVIEWER_FULL_READ_MAX = 1_000_000


def long_only(settings):
    settings.EVENTVIEWER_FULL_READ_MAX = 1_000


def assert_anchors_right() -> None:
    """Every stored anchor is its event's ancestor at ``anchor_depth``."""
    rows = {
        pk: (parent, depth, anchor)
        for pk, parent, depth, anchor in Event.objects.values_list("pk", "parent_id", "depth", "anchor")
    }
    for pk, (_, depth, anchor) in rows.items():
        target = anchor_depth(depth)
        if target is None:
            assert anchor is None
            continue
        current = pk
        while rows[current][1] > target:
            current = rows[current][0]
        assert anchor == current, (pk, depth)


def test_every_anchor_is_the_ancestor_at_its_depth(long):
    assert Event.objects.order_by("-depth").values_list("depth", flat=True)[0] == 3000
    assert_anchors_right()


def test_events_written_before_their_parents_get_their_anchors_too(folder, db):
    events = [message("e0", None, "go")] + [message(f"e{i}", f"e{i - 1}", "more") for i in range(1, 1100)]
    events[1029], events[1030] = events[1030], events[1029]  # e1030 (and all below it) before e1029
    (result,) = import_paths([(folder(events), "t")])
    assert result.conversation.head_path_length == 1100
    assert_anchors_right()
    leaf = Event.objects.get(event_id="e1099")
    assert [e.event_id for e in Event.objects.on_branch(leaf, 1000, 1050)] == [f"e{d}" for d in range(1000, 1050)]


def _api(client, long, query: str) -> dict:
    response = client.get(f"/api/conversations/{long.conversation_id}/path/{query}")
    assert response.status_code == 200
    return response.json()


@pytest.mark.parametrize("leaf", ["", "m250"])  # HEAD's branch, and one ending in the middle
def test_the_path_api_pages_a_long_branch_as_the_whole_read_does(client, long, settings, leaf):
    query = f"&leaf={leaf}" if leaf else ""
    whole(settings)
    full = _api(client, long, f"?limit=10000{query}")
    assert full["whole_branch"] is True and full["pending_total"] > 2 and full["mismatched_total"] > 2
    long_only(settings)
    length = full["path_length"]
    for offset in (0, 1, 500, 1023, 1024, 1025, 2047, 2048, length - 3, length + 5):
        for limit in (1, 100, 1100):
            page = _api(client, long, f"?offset={offset}&limit={limit}{query}")
            shown = full["path"][offset : offset + limit]
            assert page["path"] == shown, (offset, limit)
            assert page["path_length"] == length and page["whole_branch"] is False
            assert page["pending_action_ids"] == [i for i in full["pending_action_ids"] if i in shown]
            assert page["mismatched_observations"] == [m for m in full["mismatched_observations"] if m["id"] in shown]
            assert (
                page["view"] is None and page["messages_total"] is None and "EVENTVIEWER_FULL_READ_MAX" in page["note"]
            )
            whole(settings)
            assert page["messages"] == _api(client, long, f"?offset={offset}&limit={limit}{query}")["messages"]
            long_only(settings)
            if leaf:  # counted at import for HEAD's branch only
                assert page["pending_total"] is None and page["mismatched_total"] is None
            else:
                assert (page["pending_total"], page["mismatched_total"]) == (
                    full["pending_total"],
                    full["mismatched_total"],
                )
            assert (page["next"] is None) == (offset + limit >= length)
    # A page walks the way the next links say, to the end.
    seen, query_next = [], f"?offset=2500&limit=200{query}"
    while query_next:
        page = _api(client, long, query_next)
        seen += page["path"]
        query_next = page["next"]
    assert seen == full["path"][2500:]


CARD = re.compile(r'<(?:li|article) class="([^"]*)" id="event-([^"]+)"')


def _cards(html: str) -> list[tuple[str, str]]:
    """(event id, problem) of every card on a page, in order."""
    found = []
    for classes, event_id in CARD.findall(html):
        problem = "pending" if "pending" in classes.split() else "mismatched" if "mismatched" in classes.split() else ""
        found.append((event_id, problem))
    return found


def _page(client, long, query: str = "", **headers) -> str:
    response = client.get(f"{long.get_absolute_url()}{query}", **headers)
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize(
    "query",
    [
        "",  # the newest turns
        "?before=a590x",  # load earlier
        "?after=a300x",  # load later
        "?at=o300y",  # around an event: a link to it
        "?at=a3x",  # near the root
        "?leaf=m400",  # another leaf
        "?leaf=m400&before=a240x",
    ],
)
def test_a_long_branch_shows_the_turns_the_whole_read_shows(client, long, settings, query):
    whole(settings)
    full = _page(client, long, query)
    long_only(settings)
    part = _page(client, long, query)
    assert _cards(part) == _cards(full) and len(_cards(part)) > 60
    assert "data-deep-note" in part and "data-deep-note" not in full
    assert "3,001 events deep" in part or "?leaf=" in query


def test_the_partials_of_a_long_branch_are_the_whole_reads(client, long, settings):
    for query in ("?before=a590x", "?after=a300x"):
        whole(settings)
        full = _page(client, long, query, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="turns")
        long_only(settings)
        part = _page(client, long, query, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="turns")
        assert _cards(part) == _cards(full) and _cards(part)
        assert re.findall(r"data-load-(?:earlier|later)", part) == re.findall(r"data-load-(?:earlier|later)", full)


PROBLEM_LINE = re.compile(r'<div class="problem-line".*?(?=<details|</div>)', re.S)


def _badges(html: str) -> list[str]:
    """The problem counts at the top of the branch."""
    return re.findall(r'<span class="badge[^"]*"[^>]*>[^<]*</span>', PROBLEM_LINE.search(html).group())


def test_a_long_branch_says_what_it_leaves_out(client, long, settings):
    whole(settings)
    full = _page(client, long)
    long_only(settings)
    part = _page(client, long)
    # HEAD's counts were counted at import: the same badges as the whole read.
    assert (
        _badges(part)
        == _badges(full)
        == [
            f'<span class="badge pending">{long.pending_count} pending</span>',
            f'<span class="badge mismatched">{long.mismatch_count} mismatched</span>',
        ]
    )
    note = re.search(r"<details class=\"deep-note\".*?</details>", part, re.S).group()
    assert "3,001 events deep" in note and "longer than the 1,000" in note
    assert "pending and mismatched counts" not in note  # HEAD's are known
    for left_out in ("turn and tool-call counts", "model's view", "timeline", "usage", "workspace drift"):
        assert left_out in note
    assert "Model's view" not in part  # the switch to it is gone
    # Another branch's counts are not known: it says so rather than show none.
    other = _page(client, long, "?leaf=m400")
    assert "pending and mismatched not counted" in other and "no pending actions" not in other
    assert (
        "pending and mismatched counts" in re.search(r"<details class=\"deep-note\".*?</details>", other, re.S).group()
    )
    # Load earlier says how many events come before, not turns it did not count.
    assert re.search(r"Load earlier turns <span class=\"muted\">\([\d,]+ earlier events\)", part)


FORK = re.compile(r'title="Where it leaves the selected branch: event ([^"]+)">([\d,]+)</a>')


@pytest.mark.parametrize("leaf", ["", "m400", "side-a"])
def test_the_branch_list_of_a_long_branch_forks_where_the_whole_read_says(client, long, settings, leaf):
    query = f"?leaf={leaf}" if leaf else ""
    whole(settings)
    full = FORK.findall(_page(client, long, query))
    long_only(settings)
    part = FORK.findall(_page(client, long, query))
    assert part == full and (full or leaf == "m400")


def test_an_event_page_deep_in_a_long_branch(client, long, settings):
    long_only(settings)
    response = client.get(f"{long.get_absolute_url()}events/a207y/")
    assert response.status_code == 200 and "no result on this branch" in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_migration_gives_events_imported_before_their_anchors(migrate, client, open_site, settings):
    old = migrate(("eventviewer", "0008_runs"))
    conversation = old.get_model("eventviewer", "Conversation").objects.create(conversation_id="d" * 32)
    OldEvent = old.get_model("eventviewer", "Event")
    parent = None
    for depth in range(2100):
        parent = OldEvent.objects.create(
            conversation=conversation,
            event_id=f"e{depth}",
            seq=depth,
            depth=depth,
            parent=parent,
            kind="MessageEvent",
            digest="d",
        )
    side = OldEvent.objects.create(
        conversation=conversation,
        event_id="side",
        seq=2100,
        depth=1100,
        parent_id=parent.pk - 1000,
        kind="MessageEvent",
        digest="d",
    )
    migrate()
    pk_at = dict(Event.objects.filter(event_id__startswith="e").values_list("depth", "pk"))
    anchors = dict(Event.objects.values_list("event_id", "anchor"))
    assert anchors["e0"] is None and anchors["e1"] == anchors["e1024"] == pk_at[0]
    assert anchors["e1025"] == anchors["e2048"] == pk_at[1024] and anchors["e2049"] == pk_at[2048]
    assert anchors["side"] == pk_at[1024]
    leaf = Event.objects.get(pk=side.pk)
    assert [e.event_id for e in Event.objects.on_branch(leaf, 1020, 1030)] == [f"e{d}" for d in range(1020, 1030)]


@pytest.mark.parametrize("event_id", ["m400", "a300x", "o300y", "m0", "side-0"])
def test_an_event_page_off_head_opens_on_the_branch_the_whole_read_picks(client, long, settings, event_id):
    side = long.events.get(event_id="side-a")
    long.head = side
    long.refresh_figures()  # HEAD on the short side branch: the long one's events are off it
    url = f"{long.get_absolute_url()}events/{event_id}/"
    whole(settings)
    full = re.findall(r"leaf=([\w-]+)", client.get(url).content.decode())  # the branch its links open
    long_only(settings)
    part = re.findall(r"leaf=([\w-]+)", client.get(url).content.decode())
    assert part == full and full
    assert set(full) == ({"side-a"} if event_id in ("m0", "side-0") else {"m600"})


def test_a_share_link_focuses_only_on_an_event_of_its_long_branch(user_client, long, settings):
    from django.urls import reverse

    long_only(settings)
    url = reverse("eventviewer:share-create", args=[long.conversation_id])
    assert user_client.post(url, {"leaf": "", "focus": "o300y", "expires": "never"}).status_code == 302
    refused = user_client.post(url, {"leaf": "", "focus": "side-a", "expires": "never"})
    assert refused.status_code == 400 and "not on the shared branch" in refused.content.decode()
    assert user_client.post(url, {"leaf": "", "focus": "nothing", "expires": "never"}).status_code == 404


PROBLEM_LINK = re.compile(r'data-problem-link="([^"]+)" data-code="([^"]+)"')
FAILURE = re.compile(r'id="event-([^"]+)" data-event="[^"]+" data-failure="([^"]+)"')


@pytest.mark.parametrize("scenario", sorted({*SCENARIOS, *SET_A2}))
def test_every_sdk_conversation_read_a_stretch_at_a_time_shows_what_the_whole_read_shows(
    client, open_site, settings, scenario
):
    """With the threshold at 1 event every branch is "too long": its window, the pairing of
    each card, its failures and the problem list must be the whole read's."""
    conversations = [r.conversation for r in import_paths([(FIXTURES / scenario, scenario)])]
    leaves = [(c, n) for c in conversations for n in c.skeleton["nodes"] if n["leaf"]]
    for conversation, node in leaves[:6]:
        query = f"?leaf={node['id']}"
        whole(settings)
        full = _page(client, conversation, query)
        settings.EVENTVIEWER_FULL_READ_MAX = 1
        part = _page(client, conversation, query)
        assert "data-deep-note" in part or node["depth"] == 0
        assert _cards(part) == _cards(full)
        assert FAILURE.findall(part) == FAILURE.findall(full)
        assert PROBLEM_LINK.findall(part) == PROBLEM_LINK.findall(full)
        # The path API's pages too, but for what needs the whole branch.
        api = f"/api/conversations/{conversation.conversation_id}/path/"
        for offset in range(0, node["depth"] + 1, 3):
            query = {"leaf": node["id"], "offset": offset, "limit": 3}
            whole(settings)
            full = client.get(api, query).json()
            settings.EVENTVIEWER_FULL_READ_MAX = 1
            part = client.get(api, query).json()
            if node["depth"] == 0:
                assert part == full
                continue
            for key in ("path", "messages", "pending_action_ids", "mismatched_observations", "next", "path_length"):
                assert part[key] == full[key], (key, offset)


def test_a_message_longer_than_a_page_reads_ahead_of_a_long_branch(client, folder, open_site, settings, monkeypatch):
    from eventviewer import api

    events = [message("u0", None, "go")] + [message(f"u{i}", f"u{i - 1}", "more") for i in range(1, 3000)]
    (result,) = import_paths([(folder(events), "t")])
    url = f"/api/conversations/{result.conversation.conversation_id}/path/"
    whole(settings)
    full = {o: client.get(url, {"offset": o, "limit": 100}).json() for o in (0, 1500)}
    assert full[0]["messages"][0]["event_count"] == 3000 and full[1500]["messages"] == []
    long_only(settings)
    for o in (0, 1500):
        assert client.get(url, {"offset": o, "limit": 100}).json()["messages"] == full[o]["messages"]
    monkeypatch.setattr(api, "READ_AHEAD_MAX", 500)  # it runs on past what a page reads: not counted
    cache.clear()  # the answers kept are the other constant's (a constant changes with a restart)
    (merged,) = client.get(url, {"offset": 0, "limit": 100}).json()["messages"]
    assert merged["event_ids"] == [f"u{i}" for i in range(100)] and merged["event_count"] is None


TURN = re.compile(r'<section class="turn.*?</section>', re.S)
WHOLE_ONLY = re.compile(
    r' data-turn="\d+"'  # its number: a stretch numbers turns by depth
    r'|<span class="turn-figures">.*?</span></span>|<span class="tag dropped".*?</span>'  # what the model was sent
)


def _turns(html: str) -> list[str]:
    """Each turn's HTML as a page shows it, but for what only a whole read knows: its
    number (a stretch numbers turns by depth), and what the model was sent (its context
    size, the events it was not sent)."""
    return [re.sub(r"\s+", " ", WHOLE_ONLY.sub("", turn)) for turn in TURN.findall(html)]


@pytest.mark.parametrize(
    ("query", "headers"),
    [
        ("", {}),
        ("?at=o300y", {}),
        ("?leaf=m400&before=a240x", {}),
        ("?before=a590x", {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "turns"}),
        ("?after=a300x", {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "turns"}),
    ],
)
def test_a_short_branch_and_a_long_one_show_the_same_turns_and_api_pages(client, long, settings, query, headers):
    """The same events read whole and a stretch at a time: the same turns, card for card
    (pairing, reasons, results, side events), and the same path API pages but for the
    figures that need the whole branch."""
    whole(settings)
    full = _page(client, long, query, **headers)
    long_only(settings)
    part = _page(client, long, query, **headers)
    assert _turns(part) == _turns(full) and len(_turns(full)) >= 30
    api = f"/api/conversations/{long.conversation_id}/path/"
    needs_whole = {"messages_total", "view_length", "view_messages_total", "view", "whole_branch", "note"}
    needs_whole |= {"view_unhandled_condensation_request"}
    for offset in (0, 1024, 2990):
        page = {"leaf": "m400" if "m400" in query else "", "offset": offset, "limit": 50}
        whole(settings)
        full_api = client.get(api, page).json()
        long_only(settings)
        part_api = client.get(api, page).json()
        if page["leaf"]:
            needs_whole |= {"pending_total", "mismatched_total"}  # counted at import for HEAD's only
        assert {k: v for k, v in part_api.items() if k not in needs_whole} == {
            k: v for k, v in full_api.items() if k not in needs_whole
        }
        assert full_api["whole_branch"] is True and part_api["whole_branch"] is False
