"""Search inside a conversation and across the list: the full-text index (FTS5 on
SQLite, tsvector on PostgreSQL), its pages, its API, and share scope."""

from __future__ import annotations

import re

import pytest
from django.db import connection

from eventviewer.fulltext import TABLE, WORDS
from eventviewer.imports.importer import import_paths
from eventviewer.models import Conversation, ShareLink

from .conftest import action, ev, message, observation

pytestmark = pytest.mark.django_db


def events() -> list[dict]:
    """A user asks; the agent runs pytest twice on HEAD's branch and once on a side branch."""
    return [
        message("m1", None, "Please fix the flaky parser tests"),
        action("a1", "m1", "c1", action={"kind": "TerminalAction", "command": "pytest tests/test_parser.py"}),
        observation("o1", "a1", "a1", "c1", text="FAILED test_parser.py::test_quotes - AssertionError"),
        action("a2", "o1", "c2", response="r2", action={"kind": "TerminalAction", "command": "ls src"}),
        observation("o2", "a2", "a2", "c2", text="parser.py lexer.py <script>alert('x')</script>"),
        action("b1", "o1", "c3", response="r3", action={"kind": "TerminalAction", "command": "pytest -x"}),
        observation("b2", "b1", "b1", "c3", text="parser parser parser: quotes quotes failed again"),
        ev("e1", "AgentErrorEvent", "o2", tool_name="frobnicate", tool_call_id="c9", error="Tool frobnicate not found"),
    ]


@pytest.fixture
def conversation(folder, open_site) -> Conversation:
    path = folder(events(), {"leaf_event_id": "e1"}, conversation_id="ab" * 16)
    return import_paths([(path, "test")])[0].conversation


def index_rows(table: str = TABLE) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM {table}")
        return cursor.fetchone()[0]


def test_import_fills_the_index_and_deleting_empties_it(conversation):
    assert index_rows() == len(events())
    if connection.vendor == "postgresql":
        assert index_rows(WORDS) == 1  # one run of words: the list's search
    conversation.delete_in_batches()
    assert index_rows() == 0
    if connection.vendor == "postgresql":
        assert index_rows(WORDS) == 0


def test_search_finds_words_phrases_and_prefixes(client, conversation):
    api = "/api/conversations/" + conversation.conversation_id + "/search/"
    ids = lambda q: [r["event_id"] for r in client.get(api, {"q": q}).json()["results"]]  # noqa: E731
    assert set(ids("pytest")) == {"a1", "b1"}
    assert ids('"no such"') == []
    assert ids('"tool frobnicate not found"') == ["e1"]
    assert set(ids("frob*")) == {"e1"}
    assert set(ids("test_parser")) == {"a1", "o1"}  # punctuation separates words: test parser
    assert ids("quotes AssertionError") == ["o1"]


def test_the_api_answers_with_the_query_total_and_results(client, conversation):
    body = client.get(f"/api/conversations/{conversation.conversation_id}/search/", {"q": "parser"}).json()
    assert body["query"] == "parser" and body["total"] == len(body["results"]) >= 3
    first = body["results"][0]
    assert set(first) >= {"event_id", "leaf", "kind", "snippet"}


def test_ranking_puts_the_event_saying_it_most_first(client, conversation):
    body = client.get(f"/api/conversations/{conversation.conversation_id}/search/", {"q": "parser quotes"}).json()
    assert [r["event_id"] for r in body["results"]][0] == "b2"


def test_a_result_opens_its_branch_at_the_event_with_the_words_marked(client, conversation):
    page = client.get(f"/c/{conversation.conversation_id}/search/", {"q": "pytest"})
    html = page.content.decode()
    links = dict(re.findall(r'href="([^"]+)" data-search-result>([^<]+)<', html))
    hrefs = sorted(links)
    assert any("leaf=e1&amp;at=a1&amp;hl=pytest#event-a1" in h for h in hrefs)
    assert any("leaf=b2&amp;at=b1&amp;hl=pytest#event-b1" in h for h in hrefs)
    assert html.index("leaf=e1") < html.index("leaf=b2")  # HEAD's branch first
    assert "<mark>pytest</mark>" in html


def test_a_hostile_snippet_stays_text(client, conversation):
    html = client.get(f"/c/{conversation.conversation_id}/search/", {"q": "script"}).content.decode()
    assert "<script>alert" not in html
    assert "&lt;<mark>script</mark>&gt;alert(&#x27;x&#x27;)&lt;/<mark>script</mark>&gt;" in html
    api = client.get(f"/api/conversations/{conversation.conversation_id}/search/", {"q": "script"}).json()
    assert api["results"][0]["snippet"].endswith("parser.py lexer.py <script>alert('x')</script>")


