"""What the exports write for each kind of event: the review document's lines (a call with
its output, rejection or error, a message, every other kind) and the chat format's tool
results."""

from __future__ import annotations

import pytest

from eventviewer.trajectory import kinds
from eventviewer.trajectory.events import Light
from eventviewer.trajectory.export import chat_message, comment_threads, event_section, review_turn
from eventviewer.trajectory.projection import Message, Turn
from eventviewer.trajectory.reviews import Written

LINK = "http://ev.example/c/1/?at=a1#event-a1"
CALL = Light(event_id="a1", kind=kinds.ACTION, tool_name="terminal", tool_call_id="c1", executable=True)
LS = {"kind": kinds.ACTION, "action": {"kind": "TerminalAction", "command": "ls -la"}}
HEAD = f"- **terminal** ([event]({LINK}))\n  ```sh\n  $ ls -la\n  ```\n"
REJECTION = {"kind": kinds.USER_REJECT, "rejection_reason": "too risky"}
ERROR = {"kind": kinds.AGENT_ERROR, "error": "Tool 'x' is not available"}


def output_of(text: str, **observation: object) -> dict:
    return {"kind": kinds.OBSERVATION, "observation": {"content": [{"type": "text", "text": text}], **observation}}


@pytest.mark.parametrize(
    ("result", "written"),
    [
        (None, ""),
        (output_of("a.py\nb.py", exit_code=0), "  Output (exit code 0):\n  ```text\n  a.py\n  b.py\n  ```\n"),
        (output_of("a.py"), "  Output:\n  ```text\n  a.py\n  ```\n"),
        (
            output_of("no such file", exit_code=2, is_error=True),
            "  Output (exit code 2, the tool reported an error):\n  ```text\n  no such file\n  [exit code 2]\n  ```\n",
        ),
        (output_of("killed", exit_code=-1), "  Output:\n  ```text\n  killed\n  ```\n"),
        (REJECTION, "  Rejected:\n  ```text\n  Action rejected: too risky\n  ```\n"),
        ({"kind": kinds.USER_REJECT}, "  Rejected:\n  ```text\n  Action rejected: rejected\n  ```\n"),
        (ERROR, "  Error:\n  ```text\n  Tool 'x' is not available\n  ```\n"),
    ],
)
def test_a_call_is_written_with_its_command_and_under_it_its_output_rejection_or_error(result, written):
    assert event_section(CALL, LS, LINK, result) == HEAD + written


def test_a_rejection_or_an_error_on_its_own_is_labelled_as_such():
    assert event_section(Light("r1", kinds.USER_REJECT), REJECTION, LINK) == (
        "Rejected:\n```text\nAction rejected: too risky\n```\n"
    )
    assert event_section(Light("e1", kinds.AGENT_ERROR), ERROR, LINK) == (
        "Error:\n```text\nTool 'x' is not available\n```\n"
    )
    assert event_section(Light("o1", kinds.OBSERVATION), output_of("done"), LINK) == "Output:\n```text\ndone\n```\n"


def test_a_call_without_a_command_shows_its_arguments_and_an_invalid_call_says_so():
    editor = CALL._replace(tool_name="file_editor")
    data = {"action": {"kind": "FileEditorAction", "path": "a.py"}, "tool_call": {"arguments": '{"path": "a.py"}'}}
    assert event_section(editor, data, LINK) == (
        f'- **file_editor** ([event]({LINK}))\n  ```json\n  {{\n    "path": "a.py"\n  }}\n  ```\n'
    )
    invalid = event_section(CALL._replace(tool_name=""), {"tool_call": {"arguments": "not json"}}, LINK)
    assert invalid == (
        f"- **tool call** ([event]({LINK}))\n  *invalid call: no action could be made of it*\n"
        "  ```json\n  not json\n  ```\n"
    )


