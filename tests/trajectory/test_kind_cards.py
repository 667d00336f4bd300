"""What each kind's card says of an event: its heading and colour, the fields shown, the
bounded lists with what they left out, and how a failure reads. Real SDK events where the
fixtures have one, small crafted ones for what they do not."""

from __future__ import annotations

import json

import pytest

from eventviewer.trajectory.cards import MAX_ITEMS, PREVIEW_LINES, TEXT_CHARS, Image
from eventviewer.trajectory.kinds import card_for, kind_of

from .sdk import event_json
from .test_cards import PNG

MULTIMODAL = "multimodal/99cc7f8b18a64f9dad38e330a2f28eb7"  # the one with an image observation


def summary(data: dict) -> str:
    return kind_of(data["kind"]).summarize(data)


def failure(data: dict) -> str:
    return kind_of(data["kind"]).failure(data)


# --- the registry: every card gets its kind, template, heading ---


def test_every_card_names_its_kind_and_template():
    card = card_for(event_json("simple", 2))
    assert (card.kind, card.template) == ("ActionEvent", "kinds/action.html")
    assert card_for(event_json("simple", 1)).template == "kinds/message.html"


def test_an_unknown_kind_is_shown_folded_as_its_json():
    data = {"id": "e", "timestamp": "t", "source": "agent", "kind": "FancyNewEvent", "answer": 42}
    card = card_for(data)
    assert (card.kind, card.label, card.template, card.folded) == (
        "FancyNewEvent",
        "FancyNew",
        "kinds/unknown.html",
        True,
    )
    assert json.loads(card.extra_json) == {"answer": 42}  # id, time, source and kind are shown elsewhere
    assert card.left_out == 0


def test_an_unknown_kind_without_fields_or_name_still_has_a_heading():
    card = card_for({"kind": "Event", "id": "e"})
    assert card.label == "Event" and card.extra_json == ""
    assert card_for({"kind": "", "x": 1}).label == "Event"
    assert card_for({"kind": "Odd", "x": 1}).label == "Odd"


def test_an_unknown_kind_with_many_fields_shows_the_first_and_counts_the_rest():
    data = {"kind": "Big", "id": "e", **{f"f{i}": i for i in range(MAX_ITEMS + 7)}}
    card = card_for(data)
    shown = json.loads(card.extra_json)
    assert len(shown) == MAX_ITEMS and "f0" in shown and f"f{MAX_ITEMS}" not in shown
    assert card.left_out == 7


def test_an_unknown_kinds_name_is_bounded():
    card = card_for({"kind": "K" * 500})
    assert card.kind == card.label == "K" * 100


@pytest.mark.parametrize(("kind", "name", "label"), [(None, "", "Event"), (3, "3", "3"), (["A"], "['A']", "['A']")])
def test_a_kind_that_is_not_a_string_is_shown_as_text(kind, name, label):
    card = card_for({"kind": kind, "x": 1})
    assert (card.kind, card.label) == (name, label)


@pytest.mark.parametrize("data", [None, [], "ActionEvent", 3])
def test_json_that_is_not_an_object_gets_an_empty_generic_card(data):
    card = card_for(data)
    assert (card.kind, card.label, card.folded, card.extra_json) == ("", "Event", True, "")


def test_cards_are_bounded_for_the_conversation_page_and_less_for_the_event_page():
    data = {
        "kind": "MessageEvent",
        "source": "user",
        "llm_message": {"role": "user", "content": "x" * (TEXT_CHARS + 5)},
    }
    assert card_for(data).cut and card_for(data).text.endswith(" …")
    assert not card_for(data, full=True).cut and len(card_for(data, full=True).text) == TEXT_CHARS + 5


# --- messages ---


def test_a_user_message_card_shows_its_text():
    card = card_for(event_json("simple", 1))
    assert card.label == "User" and card.text == "Create a file hello.txt containing 'hello world'."
    assert card.facts == [] and card.images == [] and card.tone == "" and not card.folded