@pytest.mark.parametrize("q", ['"unclosed', "py*test", "*", "", "!!!"])
def test_bad_syntax_is_a_400_with_the_reason(client, conversation, q):
    page = client.get(f"/c/{conversation.conversation_id}/search/", {"q": q})
    if not q:  # the empty search page: just the box
        assert page.status_code == 200
    else:
        assert page.status_code == 400
        assert "Bad query: q:" in page.content.decode()
    api = client.get(f"/api/conversations/{conversation.conversation_id}/search/", {"q": q})
    assert api.status_code == 400 and api.json()["error"].startswith("Bad query: q:")


def test_filters_kind_tool_failures_and_this_branch(client, conversation):
    api = f"/api/conversations/{conversation.conversation_id}/search/"

    def ids(**params):
        return sorted(r["event_id"] for r in client.get(api, params).json()["results"])

    assert ids(q="parser", kind="ObservationEvent") == ["b2", "o1", "o2"]
    assert ids(q="frobnicate", tool="terminal") == []
    assert ids(q="parser", problems="1") == []
    assert ids(q="frobnicate", problems="1") == ["e1"]
    assert ids(q="parser", leaf="e1", branch="this") == ["a1", "m1", "o1", "o2"]
    assert client.get(api, {"q": "x", "branch": "this"}).status_code == 400


def test_a_share_link_searches_only_its_conversation(client, conversation, folder):
    other = import_paths([(folder([message("z1", None, "pytest elsewhere")], conversation_id="cd" * 16), "t")])
    share = ShareLink.objects.create(conversation=other[0].conversation)
    html = client.get(f"/s/{share.token}/search/", {"q": "pytest"}).content.decode()
    assert "at=z1" in html and "at=a1" not in html
    assert f"/s/{share.token}/?leaf=z1" in html  # the links stay under the share link


def test_the_conversation_page_has_a_search_box(client, conversation):
    html = client.get(f"/c/{conversation.conversation_id}/").content.decode()
    assert f'action="/c/{conversation.conversation_id}/search/"' in html and "data-search-box" in html


def test_the_list_searches_event_text_through_the_index(client, conversation, folder):
    import_paths([(folder([message("z1", None, "something else")], conversation_id="cd" * 16), "t")])
    html = client.get("/", {"q": "frobnicate"}).content.decode()
    assert conversation.conversation_id[:12] in html and "cdcdcdcdcdcd" not in html
    assert client.get("/", {"q": '"open'}).status_code == 400


def test_the_list_filters_by_status_model_agent_problems_failures_and_date(client, conversation, folder):
    import_paths(
        [(folder([message("z1", None, "calm")], {"execution_status": "finished"}, conversation_id="cd" * 16), "t")]
    )
    Conversation.objects.filter(conversation_id="cd" * 16).update(model="gpt-x", agent_kind="Agent")

    def listed(**params):
        html = client.get("/", params).content.decode()
        assert client.get("/", params).status_code == 200
        return {cid for cid in ("ab" * 16, "cd" * 16) if cid[:12] in html}

    assert listed() == {"ab" * 16, "cd" * 16}
    assert listed(status="finished") == {"cd" * 16}
    assert listed(model="gpt-x") == {"cd" * 16}
    assert listed(agent="Agent", q="calm") == {"cd" * 16}
    assert listed(failures="1") == {"ab" * 16}  # its agent error
    assert listed(**{"from": "2000-01-01", "to": "2000-01-02"}) == set()
    assert listed(**{"from": "2000-01-01"}) == {"ab" * 16, "cd" * 16}
    assert listed(sort="failures", dir="desc", failures="1") == {"ab" * 16}
    assert client.get("/", {"from": "2001-01-02", "to": "2001-01-01"}).status_code == 400
    assert client.get("/", {"from": "yesterday"}).status_code == 400
    # Paging and sorting keep the filters.
    html = client.get("/", {"status": "finished", "sort": "title"}).content.decode()
    assert "status=finished&amp;sort=events" in html


