"""An agent-server's description of a conversation, as the SDK's base_state.json."""

from __future__ import annotations

from eventviewer.trajectory.serverstate import sdk_state

INFO = {
    "id": "4345f259-c7c2-42ca-b927-98bf82ce4b7f",
    "workspace": {"working_dir": "/w", "kind": "LocalWorkspace"},
    "execution_status": "finished",
    "security_analyzer": None,
    "leaf_event_id": "e9",
    "stats": {"usage_to_metrics": {"agent": {"model_name": "m", "max_budget_per_task": None, "costs": [1, None]}}},
    "title": "Say hello.",
    "metrics": {"accumulated_cost": 0.0},
    "created_at": "2026-11-30T19:50:20Z",
    "runtime_info": {"runtime_status": "running"},
    "agent": {"llm": {"model": "openai/stub", "api_key": None}, "kind": "Agent"},
}


def test_the_servers_own_fields_and_the_nulls_are_left_out_in_the_sdks_order():
    state = sdk_state(INFO)
    assert list(state) == ["id", "agent", "workspace", "execution_status", "leaf_event_id", "stats"]
    assert state["agent"] == {"llm": {"model": "openai/stub"}, "kind": "Agent"}
    assert state["stats"] == {"usage_to_metrics": {"agent": {"model_name": "m", "costs": [1, None]}}}


def test_an_sdk_state_is_its_own_answer():
    state = sdk_state(INFO)
    assert sdk_state(state) == state