def test_a_message_with_an_image_shows_it_inline():
    card = card_for(event_json(MULTIMODAL, 1))
    assert card.text.startswith("What is in this screenshot?") and card.text.endswith("[image: 1]")
    assert card.images == [Image(src=PNG)]


def test_an_agent_message_is_headed_by_its_role():
    card = card_for(event_json(MULTIMODAL, 4))
    assert card.label == "Assistant" and card.text == "Both images are a small solid red square."


@pytest.mark.parametrize(
    ("role", "source", "label"),
    [
        ("user", "user", "User"),
        ("user", "", "User"),
        ("user", "environment", "Environment"),
        ("user", "agent", "User"),
        ("assistant", "agent", "Assistant"),
        ("", "agent", "Agent"),
        ("", "", "Message"),
    ],
)
def test_a_message_is_headed_by_who_sent_it(role, source, label):
    assert card_for({"kind": "MessageEvent", "source": source, "llm_message": {"role": role}}).label == label


def test_a_message_shows_reasoning_thinking_skills_and_added_context():
    data = {
        "kind": "MessageEvent",
        "source": "agent",
        "llm_message": {
            "role": "assistant",
            "content": [{"type": "text", "text": "done"}],
            "reasoning_content": "because",
            "thinking_blocks": [{"thinking": "hmm"}],
        },
        "activated_skills": ["git", "python"],
        "extended_content": [{"type": "text", "text": "Project policy: never delete files."}],
    }
    card = card_for(data)
    assert (card.text, card.reasoning, card.thinking) == ("done", "because", ["hmm"])
    assert card.facts == [("skills", "git, python"), ("added context", "Project policy: never delete files.")]


def test_a_message_lists_at_most_max_items_skills():
    data = {"kind": "MessageEvent", "llm_message": {}, "activated_skills": [f"s{i}" for i in range(MAX_ITEMS + 1)]}
    (fact,) = card_for(data).facts
    assert fact[1].count(",") == MAX_ITEMS - 1 and not fact[1].endswith(f"s{MAX_ITEMS}")


def test_a_message_of_the_wrong_shape_is_an_empty_message():
    card = card_for({"kind": "MessageEvent", "llm_message": "junk", "activated_skills": "x", "extended_content": {}})
    assert (card.label, card.text, card.facts) == ("Message", "", [])


def test_a_message_summary_is_its_first_texts():
    assert summary(event_json("simple", 1)) == "Create a file hello.txt containing 'hello world'."
    many = [{"type": "text", "text": "a" * 500}] * 3 + [{"type": "text", "text": "unseen"}]
    assert summary({"kind": "MessageEvent", "llm_message": {"content": many}}) == "a" * 500 + " " + "a" * 500
    assert summary({"kind": "MessageEvent", "llm_message": {"content": "b" * 5000}}) == "b" * 3200
    assert summary({"kind": "MessageEvent", "llm_message": {"content": [{"text": ""}, {"text": "x"}]}}) == "x"


def test_a_condensation_summary_reads_as_a_message():
    card = card_for({"kind": "CondensationSummaryEvent", "summary": "Earlier: files made."})
    assert (card.label, card.text, card.template) == (
        "Summary of earlier events",
        "Earlier: files made.",
        "kinds/message.html",
    )
    assert summary({"kind": "CondensationSummaryEvent", "summary": "Earlier"}) == "Earlier"


# --- the system prompt ---


def test_the_system_prompt_card_shows_the_prompt_and_each_tool():
    card = card_for(event_json("simple", 0), full=True)
    assert card.label == "System prompt" and card.text.startswith("<SOUL>\nYou are OpenHands agent")
    assert [name for name, _ in card.tools] == ["terminal", "file_editor", "finish", "think"]
    assert card.tools[0][1].startswith("Execute a shell command in the terminal")
    assert card.left_out == 0 and card.facts == []
    assert summary(event_json("simple", 0)) == "system prompt, 4 tools"


