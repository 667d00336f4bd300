"""V0 events in the SDK's shapes, on the real V0 files in tests/fixtures/v0."""

from __future__ import annotations

import json
from pathlib import Path

from eventviewer.trajectory import files, kinds, v0
from eventviewer.trajectory.events import describe
from eventviewer.trajectory.pairing import pair
from eventviewer.trajectory.tree import Entry, build_tree

V0_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "v0"


def history() -> list[dict]:
    return json.loads((V0_FIXTURES / "output.jsonl").read_text().splitlines()[0])["history"]


def converted() -> list[dict]:
    return list(v0.convert_all(history()))


def test_every_event_of_a_real_v0_run_is_described():
    lights = [describe(e) for e in converted()]
    assert [light.event_id for light in lights] == [str(e["id"]) for e in history()]
    found = {light.kind for light in lights}
    assert {kinds.SYSTEM_PROMPT, kinds.MESSAGE, kinds.ACTION, kinds.OBSERVATION} <= found
    assert kinds.UNKNOWN not in found


def test_a_v0_run_is_one_line_without_parents():
    lights = [describe(e) for e in converted()]
    tree = build_tree(Entry(seq, light.event_id, light.kind, light.parent_ref) for seq, light in enumerate(lights))
    assert max(tree.depth.values()) == len(lights) - 1


def test_results_pair_by_cause_and_nothing_is_left_pending():
    lights = [light._replace(seq=seq) for seq, light in enumerate(describe(e) for e in converted())]
    pairing = pair(lights)
    assert pairing.pending == [] and pairing.mismatched == {}
    causes = {str(e["id"]): str(e["cause"]) for e in history() if "observation" in e and e.get("cause") is not None}
    assert {r: a for r, a in pairing.answers.items() if r in causes} == causes


def test_a_run_command_and_its_output_read_as_terminal_events():
    events = {e["id"]: e for e in converted()}
    action, result = events["5"], events["6"]
    assert action["action"]["kind"] == "ExecuteBashAction"
    assert action["action"]["command"] == "ls -l /workspace/ponylang__ponyc__0.1"
    assert "thought" not in action["action"]
    assert action["thought"][0]["text"].startswith("The task involves")
    assert result["observation"]["exit_code"] == 0
    assert result["observation"]["content"][0]["text"].startswith("total 300")


def test_a_failed_edit_is_a_tool_error_and_a_finish_waits_for_nothing():
    events = {e["id"]: e for e in converted()}
    assert describe(events["28"]).failure == kinds.TOOL_ERROR_FAILURE
    finish = describe(events["49"])
    assert finish.payload_kind == "FinishAction" and not finish.executable


def test_an_error_observation_is_an_agent_error():
    rows = (V0_FIXTURES / "output.jsonl").read_text().splitlines()
    events = {e["id"]: e for e in v0.convert_all(json.loads(rows[1])["history"])}
    assert describe(events["55"]).kind == kinds.AGENT_ERROR


def test_the_v0_event_is_kept_and_what_is_not_v0_passes_through():
    event = history()[5]
    assert v0.Converter().convert(event)[v0.V0_KEY] == event
    sdk = {"id": "a", "kind": "MessageEvent"}
    assert v0.Converter().convert(sdk) is sdk
    assert not v0.is_v0_event({"id": True, "action": "run"})


def test_metrics_are_the_last_accumulated_ones():
    metrics = v0.metrics_of(history())
    assert metrics is not None and metrics["accumulated_token_usage"]["prompt_tokens"] == 565158


def test_a_condensation_forgets_its_range_and_a_state_change_stays_a_v0_event():
    converter = v0.Converter()
    condensed = converter.convert(
        {
            "id": 40,
            "source": "agent",
            "action": "condensation",
            "args": {
                "forgotten_events_start_id": 5,
                "forgotten_events_end_id": 8,
                "summary": "so far",
                "summary_offset": 1,
            },
        }
    )
    assert describe(condensed).kind == kinds.CONDENSATION
    assert condensed["forgotten_event_ids"] == ["5", "6", "7", "8"] and condensed["summary"] == "so far"
    listed = converter.convert({"id": 41, "action": "condensation", "args": {"forgotten_event_ids": [3, 9]}})
    assert listed["forgotten_event_ids"] == ["3", "9"]
    state = converter.convert({"id": 42, "source": "environment", "action": "change_agent_state", "args": {}})
    assert state["kind"] == "V0Action.change_agent_state"


def test_a_rejected_call_is_a_user_rejection_of_its_cause():
    converter = v0.Converter()
    call = converter.convert(
        {
            "id": 1,
            "action": "run",
            "args": {"command": "rm -rf /"},
            "tool_call_metadata": {"tool_call_id": "t1", "function_name": "execute_bash"},
        }
    )
    refusal = converter.convert({"id": 2, "observation": "user_rejected", "cause": 1, "content": "no"})
    light = describe(refusal)
    assert (light.kind, light.action_id, light.tool_call_id) == (kinds.USER_REJECT, "1", call["tool_call_id"])


def gui_session() -> list[dict]:
    """An ordinary V0 session from the GUI (OpenHands' tests/runtime/trajs/basic_gui_mode.json)."""
    return json.loads((V0_FIXTURES / "basic_gui_mode.json").read_text())


def test_no_observation_after_a_message_or_a_state_change_is_no_mismatched_result():
    events = {e["id"]: e for e in v0.convert_all(gui_session())}
    lights = [light._replace(seq=seq) for seq, light in enumerate(describe(e) for e in events.values())]
    pairing = pair(lights)
    assert pairing.mismatched == {} and pairing.pending == []
    for null in ("2", "6", "16"):  # caused by a state change, the user's message, the agent's message
        assert describe(events[null]).kind == "V0Observation.null"
        assert events[null][v0.V0_KEY]["cause"] is not None


def test_no_observation_for_a_tool_call_is_its_empty_result():
    converter = v0.Converter()
    converter.convert({"id": 1, "action": "run", "args": {"command": "true"}})
    result = describe(converter.convert({"id": 2, "observation": "null", "cause": 1, "content": ""}))
    assert (result.kind, result.action_id) == (kinds.OBSERVATION, "1")


def test_a_v0_trajectory_that_ends_in_finish_is_finished():
    events = list(v0.convert_all(json.loads((V0_FIXTURES / "trajectory.json").read_text())))
    assert kinds.outcome(describe(events[-1])) == "finished"
    assert kinds.outcome(describe(events[-2])) == "open"  # the edit's result: the run went on


def test_a_v0_file_create_reads_as_create():
    events = {e["id"]: e for e in v0.convert_all(gui_session())}
    for action_id, result_id, path, line in (
        ("9", "10", "/workspace/todo-app/index.html", "+<!DOCTYPE html>"),
        ("11", "12", "/workspace/todo-app/app.js", "+const { createApp } = Vue"),
    ):
        assert events[action_id]["action"]["command"] == "create"
        assert events[result_id]["observation"]["command"] == "create"
        (change,) = files.changes(result_id, events[result_id])
        assert (change.path, change.op, change.exact) == (path, "create", True)
        texts = [text.rstrip("\n") for _, text in change.diff.lines]
        assert texts[0] == "--- /dev/null" and line in texts
