"""Tiny builders of light events for the pure tests."""

from .sdk import Ev


def act(event_id, call, response="r1", tool="terminal", executable=True, text=False):
    return Ev(
        event_id,
        "ActionEvent",
        source="agent",
        tool_name=tool,
        tool_call_id=call,
        llm_response_id=response,
        executable=executable,
        carries_text=text,
    )


def obs(event_id, action_id, call, tool="terminal", kind="ObservationEvent"):
    return Ev(event_id, kind, source="environment", tool_name=tool, tool_call_id=call, action_id=action_id)


def err(event_id, call, tool="terminal"):
    return Ev(event_id, "AgentErrorEvent", source="agent", tool_name=tool, tool_call_id=call)


def msg(event_id, role="user"):
    return Ev(event_id, "MessageEvent", source=role if role == "user" else "agent", role=role)


def other(event_id, kind):
    return Ev(event_id, kind, source="environment")