def test_a_tool_is_named_by_its_title_name_or_kind():
    tools = [{"title": "t", "name": "n"}, {"name": "n", "kind": "K"}, {"kind": "K"}, {}, "junk"]
    card = card_for({"kind": "SystemPromptEvent", "system_prompt": "plain prompt", "tools": tools})
    assert card.tools == [("t", ""), ("n", ""), ("K", ""), ("", "")]
    assert card.text == "plain prompt"


def test_a_tool_name_and_description_are_bounded():
    tool = {"name": "n" * 300, "description": "d" * 30_000}
    ((name, description),) = card_for({"kind": "SystemPromptEvent", "tools": [tool]}).tools
    assert (len(name), len(description)) == (200, 20_000)


def test_the_system_prompt_lists_at_most_max_items_tools_and_counts_the_rest():
    data = {"kind": "SystemPromptEvent", "tools": [{"name": str(i)} for i in range(MAX_ITEMS + 3)]}
    card = card_for(data)
    assert len(card.tools) == MAX_ITEMS and card.left_out == 3
    assert summary(data) == f"system prompt, {MAX_ITEMS + 3:,} tools"
    assert summary({"kind": "SystemPromptEvent", "tools": [{}]}) == "system prompt, 1 tool"
    assert summary({"kind": "SystemPromptEvent", "tools": "junk"}) == "system prompt, 0 tools"


def test_the_system_prompt_shows_its_dynamic_context():
    text = {"kind": "SystemPromptEvent", "dynamic_context": {"type": "text", "text": "Today is Monday."}}
    assert card_for(text).facts == [("dynamic context", "Today is Monday.")]
    assert card_for({"kind": "SystemPromptEvent", "dynamic_context": "plain"}).facts == [("dynamic context", "plain")]
    assert card_for({"kind": "SystemPromptEvent", "dynamic_context": ""}).facts == []


# --- actions ---


def test_an_action_card_shows_the_thought_the_tool_and_its_command():
    card = card_for(event_json("simple", 2))
    assert card.label == "terminal" and card.tool_name == "terminal"
    assert card.text == "I'll create the file and list the directory to confirm."
    assert card.title == "create hello.txt and list files"
    assert card.command == "echo 'hello world' > hello.txt && ls -1"
    assert card.action_kind == "TerminalAction" and card.tool_call_id == "call_1b3b9f8e2a834a65a82431b1"
    assert json.loads(card.arguments)["command"] == "echo 'hello world' > hello.txt && ls -1"
    assert card.tone == "" and card.facts == []  # the SDK's UNKNOWN risk is not shown


def test_an_action_card_shows_the_models_reasoning_and_a_file_edit():
    card = card_for(event_json("parallel-with-invalid-call", 2))
    assert card.reasoning == "The user wants a tiny module. I can create it and verify in one go."
    assert card.command == "create /workspace/calc.py"


def test_an_invalid_call_is_a_warning_with_the_arguments_the_model_wrote():
    data = event_json("parallel-with-invalid-call", 3)
    card = card_for(data)
    assert card.label == "web_search" and card.tone == "warn"
    assert card.action_kind == "" and card.command == ""
    assert json.loads(card.arguments)["query"] == "python add function"
    assert failure(data) == "invalid_call"
    assert failure(event_json("simple", 2)) == ""


def test_an_action_of_the_wrong_shape_is_an_invalid_call():
    card = card_for({"kind": "ActionEvent", "action": "junk", "tool_name": "t"})
    assert (card.tone, card.action_kind, card.command) == ("warn", "", "")


def test_an_action_shows_its_thinking_blocks():
    data = {"kind": "ActionEvent", "action": {}, "thinking_blocks": [{"thinking": "first, look"}]}
    assert card_for(data).thinking == ["first, look"]


def test_an_action_without_a_tool_is_a_tool_call():
    assert card_for({"kind": "ActionEvent", "action": {"kind": "X"}}).label == "tool call"