def test_a_message_is_a_markdown_block_of_its_texts():
    data = {"kind": kinds.MESSAGE, "llm_message": {"role": "user", "content": [{"type": "text", "text": "fix *it*"}]}}
    assert event_section(Light("m1", kinds.MESSAGE), data, LINK) == "```markdown\nfix *it*\n```\n"
    prompt = {"kind": kinds.SYSTEM_PROMPT, "system_prompt": {"type": "text", "text": "You are an agent."}}
    assert event_section(Light("s1", kinds.SYSTEM_PROMPT), prompt, LINK) == "```markdown\nYou are an agent.\n```\n"


@pytest.mark.parametrize(
    ("kind", "data", "line"),
    [
        (kinds.PAUSE, {}, "*Paused*: paused by the user\n"),
        (kinds.INTERRUPT, {}, "*Interrupted*: interrupted by the user\n"),
        (
            kinds.CONDENSATION,
            {"forgotten_event_ids": ["a", "b"], "summary": "the story"},
            "*Condensation*: the story\n",
        ),
        (kinds.CONDENSATION_SUMMARY, {"summary": "so far"}, "*Summary*: so far\n"),
        (kinds.CONVERSATION_ERROR, {"code": "X", "detail": "boom *x*"}, "*Conversation error*: X: boom \\*x\\*\n"),
        ("SomethingNew", {}, "*Event*\n"),
    ],
)
def test_every_other_kind_is_one_line_of_its_label_and_summary_escaped(kind, data, line):
    assert event_section(Light("x1", kind), {"kind": kind, **data}, LINK) == line


def link(event_id: str) -> str:
    return f"http://ev.example/c/1/?at={event_id}"


def test_a_turn_is_a_numbered_heading_linking_to_it_then_its_events():
    pause = Turn(events=[Light("p1", kinds.PAUSE)], visible=False, role=None)
    assert review_turn(3, pause, {"p1": {"kind": kinds.PAUSE}}, {}, link) == (
        "### 3. Paused ([link](http://ev.example/c/1/?at=p1))\n\n*Paused*: paused by the user\n\n"
    )
    message = Turn(events=[Light("m1", kinds.MESSAGE, role="user")], visible=True, role="user")
    data = {"m1": {"kind": kinds.MESSAGE, "llm_message": {"content": "hi"}}}
    assert review_turn(1, message, data, {}, link).startswith("### 1. User ([link](")


def test_a_response_is_its_thought_then_each_call_with_its_result():
    second = CALL._replace(event_id="a2", tool_call_id="c2")
    batch = Turn(events=[CALL, second], visible=True, role="assistant")
    data = {
        "a1": {**LS, "thought": [{"type": "text", "text": "Look first."}]},
        "a2": LS,
        "o1": output_of("a.py"),
        "r2": REJECTION,
    }
    assert review_turn(2, batch, data, {"a1": "o1", "a2": "r2"}, link) == (
        "### 2. Assistant · 2 tool calls ([link](http://ev.example/c/1/?at=a1))\n\n"
        "```markdown\nLook first.\n```\n\n"
        "- **terminal** ([event](http://ev.example/c/1/?at=a1))\n  ```sh\n  $ ls -la\n  ```\n"
        "  Output:\n  ```text\n  a.py\n  ```\n"
        "- **terminal** ([event](http://ev.example/c/1/?at=a2))\n  ```sh\n  $ ls -la\n  ```\n"
        "  Rejected:\n  ```text\n  Action rejected: too risky\n  ```\n\n"
    )
    one = Turn(events=[CALL], visible=True, role="assistant")
    assert review_turn(1, one, {"a1": LS}, {}, link).startswith("### 1. Assistant · 1 tool call ([link](")


@pytest.mark.parametrize(
    ("event", "content"),
    [
        (REJECTION, "Action rejected: too risky"),
        ({"kind": kinds.USER_REJECT, "rejection_reason": ""}, "Action rejected: rejected"),
        (ERROR, "Tool 'x' is not available"),
        (output_of("a.py", exit_code=1), "a.py\n[exit code 1]"),
    ],
)
def test_a_tool_result_in_the_chat_format_says_what_came_back(event, content):
    message = Message("tool", str(event["kind"]), ["r1"], tool_call_id="c1")
    assert chat_message(message, [event]) == {"role": "tool", "tool_call_id": "c1", "content": content}


