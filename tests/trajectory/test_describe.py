"""What describe() reads from one SDK event, and how it refuses a malformed one.

The messages are what an import reports to the user, so they are pinned here.
"""

from __future__ import annotations

from typing import Any

import pytest

from eventviewer.trajectory.events import STORED_SUMMARY_LENGTH, describe, one_line, title_of
from eventviewer.trajectory.kinds import kind_of


def event(kind: str = "MessageEvent", **fields: Any) -> dict[str, Any]:
    return {"id": "e1", "kind": kind, **fields}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "an event must be a JSON object, not an array"),
        ("x", "an event must be a JSON object, not a string"),
        (None, "an event must be a JSON object, not null"),
        (True, "an event must be a JSON object, not a boolean"),
        (1.5, "an event must be a JSON object, not a number"),
        ({"kind": "MessageEvent"}, 'the event has no "id"'),
        ({"id": None, "kind": "MessageEvent"}, 'the event has no "id"'),
        ({"id": "", "kind": "MessageEvent"}, '"id" is empty'),
        ({"id": 7, "kind": "MessageEvent"}, '"id" must be a string, not a number'),
        ({"id": "i" * 256, "kind": "MessageEvent"}, '"id" is longer than 255 characters'),
        ({"id": "a\nb", "kind": "MessageEvent"}, '"id" contains control characters'),
        ({"id": "e1"}, 'the event has no "kind"'),
        ({"id": "e1", "kind": ""}, 'the event has no "kind"'),
        ({"id": "e1", "kind": "K" * 101}, '"kind" is longer than 100 characters'),
        (event(parent_id=""), '"parent_id" is an empty string; use null for a root'),
        (event(parent_id=["p"]), '"parent_id" must be a string, not an array'),
        (event(source=1), '"source" must be a string, not a number'),
        (event(source="s" * 41), '"source" is longer than 40 characters'),
        (event(timestamp="t" * 65), '"timestamp" is longer than 64 characters'),
        (event(tool_call_id={}), '"tool_call_id" must be a string, not an object'),
        (event(action="ls"), '"action" must be an object, not a string'),
        (event(observation=[]), '"observation" must be an object, not an array'),
        (event(llm_message=1), '"llm_message" must be an object, not a number'),
        (event(thought="why"), '"thought" must be an array, not a string'),
        (event(thinking_blocks={}), '"thinking_blocks" must be an array, not an object'),
        (event(reasoning_content=False), '"reasoning_content" must be a string, not a boolean'),
        (event(action={"kind": 1}), '"payload kind" must be a string, not a number'),
        (event(observation={"kind": "k" * 101}), '"payload kind" is longer than 100 characters'),
        (event(llm_message={"role": 2}), '"llm_message.role" must be a string, not a number'),
        (event(llm_message={"role": "r" * 21}), '"llm_message.role" is longer than 20 characters'),
    ],
)
def test_a_malformed_event_is_refused_with_a_reason(data, message):
    with pytest.raises(ValueError) as refused:
        describe(data)
    assert str(refused.value) == message


def test_fields_at_their_length_limits_are_accepted():
    light = describe(
        {
            "id": "i" * 255,
            "kind": "K" * 100,
            "source": "s" * 40,
            "timestamp": "t" * 64,
            "observation": {"kind": "k" * 100},
            "llm_message": {"role": "r" * 20},
            "reasoning_content": "x" * 100_000,
        }
    )
    assert (light.event_id, light.kind, light.source, light.timestamp) == ("i" * 255, "K" * 100, "s" * 40, "t" * 64)
    assert (light.payload_kind, light.role) == ("k" * 100, "r" * 20)


def test_an_action_is_read_whole():
    light = describe(
        {
            "id": "a1",
            "kind": "ActionEvent",
            "parent_id": "m1",
            "source": "agent",
            "timestamp": "2026-01-01T00:00:00",
            "tool_name": "terminal",
            "tool_call_id": "call_1",
            "llm_response_id": "resp_1",
            "action": {"kind": "TerminalAction", "command": "ls"},
            "thought": [{"type": "text", "text": "Look first."}],
        }
    )
    assert light._asdict() == {
        "event_id": "a1",
        "kind": "ActionEvent",
        "parent_ref": "m1",
        "source": "agent",
        "timestamp": "2026-01-01T00:00:00",
        "tool_name": "terminal",
        "tool_call_id": "call_1",
        "action_id": "",
        "llm_response_id": "resp_1",
        "payload_kind": "TerminalAction",
        "role": "",
        "executable": True,
        "carries_text": True,
        "is_error": False,
        "summary": "Look first.",
        "failure": "",
        "thinking": False,
        "effect": "",
        "pk": 0,
        "seq": 0,
        "parent_pk": None,
        "depth": None,
        "anchor": None,
    }