def test_a_task_call_shows_what_it_delegated():
    card = card_for(event_json("subagent", 3))
    assert card.facts == [("description", "list files"), ("subagent type", "helper")]
    resumed = {"kind": "ActionEvent", "action": {"kind": "TaskAction", "resume": "task_1", "description": ""}}
    assert card_for(resumed).facts == [("resume", "task_1")]
    other = {"kind": "ActionEvent", "action": {"kind": "TerminalAction", "description": "x"}}
    assert card_for(other).facts == []


@pytest.mark.parametrize(("risk", "facts"), [("HIGH", [("risk", "HIGH")]), ("UNKNOWN", []), ("", []), (3, [])])
def test_an_action_shows_the_risk_the_model_gave_it(risk, facts):
    assert card_for({"kind": "ActionEvent", "action": {}, "security_risk": risk}).facts == facts


def test_an_action_summary_is_its_summary_else_its_thought_else_its_tool():
    assert summary(event_json("simple", 2)) == "create hello.txt and list files"
    thought = {"kind": "ActionEvent", "summary": "  ", "tool_name": "t", "thought": [{"text": "a"}, {"text": "b"}]}
    assert summary(thought) == "a b"
    gaps = {"kind": "ActionEvent", "thought": [{"text": "a"}, {"text": ""}, {"text": 3}, {"text": "b"}]}
    assert summary(gaps) == "a b"
    assert summary({"kind": "ActionEvent", "tool_name": "t", "thought": [{"text": ""}, "junk"]}) == "t"
    long = {"kind": "ActionEvent", "thought": [{"text": str(i)} for i in range(30)]}
    assert summary(long) == " ".join(str(i) for i in range(20))


# --- observations ---


def test_an_observation_card_shows_the_output_and_exit_code():
    card = card_for(event_json("simple", 3))
    assert card.label == "Observation" and card.tool_name == "terminal"
    assert card.output is not None and card.output.text == "hello.txt" and not card.output.truncated
    assert card.exit_code == 0 and card.tone == "" and card.error == ""
    assert card.command == "echo 'hello world' > hello.txt && ls -1"
    assert card.action_kind == "TerminalObservation"


def test_a_tool_error_is_an_error():
    data = event_json("errors", 9)
    card = card_for(data)
    assert card.tone == "error" and card.error == "the tool reported an error"
    assert card.output is not None and card.output.text.startswith("Invalid `path` parameter")
    assert card.exit_code is None  # a file_editor result has none
    assert failure(data) == "tool_error"


@pytest.mark.parametrize(
    ("observation", "code"),
    [
        ({"exit_code": 0}, ""),
        ({"exit_code": -1}, ""),  # the SDK's "no exit code"
        ({"exit_code": 1}, "exit_code"),
        ({"exit_code": 2, "is_error": True}, "exit_code"),
        ({"exit_code": True}, ""),
        ({"exit_code": "1"}, ""),
        ({"is_error": True}, "tool_error"),
        ({"timeout": True, "exit_code": -1}, "tool_error"),
        ({"is_error": "yes", "timeout": 1}, ""),
        ({}, ""),
    ],
)
def test_an_observation_fails_on_a_non_zero_exit_code_an_error_or_a_timeout(observation, code):
    data = {"kind": "ObservationEvent", "observation": observation}
    assert failure(data) == code
    assert card_for(data).tone == ("error" if code else "")


def test_a_timed_out_command_says_so():
    card = card_for({"kind": "ObservationEvent", "observation": {"timeout": True, "exit_code": -1}})
    assert card.facts == [("timeout", "the command timed out")] and card.exit_code == -1
    assert card.error == ""


def test_long_output_is_previewed_on_the_conversation_page_and_whole_on_the_event_page():
    text = "\n".join(str(i) for i in range(PREVIEW_LINES * 2))
    data = {"kind": "ObservationEvent", "observation": {"content": [{"type": "text", "text": text}]}}
    assert card_for(data).output.truncated
    assert not card_for(data, full=True).output.truncated