def test_a_response_in_the_chat_format_is_its_thought_and_its_calls():
    message = Message("assistant", kinds.ACTION, ["a1", "a2"])
    first = {
        "kind": kinds.ACTION,
        "thought": [{"type": "text", "text": "Look first."}],
        "tool_call": {"id": "c1", "name": "terminal", "arguments": '{"command": "ls"}'},
    }
    # No tool_call written: its id and name from the event, its arguments from the action.
    second = {"kind": kinds.ACTION, "tool_call_id": "c2", "tool_name": "think", "action": {"thought": "hm"}}
    assert chat_message(message, [first, second]) == {
        "role": "assistant",
        "content": "Look first.",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": '{"command": "ls"}'}},
            {"id": "c2", "type": "function", "function": {"name": "think", "arguments": '{"thought": "hm"}'}},
        ],
    }
    unwritten = {"kind": kinds.ACTION, "tool_call": {"id": 7, "name": None, "arguments": {"path": "a.py"}}}
    assert chat_message(Message("assistant", kinds.ACTION, ["a3"]), [unwritten]) == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "", "type": "function", "function": {"name": "", "arguments": '{"path": "a.py"}'}}],
    }
    assert chat_message(Message("assistant", kinds.ACTION, ["a4"]), [{"kind": kinds.ACTION}])["tool_calls"] == [
        {"id": "", "type": "function", "function": {"name": "", "arguments": "{}"}}
    ]


def test_a_user_message_in_the_chat_format_is_its_text_or_its_parts():
    def user(*events: dict) -> dict:
        return chat_message(Message("user", kinds.MESSAGE, [str(i) for i in range(len(events))]), list(events))

    text = {"kind": kinds.MESSAGE, "llm_message": {"content": [{"type": "text", "text": "fix it"}]}}
    image = {"kind": kinds.MESSAGE, "llm_message": {"content": [{"type": "image", "image_urls": ["data:x", ""]}]}}
    assert user(text) == {"role": "user", "content": "fix it"}
    assert user({"kind": kinds.MESSAGE, "llm_message": {"content": "plain"}}) == {"role": "user", "content": "plain"}
    assert user(text, image) == {
        "role": "user",
        "content": [{"type": "text", "text": "fix it"}, {"type": "image_url", "image_url": {"url": "data:x"}}],
    }
    assert user({"kind": kinds.MESSAGE, "llm_message": {"content": [7, {"type": "other"}]}}) == {
        "role": "user",
        "content": "",
    }
    assert user({"kind": kinds.CONDENSATION_SUMMARY, "summary": "so far"}) == {"role": "user", "content": "so far"}
    prompt = {"kind": kinds.SYSTEM_PROMPT, "system_prompt": {"type": "text", "text": "You are an agent."}}
    assert chat_message(Message("system", kinds.SYSTEM_PROMPT, ["s"]), [prompt]) == {
        "role": "system",
        "content": "You are an agent.",
    }
    assert chat_message(Message("system", kinds.SYSTEM_PROMPT, ["s"]), [{**prompt, "system_prompt": "old"}]) == {
        "role": "system",
        "content": "old",
    }


def test_a_thread_is_its_comment_then_its_replies_each_body_fenced_and_names_escaped():
    root = Written("ann *b*", "2026-12-01 10:00", "Looks *wrong*\n```x", ("bug", "re_try_"), resolved=True)
    replies = [Written("bob", "2026-12-01 11:00", "agreed"), Written("cy", "later", "")]
    assert comment_threads([(root, replies)]) == (
        "- **Comment by ann \\*b\\*, 2026-12-01 10:00 · labels: bug, re_try\\_ · resolved**\n"
        "  ````markdown\n  Looks *wrong*\n  ```x\n  ````\n"
        "  - **Reply by bob, 2026-12-01 11:00**\n    ```markdown\n    agreed\n    ```\n"
        "  - **Reply by cy, later**\n\n"
    )
    assert comment_threads([]) == ""