@pytest.mark.django_db(transaction=True)
def test_conversations_imported_before_are_indexed_by_the_migration(client, open_site, migrate):
    import orjson

    from eventviewer.imports.packing import pack

    old = migrate(("eventviewer", "0006_bounds"))
    conversation = old.get_model("eventviewer", "Conversation").objects.create(conversation_id="e" * 32)
    OldEvent, OldPayload = old.get_model("eventviewer", "Event"), old.get_model("eventviewer", "EventPayload")
    for seq, data in enumerate(events()[:3]):
        event = OldEvent.objects.create(
            conversation=conversation, event_id=data["id"], seq=seq, depth=seq, kind=data["kind"], digest="d"
        )
        OldPayload.objects.create(event=event, packed=pack(orjson.dumps(data)))
    migrate(("eventviewer", "0007_search"))
    migrate()  # the views read today's columns
    body = client.get(f"/api/conversations/{'e' * 32}/search/", {"q": "AssertionError"}).json()
    assert [r["event_id"] for r in body["results"]] == ["o1"]


WORDY = [
    "FAILED test_parser.py::test_quotes - AssertionError",
    "École STRASSE straße Ärger 3.5 v1.2 src/app.py CamelCase x_y",
    "a b a b a " * 200,  # more positions for a word than PostgreSQL keeps
    "short " + "z" * 3000 + " long",  # a word PostgreSQL does not index
    "",
    "--- ***",
]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's index")
@pytest.mark.parametrize("text", WORDY)
def test_the_import_splits_words_as_postgresql_did(text):
    """The words the import makes for PostgreSQL's index (``tsvector``) are the ones
    PostgreSQL made itself before migration 0010, positions included."""
    from eventviewer.trajectory.query import tsvector

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT to_tsvector('simple', regexp_replace(%s, '[^[:alnum:]]+', ' ', 'g'))::text = %s::tsvector::text",
            [text, tsvector(text)],
        )
        assert cursor.fetchone()[0]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's index")
@pytest.mark.django_db(transaction=True)
def test_the_index_words_migration_keeps_what_was_indexed_both_ways(client, open_site, folder, migrate):
    def generated() -> bool:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT attgenerated FROM pg_attribute WHERE attrelid = %s::regclass AND attname = 'tsv'", [TABLE]
            )
            return cursor.fetchone()[0] == "s"

    def found(conversation_id: str, q: str) -> list[str]:
        answer = client.get(f"/api/conversations/{conversation_id}/search/", {"q": q}).json()
        return [r["event_id"] for r in answer["results"]]

    import_paths([(folder(events(), {"leaf_event_id": "e1"}, conversation_id="ab" * 16), "test")])
    assert not generated()
    migrate(("eventviewer", "0009_anchors"))  # back: PostgreSQL makes the words again, from the text
    assert generated()
    migrate()
    assert not generated()
    assert found("ab" * 16, '"flaky parser"') == ["m1"]
    import_paths([(folder([message("n1", None, "another flaky run")], conversation_id="cd" * 16), "test")])
    assert found("cd" * 16, "flaky") == ["n1"]
    listed = client.get("/", {"q": "flaky"}).content.decode()
    assert "Please fix the flaky parser tests" in listed and "another flaky run" in listed


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's index")
def test_a_run_of_words_spans_the_imports_batches_and_the_list_finds_every_part(client, open_site, folder):
    """The list's search reads runs of a conversation's words (``WORDS``): one import
    gathers them across its batches of rows, so a long conversation of short events
    makes one run, and a word from its first batch and one from its last are both found."""
    from eventviewer.imports.importer import BATCH_SIZE

    count = BATCH_SIZE * 2 + 10
    log = [message("m0", None, "zebrafirst opens")]
    log += [message(f"m{n}", f"m{n - 1}", f"step {n}") for n in range(1, count - 1)]
    log.append(message("last", f"m{count - 2}", "yakfinal closes"))
    import_paths([(folder(log, conversation_id="ef" * 16), "test")])
    assert index_rows() == count
    assert index_rows(WORDS) == 1
    for word, text in (("zebrafirst", "zebrafirst opens"), ("yakfinal", "zebrafirst opens")):
        listed = client.get("/", {"q": word}).content.decode()
        assert text in listed  # the conversation, titled by its first message


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's FTS5 index")
@pytest.mark.django_db(transaction=True)
def test_the_merges_migration_sets_how_fts5_merges_both_ways(client, open_site, folder, migrate):
    def merged_at_once() -> int:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT v FROM {TABLE}_config WHERE k = 'automerge'")
            row = cursor.fetchone()
        return row[0] if row else 4  # FTS5's default when never set

    assert merged_at_once() == 8
    migrate(("eventviewer", "0010_index_words"))
    assert merged_at_once() == 4
    migrate()
    assert merged_at_once() == 8
    import_paths([(folder(events(), {"leaf_event_id": "e1"}, conversation_id="ab" * 16), "test")])
    answer = client.get(f"/api/conversations/{'ab' * 16}/search/", {"q": '"flaky parser"'}).json()
    assert [r["event_id"] for r in answer["results"]] == ["m1"]