def test_an_image_observation_shows_the_image():
    card = card_for(event_json(MULTIMODAL, 3))
    assert card.images == [Image(src=PNG)]
    assert card.output.text.startswith("Image file /workspace/chart.png read successfully.")


def test_a_task_result_says_which_sub_agent_did_it():
    card = card_for(event_json("subagent", 4))
    assert card.facts == [("task id", "task_00000001"), ("subagent", "helper"), ("status", "completed")]
    assert card.output.text == "README.md has 3 lines."
    partial = {"kind": "ObservationEvent", "observation": {"kind": "TaskObservation", "status": "running"}}
    assert card_for(partial).facts == [("status", "running")]
    other = {"kind": "ObservationEvent", "observation": {"kind": "TerminalObservation", "status": "done"}}
    assert card_for(other).facts == []


def test_an_observation_summary_is_its_first_texts():
    assert summary(event_json("simple", 3)) == "hello.txt"
    assert summary({"kind": "ObservationEvent", "observation": "junk"}) == ""


def test_a_rejection_shows_why_and_by_whom():
    data = event_json("hooks", 10)
    card = card_for(data)
    assert (card.label, card.tone, card.template) == ("Rejected", "error", "kinds/rejection.html")
    assert card.error == "rm is not allowed by project policy"
    assert card.facts == [("by", "a hook")]
    assert card.tool_name == "terminal" and card.tool_call_id == "call_2be8c2c0f9b049148fedb242"
    assert failure(data) == "rejected" and summary(data) == "rm is not allowed by project policy"


def test_a_rejection_without_a_reason_says_rejected():
    data = {"kind": "UserRejectObservation", "rejection_source": "user"}
    assert card_for(data).error == "rejected" and card_for(data).facts == [("by", "user")]
    assert summary(data) == "rejected"
    assert card_for({"kind": "UserRejectObservation"}).facts == []


# --- errors ---


def test_an_agent_error_card_shows_the_error_and_how_it_was_classified():
    data = event_json("errors", 3)
    card = card_for(data)
    assert (card.label, card.tone, card.template) == ("Agent error", "error", "kinds/error.html")
    assert card.error == "Tool 'search_files' not found. Available: ['terminal', 'file_editor', 'finish', 'think']"
    assert card.tool_name == "search_files" and card.tool_call_id == "call_efc42f52f9304fa786f0be86"
    assert card.facts == [("kind", "agent_action"), ("retryable", "True"), ("user action", "retry")]
    assert failure(data) == "agent_error" and summary(data) == card.error


def test_a_conversation_error_card_shows_its_code_and_detail():
    data = event_json("errors", 13)
    card = card_for(data)
    assert (card.label, card.tone, card.title) == ("Conversation error", "error", "LLMAuthenticationError")
    assert card.error == "Your LLM API key appears to be invalid or has expired."
    assert card.facts == [("kind", "auth"), ("retryable", "False"), ("user action", "settings")]
    assert failure(data) == "conversation_error"
    assert summary(data) == "LLMAuthenticationError: Your LLM API key appears to be invalid or has expired."
    assert summary({"kind": "ConversationErrorEvent", "detail": "d"}) == "error: d"


def test_an_error_classification_shows_only_what_it_has():
    data = {"kind": "AgentErrorEvent", "classification": {"kind": "x", "retryable": None}}
    assert card_for(data).facts == [("kind", "x")]
    assert card_for({"kind": "AgentErrorEvent", "classification": "x"}).facts == []


# --- hooks ---


def test_a_hook_that_ran_fine_is_folded_and_allowed():
    data = event_json("hooks", 4)
    card = card_for(data)
    assert (card.label, card.title, card.tone, card.folded) == ("PreToolUse hook on terminal", "allowed", "", True)
    assert card.command.startswith("python3 -c") and card.exit_code == 0
    assert card.output.text == '{"decision": "allow"}' and card.error == ""
    assert failure(data) == "" and summary(data) == "PreToolUse hook on terminal ran"


