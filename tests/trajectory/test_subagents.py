"""Which task call started which sub-agent."""

from eventviewer.trajectory.subagents import TaskCall, match, task_call


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