def test_an_observation_is_read_whole():
    light = describe(
        {
            "id": "o1",
            "kind": "ObservationEvent",
            "parent_id": None,
            "source": "environment",
            "tool_name": "terminal",
            "tool_call_id": "call_1",
            "action_id": "a1",
            "observation": {"kind": "TerminalObservation", "is_error": True, "content": [{"text": "boom"}]},
        }
    )
    assert (light.parent_ref, light.action_id, light.payload_kind, light.executable) == (
        None,
        "a1",
        "TerminalObservation",
        False,
    )
    assert (light.is_error, light.summary, light.role, light.llm_response_id) == (True, "boom", "", "")


def test_a_message_keeps_its_role():
    light = describe(event(llm_message={"role": "assistant", "content": [{"type": "text", "text": "Done."}]}))
    assert (light.role, light.summary, light.executable, light.carries_text) == ("assistant", "Done.", False, False)
    assert light.payload_kind == ""


@pytest.mark.parametrize(
    ("data", "executable"),
    [
        (event("ActionEvent", action={"kind": "TerminalAction"}), True),
        (event("ActionEvent"), False),  # an invalid call: no action
        (event("ActionEvent", action=None), False),
        (event("ObservationEvent", action={"kind": "TerminalAction"}), False),
    ],
)
def test_only_an_action_event_with_an_action_is_executable(data, executable):
    assert describe(data).executable is executable


@pytest.mark.parametrize(
    ("fields", "carries"),
    [
        ({}, False),
        ({"thought": []}, False),
        ({"thought": [{"type": "text", "text": ""}, {"type": "image"}]}, False),
        ({"thought": [{"type": "text", "text": "why"}]}, True),
        ({"thought": [{"text": "why"}], "reasoning_content": " "}, True),
        ({"reasoning_content": "because"}, True),
        ({"reasoning_content": " \n "}, False),
        ({"reasoning_content": ""}, False),
        ({"thinking_blocks": [{"type": "thinking", "thinking": "hm"}]}, True),
        ({"thinking_blocks": []}, False),
    ],
)
def test_an_action_carries_text_when_it_has_a_thought_reasoning_or_thinking(fields, carries):
    assert describe(event("ActionEvent", action={"kind": "A"}, **fields)).carries_text is carries


@pytest.mark.parametrize(
    ("data", "is_error"),
    [
        (event("AgentErrorEvent", error="bad"), True),
        (event("ConversationErrorEvent", code="X"), True),
        (event("ObservationEvent", observation={"kind": "O", "is_error": True}), True),
        (event("ObservationEvent", observation={"kind": "O", "is_error": "true"}), False),
        (event("ObservationEvent", observation={"kind": "O", "is_error": False}), False),
        (event("ObservationEvent", observation={"kind": "O"}), False),
        (event("MessageEvent", is_error=True), False),
    ],
)
def test_an_event_is_an_error_by_its_kind_or_its_observation(data, is_error):
    assert describe(data).is_error is is_error


def test_an_id_may_hold_invisible_characters_that_are_not_control_characters():
    assert describe(event(id="a\u200eb")).event_id == "a\u200eb"
    assert describe(event(id="i" * 254 + "\u200e")).event_id == "i" * 254 + "\u200e"


def test_a_nul_in_an_events_text_is_stored_as_a_space():
    assert describe(event(llm_message={"role": "user", "content": "a\x00b"})).summary == "a b"


def test_nul_characters_are_dropped_from_strings():
    light = describe(event(source="ag\x00ent", timestamp="2026\x00-01"))
    assert (light.source, light.timestamp) == ("agent", "2026-01")


