"""Which task call started which sub-agent."""

from eventviewer.trajectory.events import one_line
from eventviewer.trajectory.subagents import PROMPT_CHARS, TaskCall, match, task_call


def test_a_child_is_matched_by_its_first_message_whatever_the_order():
    calls = [TaskCall("c1", "Count the lines.", False), TaskCall("c2", "List the files.", False)]
    children = [("kid-a", "List the files."), ("kid-b", "Count the lines.")]
    assert match(calls, children) == {"kid-a": "c2", "kid-b": "c1"}


def test_unmatched_children_take_the_calls_left_in_order_and_resumes_start_none():
    calls = [TaskCall("c1", "a", False), TaskCall("c2", "again", True), TaskCall("c3", "b", False)]
    assert match(calls, [("x", "something else"), ("y", "also else")]) == {"x": "c1", "y": "c3"}


def test_only_task_actions_are_task_calls():
    assert task_call("e", {"kind": "TaskAction", "prompt": "p", "resume": "task_1"}) == TaskCall("e", "p", True)
    assert task_call("e", {"kind": "TerminalAction", "command": "ls"}) is None


def test_a_child_matched_by_its_message_is_not_paired_again():
    calls = [TaskCall("c1", "Count the lines.", False), TaskCall("c2", "List the files.", False)]
    children = [("kid-a", "List the files."), ("kid-b", "something else")]
    assert match(calls, children) == {"kid-a": "c2", "kid-b": "c1"}


def test_two_children_with_the_same_message_take_two_calls():
    calls = [TaskCall("c1", "Do it.", False), TaskCall("c2", "Do it.", False)]
    assert match(calls, [("x", "Do it."), ("y", "Do it.")]) == {"x": "c1", "y": "c2"}


def test_calls_that_started_no_child_are_left_over():
    calls = [TaskCall("c1", "a", False), TaskCall("c2", "b", False), TaskCall("c3", "c", False)]
    assert match(calls, [("x", "zzz")]) == {"x": "c1"}
    assert match([], [("x", "zzz")]) == {}


def test_a_long_prompt_matches_the_title_it_gives_its_child():
    prompt = "Please " + "really " * 100 + "count the lines."
    (child,) = [("kid", one_line(prompt, PROMPT_CHARS))]
    calls = [TaskCall("other", "unrelated", False), TaskCall("c", prompt, False)]
    assert match(calls, [child]) == {"kid": "c"}


def test_a_task_call_without_a_prompt_has_an_empty_one():
    assert task_call("e", {"kind": "TaskAction", "prompt": None}) == TaskCall("e", "", False)
    assert task_call("e", {"kind": "TaskAction", "prompt": 3, "resume": ""}) == TaskCall("e", "", False)
    assert task_call("e", "junk") is None