def test_a_blocking_hook_is_an_error_showing_its_reason_and_output():
    data = event_json("hooks", 6)
    card = card_for(data)
    assert (card.title, card.tone, card.folded) == ("blocked", "error", False)
    assert card.exit_code == 2 and card.output.text == "rm is not allowed by project policy"
    assert failure(data) == "hook_blocked" and summary(data) == "PreToolUse hook on terminal blocked"


def test_a_blocked_hook_names_its_reason():
    data = event_json("hooks", 14)
    card = card_for(data)
    assert card.label == "Stop hook" and card.error == "Run the tests before finishing."
    assert summary(data) == "Stop hook blocked: Run the tests before finishing."


def test_a_hook_that_adds_context_shows_it():
    card = card_for(event_json("hooks", 2))
    assert card.facts == [("added context", "Project policy: never delete files.")]


def test_a_failed_hook_is_a_warning_showing_its_error():
    data = {"kind": "HookExecutionEvent", "success": False, "error": "crashed", "stdout": "a\n", "stderr": "b\n"}
    card = card_for(data)
    assert (card.label, card.title, card.tone, card.folded) == ("hook hook", "failed", "warn", False)
    assert card.error == "crashed" and card.output.text == "a\n\nb"
    assert card.exit_code is None and card.output is not None
    assert failure(data) == "" and summary(data) == "hook hook failed"


def test_a_hooks_output_keeps_its_own_spacing_and_is_whole_on_the_event_page():
    stdout = "".join(f"  line {i}  \n" for i in range(PREVIEW_LINES * 2)) + "DONE X\n\n"
    data = {"kind": "HookExecutionEvent", "stdout": stdout}
    assert card_for(data).output.truncated
    shown = card_for(data, full=True).output
    assert not shown.truncated and shown.text == stdout.rstrip("\n")
    assert card_for({"kind": "HookExecutionEvent", "stderr": "  warned  \n"}).output.text == "  warned  "


def test_a_hook_without_output_has_none():
    card = card_for({"kind": "HookExecutionEvent", "hook_event_type": "Stop", "stdout": "", "stderr": ""})
    assert card.output is None and card.error == ""
    assert card_for({"kind": "HookExecutionEvent", "stderr": "only\n"}).output.text == "only"


# --- condensation ---


def test_a_condensation_shows_its_summary_and_what_it_forgot():
    data = event_json("condensation", 14)
    card = card_for(data)
    assert card.label == "Condensation" and card.text.startswith("USER_CONTEXT: user asked")
    assert len(card.forgotten) == 10 and card.forgotten[0] == "c09899ec-6b87-4e03-a97c-8cc848b93780"
    assert card.facts == [("summary at", "position 2 of the model's view")]
    assert summary(data).startswith("USER_CONTEXT")


def test_a_condensation_without_a_summary_counts_what_it_forgot():
    data = {"kind": "Condensation", "forgotten_event_ids": ["a", 3, "b"]}
    assert card_for(data).forgotten == ["a", "b"] and card_for(data).facts == []
    assert summary(data) == "forgot 2 events"
    assert summary({"kind": "Condensation", "forgotten_event_ids": ["a"]}) == "forgot 1 event"
    assert summary({"kind": "Condensation", "forgotten_event_ids": "junk", "summary": ""}) == "forgot 0 events"


def test_a_condensation_request_shows_its_reason():
    data = event_json("condensation", 23)
    assert card_for(data).label == "Condensation requested" and card_for(data).facts == []
    assert summary(data) == "condensation requested"
    card = card_for({"kind": "CondensationRequest", "reason": "r" * 5000})
    assert card.facts == [("reason", "r" * (MAX_ITEMS * 10))]


# --- what the LLM calls left behind ---