@pytest.mark.parametrize(
    ("data", "summary"),
    [
        (event(llm_message={"role": "user", "content": [{"text": "Hi"}, {"text": "there"}]}), "Hi there"),
        (event(llm_message={"role": "user", "content": "plain"}), "plain"),
        (event(llm_message=None), ""),
        (event("ActionEvent", summary="ran ls", thought=[{"text": "why"}], tool_name="terminal"), "ran ls"),
        (event("ActionEvent", summary="  ", thought=[{"text": "a"}, {"text": "b"}], tool_name="t"), "a b"),
        (event("ActionEvent", tool_name="terminal"), "terminal"),
        (event("ActionEvent"), ""),
        (event("ObservationEvent", observation={"kind": "O", "content": [{"text": "out"}]}), "out"),
        (event("ObservationEvent"), ""),
        (event("AgentErrorEvent", error="Tool 'x' not found"), "Tool 'x' not found"),
        (event("AgentErrorEvent"), ""),
        (event("UserRejectObservation", rejection_reason="not allowed"), "not allowed"),
        (event("UserRejectObservation"), "rejected"),
        (event("ConversationErrorEvent", code="LLMError", detail="key expired"), "LLMError: key expired"),
        (event("ConversationErrorEvent"), "error: "),
        (event("SystemPromptEvent", tools=[{}, {}, {}]), "system prompt, 3 tools"),
        (event("SystemPromptEvent", tools="many"), "system prompt, 0 tools"),
        (event("Condensation", summary="what happened"), "what happened"),
        (event("Condensation", forgotten_event_ids=["a", "b"]), "forgot 2 events"),
        (event("CondensationSummaryEvent", forgotten_event_ids="a"), ""),
        (event("PauseEvent", summary="ignored"), "paused by the user"),
        (
            event("HookExecutionEvent", hook_event_type="PreToolUse", tool_name="terminal", blocked=True, reason="no"),
            "PreToolUse hook on terminal blocked: no",
        ),
        (event("TokenEvent", prompt_token_ids=[1, 2], response_token_ids=[3]), "2 prompt and 1 response token ids"),
        (event("FutureEvent", anything="at all"), ""),
    ],
)
def test_each_kind_is_summarized_by_what_a_person_wants_to_see(data, summary):
    assert describe(data).summary == summary


def test_a_long_summary_is_stored_cut_with_a_mark():
    stored = describe(event(llm_message={"role": "user", "content": "x" * 1000})).summary
    assert stored == "x" * (STORED_SUMMARY_LENGTH - 1) + "…"
    exact = describe(event(llm_message={"role": "user", "content": "y" * STORED_SUMMARY_LENGTH})).summary
    assert exact == "y" * STORED_SUMMARY_LENGTH


def test_a_summary_after_much_whitespace_is_stored_from_its_first_word():
    padded = " " * (STORED_SUMMARY_LENGTH * 4 + 10) + "late"
    assert describe(event("ActionEvent", summary=padded)).summary == "late"
    assert describe(event("ActionEvent", summary="  early ")).summary == "early "


def summarize(data, kind):
    return kind_of(kind).summarize(data)


def test_a_summary_survives_fields_of_the_wrong_type():
    assert summarize(event("ObservationEvent", observation="text"), "ObservationEvent") == ""
    assert summarize(event("Condensation", summary=42), "Condensation") == "forgot 0 events"


def test_one_line_keeps_a_text_of_exactly_the_limit_and_finds_a_late_start():
    assert one_line("x" * 200, 200) == "x" * 200
    assert one_line(" " * 1000 + "late", 200) == "late"


def test_a_long_output_is_summarized_from_its_first_texts_only():
    parts = [{"text": "a" * 500}, {"text": "b" * 500}, {"text": "c" * 500}]
    data = event("ObservationEvent", observation={"kind": "O", "content": parts})
    assert summarize(data, data["kind"]) == "a" * 500 + " " + "b" * 500
    data["observation"]["content"] = [{"text": "d" * 5000}, {"text": "e"}]
    assert summarize(data, data["kind"]) == "d" * 800
    data["observation"]["content"] = [{"text": "f" * 799}, {"text": "g"}, {"text": "h"}]
    assert summarize(data, data["kind"]) == "f" * 799 + " g"


def test_the_title_is_the_first_user_message_on_one_line():
    data = event(llm_message={"role": "user", "content": [{"text": "Fix\nthe   bug"}]})
    assert title_of(data) == "Fix the bug"
    assert title_of(event(llm_message={"role": "user", "content": "w" * 400})) == "w" * 299 + "…"
