"""V0 events as the first OpenHands versions saved them (no ids, fields flat), on the real
resolver output in tests/fixtures/resolver; and a resolver row's instance id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eventviewer.trajectory import kinds, runs, v0
from eventviewer.trajectory.events import describe
from eventviewer.trajectory.pairing import pair

RESOLVER = Path(__file__).resolve().parent.parent / "fixtures" / "resolver" / "output.jsonl"


def history(row: int = 1) -> list[dict]:
    return json.loads(RESOLVER.read_text().splitlines()[row])["history"]


def test_a_legacy_history_is_told_from_a_later_v0_one():
    assert v0.is_legacy_history(history()) and not v0.is_v0_history(history())
    later = v0.from_legacy(history())
    assert v0.is_v0_history(later) and not v0.is_legacy_history(later)


def test_every_legacy_event_is_described_and_every_result_answers_the_call_before_it():
    events = list(v0.convert_legacy(history()))
    lights = [describe(e, seq) for seq, e in enumerate(events)]
    assert [light.event_id for light in lights] == [str(n) for n in range(len(history()))]
    assert kinds.UNKNOWN not in {light.kind for light in lights}
    pairing = pair(lights)
    assert pairing.pending == [] and pairing.mismatched == {}
    results = [n for n, e in enumerate(history()) if "observation" in e]
    assert results and {pairing.answers[str(n)] for n in results} == {str(n - 1) for n in results}


def test_the_first_message_is_the_users_task_and_each_event_keeps_what_was_saved():
    events = list(v0.convert_legacy(history(0)))
    first = events[0]
    assert (first["kind"], first["source"]) == ("MessageEvent", "user")
    assert first["llm_message"]["content"][0]["text"].startswith("Please fix the following issue")
    run = events[1]
    assert run["action"]["kind"] == "ExecuteBashAction" and run["action"]["command"] == "touch LICENSE"
    assert events[2]["observation"]["exit_code"] == 0
    assert [e["v0"] for e in events] == history(0)


@pytest.mark.parametrize(
    ("issue", "expected"),
    [
        ({"owner": "neubig", "repo": "pr-viewer", "number": 5, "title": "t"}, "neubig/pr-viewer#5"),
        ({"owner": "neubig", "repo": "pr-viewer", "number": "5"}, None),
        ({"owner": "neubig", "number": 5}, None),
        ({"owner": "o", "repo": "r", "number": True}, None),
        ("neubig/pr-viewer#5", None),
    ],
)
def test_a_resolver_rows_instance_is_owner_repo_and_number(issue, expected):
    assert runs.resolver_instance(issue) == expected
    assert runs.is_row({"issue": issue, "history": []})