def test_results_come_best_first_and_equal_matches_in_the_order_they_happened(client, folder, open_site):
    """The events the word fills most come first; those it matches alike keep the log's
    order, with a filter and without one (which PostgreSQL answers without the events' rows)."""
    log = [message("m1", None, "start")]
    log += [message(f"t{n}", f"m{n}" if n == 1 else f"t{n - 1}", "retry once then stop") for n in range(1, 6)]
    log.append(message("best", "t5", "retry retry retry"))
    import_paths([(folder(log, conversation_id="ab" * 16), "test")])
    api = f"/api/conversations/{'ab' * 16}/search/"
    found = lambda **params: [r["event_id"] for r in client.get(api, params).json()["results"]]  # noqa: E731
    assert found(q="retry") == ["best", "t1", "t2", "t3", "t4", "t5"]
    assert found(q="retry", kind="MessageEvent") == ["best", "t1", "t2", "t3", "t4", "t5"]


def test_an_emoji_or_a_symbol_is_found_like_a_word(client, folder, open_site):
    events = [
        message("m1", None, "Ship it 🚀 when the tests are ✅"),
        message("m2", "m1", "Shipped🚀, cost 5€ → next", role="assistant"),
        message("m3", "m2", "nothing of the kind"),
    ]
    conversation = import_paths([(folder(events, conversation_id="ef" * 16), "t")])[0].conversation
    api = f"/api/conversations/{conversation.conversation_id}/search/"
    answer = client.get(api, {"q": "🚀"})
    assert answer.status_code == 200
    assert sorted(r["event_id"] for r in answer.json()["results"]) == ["m1", "m2"]
    assert [r["event_id"] for r in client.get(api, {"q": '"it 🚀"'}).json()["results"]] == ["m1"]
    assert [r["event_id"] for r in client.get(api, {"q": "€ →"}).json()["results"]] == ["m2"]
    assert client.get(api, {"q": "✅ 🚀"}).json()["results"][0]["event_id"] == "m1"
    page = client.get(f"/c/{conversation.conversation_id}/search/", {"q": "🚀"})
    assert page.status_code == 200 and "<mark>🚀</mark>" in page.content.decode()
    listed = client.get("/", {"q": "✅"})
    assert listed.status_code == 200 and conversation.conversation_id[:12] in listed.content.decode()


@pytest.mark.django_db(transaction=True)
def test_events_indexed_before_symbols_were_words_are_found_by_them_after_the_migration(
    client, open_site, folder, migrate
):
    events = [message("m1", None, "Ship it 🚀 now"), message("m2", "m1", "plain words only")]
    conversation = import_paths([(folder(events, conversation_id="ef" * 16), "t")])[0].conversation
    with connection.cursor() as cursor:  # the index as it was written before: no symbol in it
        if connection.vendor == "postgresql":
            cursor.execute(
                f"UPDATE {TABLE} SET tsv = to_tsvector('simple', regexp_replace(body, '[^[:alnum:]]+', ' ', 'g'))"
                f" || ('_c' || conversation_id)::tsvector"
            )
            cursor.execute(f"DELETE FROM {WORDS}")
            cursor.execute(
                f"INSERT INTO {WORDS} (conversation_id, tsv) SELECT conversation_id, strip(tsv) FROM {TABLE}"
            )
        else:
            cursor.execute(f"SELECT rowid, conversation FROM {TABLE}")
            for pk, owner in cursor.fetchall():
                text = next(e for e in conversation.events.filter(pk=pk)).summary
                cursor.execute(f"DELETE FROM {TABLE} WHERE rowid = %s", [pk])
                cursor.execute(
                    f"INSERT INTO {TABLE} (rowid, body, conversation) VALUES (%s, %s, %s)", [pk, text, owner]
                )
    api = f"/api/conversations/{conversation.conversation_id}/search/"
    assert client.get(api, {"q": "🚀"}).json()["results"] == []
    migrate(("eventviewer", "0011_search_merges"))
    migrate()
    assert [r["event_id"] for r in client.get(api, {"q": "🚀"}).json()["results"]] == ["m1"]
    assert [r["event_id"] for r in client.get(api, {"q": "plain"}).json()["results"]] == ["m2"]
    assert conversation.conversation_id[:12] in client.get("/", {"q": "🚀 ship"}).content.decode()