def test_token_ids_are_counted_folded():
    data = event_json("tokens-and-logs", 6)
    card = card_for(data)
    assert (card.label, card.folded) == ("Token ids", True)
    assert card.facts == [("prompt", "32 tokens"), ("response", "16 tokens")]
    assert summary(data) == "32 prompt and 16 response token ids"
    assert card_for({"kind": "TokenEvent", "prompt_token_ids": "x"}).facts[0] == ("prompt", "0 tokens")


def test_a_completion_log_is_folded_with_its_facts_and_laid_out_log():
    data = event_json("tokens-and-logs", 7)
    card = card_for(data)
    assert (card.label, card.folded, card.template) == ("Completion log", True, "kinds/log.html")
    assert card.facts == [
        ("model", "openai/fixture-model"),
        ("usage", "agent"),
        ("file", "openai__fixture-model-1796064688.781-5e39.json"),
        ("size", "23,647 characters"),
    ]
    assert card.output.text.startswith('{\n  "context_window": 0,')
    assert card.output.truncated and not card_for(data, full=True).output.truncated
    assert summary(data) == "completion log of openai/fixture-model (23,647 characters)"


def test_a_completion_log_is_laid_out_up_to_a_limit_and_shown_raw_when_not_json():
    log = json.dumps({"k": "x" * 300_000})
    card = card_for({"kind": "LLMCompletionLogEvent", "log_data": log})
    assert card.facts == [("size", f"{len(log):,} characters")]
    assert len(card.output.text) == 8_000 + 2
    assert len(card_for({"kind": "LLMCompletionLogEvent", "log_data": log}, full=True).output.text) == 200_000 + 2
    assert card_for({"kind": "LLMCompletionLogEvent", "log_data": "not json"}).output.text == "not json"
    assert summary({"kind": "LLMCompletionLogEvent"}) == "completion log of the LLM (0 characters)"


# --- the run itself ---


def test_pause_and_interrupt_say_what_the_user_did():
    pause, interrupt = card_for(event_json("pause-interrupt", 6)), card_for(event_json("pause-interrupt", 22))
    assert (pause.label, pause.text, pause.tone) == ("Paused", "The user paused the agent.", "")
    assert (interrupt.label, interrupt.text, interrupt.tone) == (
        "Interrupted",
        "The user interrupted the agent mid-step.",
        "warn",
    )
    assert summary(event_json("pause-interrupt", 6)) == "paused by the user"
    assert summary(event_json("pause-interrupt", 22)) == "interrupted by the user"


@pytest.mark.parametrize(
    ("value", "shown"),
    [("finished", "finished"), (3, "3"), (True, "True"), (None, ""), ({"a": 1}, '{\n  "a": 1\n}')],
)
def test_a_state_update_shows_the_key_and_its_new_value(value, shown):
    data = {"kind": "ConversationStateUpdateEvent", "key": "execution_status", "value": value}
    card = card_for(data)
    assert (card.label, card.extra_json, card.folded) == ("State: execution_status", shown, True)
    assert summary(data) == f"execution_status = {shown}"


def test_a_state_update_is_bounded():
    data = {"kind": "ConversationStateUpdateEvent", "key": "k" * 300, "value": ["x" * 100] * 100}
    card = card_for(data)
    assert card.label == "State: " + "k" * 100
    assert len(card.extra_json) == 2000 + 2 and card.extra_json.endswith("\n…")
    assert summary(data) == "k" * 300 + " = " + card.extra_json[:200]


def test_a_security_analysis_lists_each_actions_risk():
    data = {
        "kind": "SecurityAnalysisEvent",
        "analyzer": "llm",
        "policy": "strict",
        "risks": {"0123456789abcdef": "LOW", "fedcba9876543210": "HIGH"},
        "details": {"why": "rm"},
    }
    card = card_for(data)
    assert card.facts == [
        ("analyzer", "llm"),
        ("policy", "strict"),
        ("action 0123456789ab", "LOW"),
        ("action fedcba987654", "HIGH"),
    ]
    assert card.tone == "warn" and json.loads(card.extra_json) == {"why": "rm"} and card.folded
    assert summary(data) == "security analysis: HIGH, LOW"


