"""Problems and failures on a branch: every kind listed with its own mark, filtered by
``?problem=``, and the summary linking the first one."""

from __future__ import annotations

import json
import re

import pytest

from eventviewer.imports.importer import import_paths

from .conftest import action, ev, message, observation, text_of, write_folder

pytestmark = pytest.mark.django_db


@pytest.fixture
def conversation(folder, open_site):
    exit_1 = {"kind": "TerminalObservation", "content": [{"type": "text", "text": "1 failed"}], "exit_code": 1}
    events = [
        message("m1", None, "fix it"),
        action("a1", "m1", "c1", action={"kind": "TerminalAction", "command": "pytest"}),
        {**observation("o1", "a1", "a1", "c1"), "observation": exit_1},
        ev("e1", "ConversationErrorEvent", "o1", code="LLMError", detail="rate limited"),
        action("a2", "e1", "c3", response="r2"),  # pending
    ]
    return import_paths([(folder(events, {"leaf_event_id": "a2"}), "t")])[0].conversation


def listed(html: str) -> list[tuple[str, str]]:
    start = html.index('<details class="problems"')
    box = html[start : html.index("</details>", start)]
    return re.findall(r'data-problem-link="([^"]+)" data-code="([^"]+)"', box)


def test_every_problem_and_failure_is_listed_with_its_kind(client, conversation):
    html = client.get(conversation.get_absolute_url()).content.decode()
    assert listed(html) == [("o1", "exit_code"), ("e1", "conversation_error"), ("a2", "pending")]
    assert "Show problems and failures" in html
    assert "non-zero exit code" in html and "conversation error" in html  # each its own badge
    assert 'data-failure="exit_code"' in html and 'data-failure="pending"' in html


def test_one_kind_is_listed_alone(client, conversation):
    html = client.get(conversation.get_absolute_url(), {"problem": "conversation_error"}).content.decode()
    assert listed(html) == [("e1", "conversation_error")]
    assert client.get(conversation.get_absolute_url(), {"problem": "nonsense"}).status_code == 400


def test_the_summary_links_the_first_failure(client, conversation):
    html = client.get(conversation.get_absolute_url()).content.decode()
    assert "First: <a" in html and "at=o1#event-o1" in html and "turn 3, terminal exit 1" in html


def test_each_count_in_the_summary_lists_its_kind(client, conversation):
    html = client.get(conversation.get_absolute_url()).content.decode()
    assert re.search(r'href="[^"]*problem=exit_code"[^>]*>1 non-zero exit code<', html)


def failures_listed(client, conversation_id: str) -> str:
    html = client.get("/").content.decode()
    row = html[html.index(conversation_id[:8]) :]
    return re.search(r'data-label="failures">(?:<span[^>]*>)?([\d,]+)<', row).group(1)


def test_the_list_counts_every_failure_an_import_added_and_a_reimport_adds(client, tmp_path, open_site):
    """The list's failure count is kept by the import (counted as events arrive) and, when
    events are added to a conversation imported before, counted again over all of them."""
    events = [
        message("m1", None, "fix it"),
        ev("e1", "AgentErrorEvent", "m1", tool_name="frob", tool_call_id="c1", error="Tool frob not found"),
        ev("e2", "ConversationErrorEvent", "e1", code="LLMError", detail="rate limited"),
    ]
    conversation_id = "ab" * 16
    import_paths([(write_folder(tmp_path / "first", events, None, conversation_id), "t")])
    assert failures_listed(client, conversation_id) == "2"
    assert conversation_id[:8] in client.get("/", {"failures": "1"}).content.decode()
    more = [*events, ev("e3", "ConversationErrorEvent", "e2", code="LLMError", detail="rate limited again")]
    import_paths([(write_folder(tmp_path / "again", more, None, conversation_id), "t")])
    assert failures_listed(client, conversation_id) == "3"


@pytest.fixture
def legacy_errors(copy_scenario):
    """The real `errors` conversation (finish, then an LLM auth failure) as a log before the
    tree wrote it: no parent_id, no leaf_event_id, so HEAD's rule leaves its conversation
    errors below HEAD; a second one, as a retry writes it, ends the run too."""
    target = copy_scenario("errors")
    files = sorted((target / "events").glob("*.json"))
    events = [json.loads(f.read_text()) for f in files]
    for f in files:
        f.unlink()
    error = {**events[-1], "id": "4443b767-0000-4000-8000-00000000retry"}
    events.append(error)
    for seq, event in enumerate(events):
        event.pop("parent_id", None)
        (target / "events" / f"event-{seq:05d}-{event['id']}.json").write_text(json.dumps(event))
    state = json.loads((target / "base_state.json").read_text())
    state.pop("leaf_event_id", None)
    state["id"] = "64bc2521-8077-4214-ac90-00000000face"  # a conversation of its own, beside the demo's
    (target / "base_state.json").write_text(json.dumps(state))
    target = target.rename(target.parent / state["id"].replace("-", ""))
    return import_paths([(target, "legacy")])[0].conversation, events


def test_conversation_errors_below_head_end_its_run(client, open_site, legacy_errors):
    conversation, events = legacy_errors
    errors = [e["id"] for e in events[-2:]]
    assert conversation.head.event_id == events[-3]["id"] and conversation.head.kind == "MessageEvent"
    html = client.get(conversation.get_absolute_url()).content.decode()
    summary = html[html.index('class="failure-summary"') : html.index("</p>", html.index('class="failure-summary"'))]
    assert "2 conversation errors" in summary and "the run ended with 2 conversation errors" in summary
    assert [eid for eid, code in listed(html) if code == "conversation_error"] == errors
    for error in errors:  # each listed error opens its own page, off this branch
        link = f'href="/c/{conversation.conversation_id}/events/{error}/" data-problem-link="{error}"'
        assert link + ' data-code="conversation_error" data-where="after">' in html
        assert client.get(f"/c/{conversation.conversation_id}/events/{error}/").status_code == 200


def test_the_branch_list_includes_the_branch_shown_above_an_error_continuation(client, open_site, legacy_errors):
    conversation, events = legacy_errors
    html = client.get(conversation.get_absolute_url()).content.decode()
    assert text_of(html, "branch-list").startswith("Branches (2)")
    rows = re.findall(r"<tr class=\"(selected)?\">(.*?)</tr>", html[html.index('id="branch-list"') :], re.S)
    assert len(rows) == 2
    shown = [row for selected, row in rows if selected]
    assert len(shown) == 1 and "this branch" in shown[0] and 'class="tag head"' in shown[0]
    (other,) = [row for selected, row in rows if not selected]
    assert f"leaf={events[-1]['id']}" in other and "outcome-error" in other
