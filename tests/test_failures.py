"""Problems and failures on a branch: every kind listed with its own mark, filtered by
``?problem=``, and the summary linking the first one."""

from __future__ import annotations

import re

import pytest

from eventviewer.imports.importer import import_paths

from .conftest import action, ev, message, observation, write_folder

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