def test_a_security_analysis_without_high_risks_is_not_a_warning():
    card = card_for({"kind": "SecurityAnalysisEvent", "risks": {"a": "low"}})
    assert card.tone == "" and card.extra_json == "" and card.left_out == 0
    assert card_for({"kind": "SecurityAnalysisEvent", "risks": {"a": "high"}}).tone == "warn"
    assert summary({"kind": "SecurityAnalysisEvent", "risks": "junk"}) == "security analysis: no actions"


def test_a_security_analysis_lists_at_most_max_items_risks():
    card = card_for({"kind": "SecurityAnalysisEvent", "risks": {str(i): "LOW" for i in range(MAX_ITEMS + 4)}})
    assert len(card.facts) == MAX_ITEMS and card.left_out == 4


# --- ACP tool calls ---


def test_an_acp_tool_call_shows_its_input_output_and_status():
    data = {
        "kind": "ACPToolCallEvent",
        "title": "Read file",
        "tool_call_id": "t1",
        "raw_input": {"path": "a.py"},
        "status": "completed",
        "tool_kind": "read",
        "content": [{"type": "text", "text": "print(1)"}],
        "raw_output": {"ignored": True},
    }
    card = card_for(data)
    assert (card.label, card.tool_call_id, card.tone, card.error) == ("Read file", "t1", "", "")
    assert json.loads(card.arguments) == {"path": "a.py"}
    assert card.facts == [("status", "completed"), ("kind", "read")]
    assert card.output.text == "print(1)"
    assert summary(data) == "Read file" and failure(data) == ""


def test_an_acp_tool_call_without_content_shows_its_raw_output():
    card = card_for({"kind": "ACPToolCallEvent", "raw_output": {"lines": 3}})
    assert card.label == "ACP tool call" and json.loads(card.output.text) == {"lines": 3}
    assert card_for({"kind": "ACPToolCallEvent", "raw_output": 0}).output.text == "0"
    assert card_for({"kind": "ACPToolCallEvent"}).output is None


def test_an_acp_tools_long_output_is_whole_on_the_event_page():
    data = {"kind": "ACPToolCallEvent", "content": "\n".join(["x"] * PREVIEW_LINES * 2)}
    assert card_for(data).output.truncated and not card_for(data, full=True).output.truncated


def test_an_acp_tool_error_is_an_error():
    data = {"kind": "ACPToolCallEvent", "is_error": True}
    card = card_for(data)
    assert (card.tone, card.error) == ("error", "the tool reported an error")
    assert failure(data) == "tool_error"
    assert failure({"kind": "ACPToolCallEvent", "is_error": "true"}) == ""


def test_an_output_under_fields_of_its_own_shows_and_a_card_without_one_says_so():
    from eventviewer.trajectory.cards import result_text
    from eventviewer.trajectory.query import event_text

    shaped = {
        "kind": "ObservationEvent",
        "tool_name": "terminal",
        "observation": {"command": "make", "stdout": "built", "stderr": "warning: x", "exit_code": 2},
    }
    card = card_for(shaped)
    assert card.output.text == "[stdout]\nbuilt\n[stderr]\nwarning: x" and card.exit_code == 2
    assert result_text(shaped) == "[stdout]\nbuilt\n[stderr]\nwarning: x\n[exit code 2]"
    assert "warning: x" in event_text(shaped)
    alone = {"kind": "ObservationEvent", "observation": {"command": "ls", "output": "a.py"}}
    assert card_for(alone).output.text == "a.py"
    task = {"kind": "ObservationEvent", "observation": {"kind": "TaskObservation", "content": [], "status": "done"}}
    assert card_for(task).output.text == ""  # its status is a fact of the card, not output