# --- bounded (issue 22.1): a prefix expands over the index's vocabulary -------------------


def _search_urls(conversation: Conversation) -> list[str]:
    share = ShareLink.objects.create(conversation=conversation)
    cid = conversation.conversation_id
    return ["/", f"/c/{cid}/search/", f"/s/{share.token}/search/", f"/api/conversations/{cid}/search/"]


@pytest.mark.parametrize(
    "q, limit",
    [
        ("w*", "a prefix needs at least 3 letters or digits before the *"),
        ("pytest w*", "a prefix needs at least 3 letters or digits before the *"),
        ('"parser qu"*', "a prefix needs at least 3 letters or digits before the *"),
        ("pyt* par* quo* fai* lex*", "the query has 5 prefixes (word*); at most 4"),
        (" ".join(["pyt*"] * 16), "the query has 16 prefixes (word*); at most 4"),
    ],
)
def test_a_prefix_too_short_or_too_many_is_a_400_naming_the_limit(client, conversation, q, limit):
    for url in _search_urls(conversation):
        page = client.get(url, {"q": q})
        assert page.status_code == 400, url
        assert limit in page.content.decode(), url


def test_prefixes_within_the_limits_are_searched(client, conversation):
    for url in _search_urls(conversation):
        assert client.get(url, {"q": "pyt* par* quo* fai*"}).status_code == 200, url


def test_a_search_past_its_time_budget_is_a_400_naming_the_setting(client, conversation, settings):
    settings.EVENTVIEWER_SEARCH_MS = 0
    for url in _search_urls(conversation):
        page = client.get(url, {"q": "parser"})
        assert page.status_code == 400, url
        assert "longer than its limit of 0 ms (EVENTVIEWER_SEARCH_MS)" in page.content.decode(), url
    assert client.get("/").status_code == 200  # no search: no budget


def test_the_budget_interrupts_a_statement_already_running(conversation):
    from eventviewer import fulltext

    # Counting to a hundred million takes SQLite tens of seconds, PostgreSQL seconds.
    slow = (
        "SELECT pg_sleep(30)"
        if connection.vendor == "postgresql"
        else "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000000) "
        "SELECT count(*) FROM n"
    )
    with pytest.raises(fulltext.OutOfTime, match="EVENTVIEWER_SEARCH_MS"):
        with fulltext.budget(50), connection.cursor() as cursor:
            cursor.execute(slow)
    with connection.cursor() as cursor:  # the connection goes on, without the budget
        cursor.execute("SELECT 1")
        assert cursor.fetchone() == (1,)


@pytest.mark.parametrize(
    "query, reason",
    [
        ({"q": '"unclosed'}, "a quotation mark is not closed"),
        ({"q": "parser", "branch": "this"}, "branch=this needs the branch"),
        ({"q": "parser", "kind": "k" * 150}, "kind: Ensure this value has at most 100 characters"),
    ],
)
def test_a_refused_search_is_the_search_page_with_the_reason_and_the_box(client, conversation, query, reason):
    page = client.get(f"/c/{conversation.conversation_id}/search/", query)
    html = page.content.decode()
    assert page.status_code == 400
    assert re.search(
        r'<p id="search-refused" class="search-refused error" role="alert">[^<]*' + re.escape(reason), html
    )
    box = re.search(r'<input type="search" name="q" value="([^"]*)"', html).group(1)
    assert box == query["q"].replace('"', "&quot;")
    assert f'href="/c/{conversation.conversation_id}/"' in html  # back to the conversation


def test_a_refused_list_search_says_why_next_to_the_box(client, conversation):
    page = client.get("/", {"q": '"unclosed phrase'})
    html = page.content.decode()
    assert page.status_code == 400
    assert 'value="&quot;unclosed phrase"' in html
    assert re.search(r'id="search-refused"[^>]*role="alert">Bad query: q: a quotation mark is not closed', html)
    assert "<tbody>" not in html  # no rows, as if everything matched
    partial = client.get("/", {"q": '"unclosed phrase'}, headers={"HX-Request": "true"})
    assert partial.status_code == 400 and "<html" not in partial.content.decode()
    assert (
        'id="search-refused" class="search-refused error" role="alert" hx-swap-oob="true"' in partial.content.decode()
    )
    typing = client.get("/", {"q": '"unclosed'}, headers={"HX-Request": "true", "X-Eventviewer-Typing": "1"})
    assert typing.status_code == 204  # half typed: no error, the rows stay
    assert 'id="search-refused"' in client.get("/").content.decode()  # the place for a reason, hidden
