"""What the exports write of each kind, as its module in the kind registry says: the text
a tool message carries, the review document's section and heading, the diagram label."""

from __future__ import annotations

import pytest

from eventviewer.trajectory import kinds
from eventviewer.trajectory.events import describe
from eventviewer.trajectory.export import chat_message, event_section, review_turn
from eventviewer.trajectory.projection import Message, Turn
from eventviewer.trajectory.skeleton import event_label

CALL = {
    "id": "a1",
    "kind": kinds.ACTION,
    "source": "agent",
    "tool_name": "terminal",
    "tool_call_id": "c1",
    "action": {"kind": "TerminalAction", "command": "rm -rf /"},
    "tool_call": {"id": "c1", "name": "terminal", "arguments": '{"command": "rm -rf /"}'},
}
REJECTION = {
    "id": "r1",
    "kind": kinds.USER_REJECT,
    "tool_name": "terminal",
    "tool_call_id": "c1",
    "action_id": "a1",
    "rejection_reason": "too risky",
}
OUTPUT = {
    "id": "o1",
    "kind": kinds.OBSERVATION,
    "tool_name": "terminal",
    "action_id": "a1",
    "observation": {"content": [{"type": "text", "text": "boom"}], "exit_code": 2},
}
AGENT_ERROR = {"id": "e1", "kind": kinds.AGENT_ERROR, "tool_name": "frob", "error": "Tool 'frob' not found"}


@pytest.mark.parametrize(
    ("data", "content"),
    [
        (REJECTION, "Action rejected: too risky"),
        ({**REJECTION, "rejection_reason": None}, "Action rejected: rejected"),
        (OUTPUT, "boom\n[exit code 2]"),
        (AGENT_ERROR, "Tool 'frob' not found"),
    ],
)
def test_a_tool_message_carries_its_kind_s_text(data, content):
    message = Message("tool", data["kind"], [data["id"]], tool_call_id="c1")
    assert chat_message(message, [data]) == {"role": "tool", "tool_call_id": "c1", "content": content}


@pytest.mark.parametrize(
    ("data", "head"),
    [
        (REJECTION, "Rejected:\n```text\nAction rejected: too risky\n```\n"),
        (OUTPUT, "Output (exit code 2):\n```text\nboom\n[exit code 2]\n```\n"),
        (AGENT_ERROR, "Error:\n```text\nTool 'frob' not found\n```\n"),
    ],
)
def test_a_result_s_section_is_headed_by_its_kind(data, head):
    assert event_section(describe(data), data, "l") == head


def test_a_call_s_section_holds_its_result_indented():
    section = event_section(describe(CALL), CALL, "https://x/e/a1", REJECTION)
    assert section == (
        "- **terminal** ([event](https://x/e/a1))\n"
        "  ```sh\n  $ rm -rf /\n  ```\n"
        "  Rejected:\n  ```text\n  Action rejected: too risky\n  ```\n"
    )


def test_a_kind_without_a_section_of_its_own_is_its_label_and_summary():
    data = {"id": "p1", "kind": kinds.PAUSE}
    assert event_section(describe(data), data, "l") == "*Paused*: paused by the user\n"


def test_a_turn_is_headed_by_its_speaker_or_its_kind():
    message = {"id": "m1", "kind": kinds.MESSAGE, "source": "environment", "llm_message": {"role": "user"}}
    prompt = {"id": "s1", "kind": kinds.SYSTEM_PROMPT, "system_prompt": {"text": "You are"}}
    for data, heading in ((message, "User"), (prompt, "System prompt")):
        turn = Turn([describe(data)], visible=True, role="user")
        assert review_turn(1, turn, {data["id"]: data}, {}, lambda i: i).startswith(f"### 1. {heading} (")


@pytest.mark.parametrize(
    ("args", "label"),
    [
        ((kinds.USER_REJECT, "", "", "too risky"), "rejected: too risky"),
        ((kinds.CONVERSATION_ERROR, "", "terminal", "LLM failed"), "error: LLM failed"),
        ((kinds.CONDENSATION_REQUEST,), "condensation requested"),
        ((kinds.PAUSE,), "Pause"),
        (("FutureEvent", "", "", "new"), "Future: new"),
    ],
)
def test_a_diagram_label_takes_its_kind_s_word(args, label):
    assert event_label(*args) == label
