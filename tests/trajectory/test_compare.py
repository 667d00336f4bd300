"""Two branches compared: the shared prefix, steps, and their alignment (pure)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from eventviewer.trajectory import compare
from eventviewer.trajectory.cards import result_text
from eventviewer.trajectory.compare import Key, Pair

from .events import act, msg, obs, other


def call(text: str, tool: str = "terminal") -> Key:
    return Key("calls", (tool,), text)


LS, TEST, FINISH = call("ls"), call("pytest -q"), call("done", "finish")


def test_identical_steps_align_one_to_one():
    steps = [LS, call("create a.py", "file_editor"), TEST, FINISH]
    assert compare.align(steps, list(steps)) == [Pair(i, i) for i in range(4)]


def test_an_extra_step_on_one_side_does_not_shift_the_rest():
    a = [LS, call("create a.py", "file_editor"), TEST, FINISH]
    b = [LS, call("cat README"), call("create a.py", "file_editor"), TEST, FINISH]
    assert compare.align(a, b) == [Pair(0, 0), Pair(None, 1), Pair(1, 2), Pair(2, 3), Pair(3, 4)]


def test_a_step_missing_on_one_side_is_a_deletion():
    a = [LS, call("cat README"), TEST, FINISH]
    b = [LS, TEST, FINISH]
    assert compare.align(a, b) == [Pair(0, 0), Pair(1, None), Pair(2, 1), Pair(3, 2)]


def test_a_changed_call_pairs_with_its_counterpart_not_with_an_unrelated_step():
    a = [LS, call('{"command": "create", "path": "a.py", "file_text": "v1"}', "file_editor"), TEST]
    b = [LS, call("cat README"), call('{"command": "create", "path": "a.py", "file_text": "v2"}', "file_editor"), TEST]
    assert compare.align(a, b) == [Pair(0, 0), Pair(None, 1), Pair(1, 2), Pair(2, 3)]


def test_a_substitution_pairs_the_same_tool_and_leaves_other_tools_apart():
    assert compare.align([LS, call("pytest -x"), FINISH], [LS, TEST, FINISH]) == [Pair(0, 0), Pair(1, 1), Pair(2, 2)]
    apart = compare.align([LS, call("x", "think"), FINISH], [LS, TEST, FINISH])
    assert apart == [Pair(0, 0), Pair(1, None), Pair(None, 1), Pair(2, 2)]


def test_messages_pair_by_role():
    a = [Key("message", ("user",), "fix the bug"), LS]
    b = [Key("message", ("user",), "fix the bug, and add a test"), LS]
    assert compare.align(a, b) == [Pair(0, 0), Pair(1, 1)]
    other_role = [Key("message", ("assistant",), "fix the bug, and add a test"), LS]
    assert compare.align(a, other_role) == [Pair(0, None), Pair(None, 0), Pair(1, 1)]


def test_events_of_other_kinds_never_pair():
    def one(event) -> Key:
        return compare.describe(compare.Step([event]), {event.event_id: {"kind": event.kind}}).key

    pause, condensation = one(other("p1", "PauseEvent")), one(other("c1", "Condensation"))
    a, b = [LS, pause, FINISH], [LS, condensation, FINISH]
    assert compare.align(a, b) == [Pair(0, 0), Pair(1, None), Pair(None, 1), Pair(2, 2)]
    assert compare.align(a, [LS, pause, FINISH]) == [Pair(0, 0), Pair(1, 1), Pair(2, 2)]


def test_a_long_gap_is_aligned_in_blocks_and_stays_an_alignment():
    a = [call(f"step {i}") for i in range(600)]
    b = [call(f"step {i} again") for i in range(700)]
    pairs = compare.align(a, b)
    assert [p.a for p in pairs if p.a is not None] == list(range(600))
    assert [p.b for p in pairs if p.b is not None] == list(range(700))
    assert sum(1 for p in pairs if p.a is not None and p.b is not None) >= 500


KEYS = st.lists(
    st.builds(
        call, st.sampled_from(["ls", "cat a", "pytest", "make", "rm x"]), st.sampled_from(["terminal", "file_editor"])
    ),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(KEYS, KEYS)
def test_every_step_is_aligned_once_in_order_and_equal_pairs_are_maximal(a, b):
    pairs = compare.align(a, b)
    assert [p.a for p in pairs if p.a is not None] == list(range(len(a)))
    assert [p.b for p in pairs if p.b is not None] == list(range(len(b)))
    if a == b:
        assert pairs == [Pair(i, i) for i in range(len(a))]
    # Never a step alone on each side next to each other when they could pair.
    for x, y in zip(pairs, pairs[1:], strict=False):
        if x.b is None and y.a is None:
            assert not could_pair(a[x.a], b[y.b])


def could_pair(x: Key, y: Key) -> bool:
    return x.kind == y.kind and bool(set(x.labels) & set(y.labels))


def test_the_common_prefix():
    assert compare.common_prefix([1, 2, 3, 4], [1, 2, 5], lambda x, y: x == y) == 2
    assert compare.common_prefix([], [1], lambda x, y: x == y) == 0
    assert compare.common_prefix([1, 2], [1, 2], lambda x, y: x == y) == 2
    assert compare.common_prefix([1, 9, 3], [1, 2, 3], lambda x, y: x == y) == 1


def test_a_step_is_a_response_with_its_results_and_side_events_are_left_out():
    tail = [
        act("a1", "c1", response="r1"),
        act("a2", "c2", response="r1"),
        obs("o2", "a2", "c2"),
        other("h1", "HookExecutionEvent"),
        obs("o1", "a1", "c1"),
        msg("m1"),
        obs("o9", "a9", "c9"),  # answers an action before the fork
    ]
    for seq, event in enumerate(tail):
        event.seq = seq
    steps = compare.steps(tail, {"a1": "o1", "a2": "o2", "a9": "o9"})
    assert [[e.event_id for e in s.events] for s in steps] == [["a1", "a2", "o2", "o1"], ["m1"], ["o9"]]
    assert [e.event_id for e in steps[0].calls] == ["a1", "a2"] and [e.event_id for e in steps[0].results] == [
        "o2",
        "o1",
    ]


def action_data(command: str, summary: str) -> dict:
    return {
        "kind": "ActionEvent",
        "tool_name": "terminal",
        "action": {"kind": "TerminalAction", "command": command, "summary": summary},
        "tool_call": {"arguments": f'{{"command": "{command}", "summary": "{summary}"}}'},
    }


def result_data(text: str, exit_code: int = 0) -> dict:
    return {
        "kind": "ObservationEvent",
        "observation": {"content": [{"type": "text", "text": text}], "exit_code": exit_code},
    }


def described(command: str, summary: str, text: str, exit_code: int = 0) -> compare.Step:
    step = compare.Step([act("a", "c"), obs("o", "a", "c")])
    return compare.describe(step, {"a": action_data(command, summary), "o": result_data(text, exit_code)})


def test_a_step_key_is_what_ran_and_its_fingerprint_adds_what_came_back():
    one, two = described("ls", "list files", "a.py"), described("ls", "look around", "a.py")
    assert one.key == two.key == Key("calls", ("terminal",), '{\n "command": "ls"\n}')
    assert one.fingerprint == two.fingerprint
    assert described("ls", "x", "a.py b.py").fingerprint != one.fingerprint
    assert described("ls", "x", "a.py", exit_code=2).fingerprint != one.fingerprint
    assert described("ls -a", "x", "a.py").key != one.key


def test_rows_fold_runs_of_steps_alike():
    steps = [compare.Step([act(f"a{i}", "c")], key=call(str(i)), fingerprint=i) for i in range(4)]
    other_steps = [
        compare.Step([act(f"b{i}", "c")], key=call(str(i)), fingerprint=f) for i, f in enumerate([0, 1, 9, 3])
    ]
    pairs = [Pair(0, 0), Pair(1, 1), Pair(2, 2), Pair(None, 3), Pair(3, None)]
    rows = compare.rows(pairs, steps, other_steps)
    assert [(r.kind, len(r.pairs)) for r in rows] == [("same", 2), ("changed", 1), ("only_b", 1), ("only_a", 1)]


def test_only_the_first_steps_are_described_reading_a_bounded_number_of_events_at_a_time(monkeypatch):
    monkeypatch.setattr(compare, "MAX_STEPS", 30)
    found = [compare.Step([act(f"a{i}", f"c{i}"), obs(f"o{i}", f"a{i}", f"c{i}")]) for i in range(100)]
    reads: list[int] = []

    def read(events):
        reads.append(len(events))
        return {
            e.event_id: action_data(f"cmd {e.event_id}", "") if e.event_id[0] == "a" else result_data("ok")
            for e in events
        }

    kept = compare.described(found, read, per=10)
    assert len(kept) == 30 and all(step.fingerprint is not None for step in kept)
    assert sum(reads) == 60 and max(reads) <= 10  # no step of the 70 left out was read


def test_a_long_text_is_cut_in_the_key_but_the_fingerprint_holds_all_of_it():
    long = "x" * compare.MAX_TEXT
    one, two = described("ls", "", long + "1"), described("ls", "", long + "2")
    for step in (one, two):
        compare.describe(step, {"a": action_data("ls", ""), "o": result_data(step.output)}, compare.MAX_TEXT)
    assert one.output == two.output == long  # what the page keeps of each
    assert one.fingerprint != two.fingerprint  # they did not do the same


def test_a_calls_arguments_are_what_ran_else_what_the_model_wrote_without_its_remarks():
    ran = {"action": {"command": "ls", "summary": "look", "security_risk": "LOW", "kind": "TerminalAction"}}
    assert compare.arguments(ran) == '{\n "command": "ls"\n}'
    written = {"tool_call": {"arguments": '{"summary": "look", "path": "é.py", "command": "view"}'}}
    assert compare.arguments(written) == '{\n "command": "view",\n "path": "é.py"\n}'
    assert compare.arguments({"tool_call": {"arguments": "[2, 1]"}}) == "[\n 2,\n 1\n]"
    assert compare.arguments({"tool_call": {"arguments": "not json {"}}) == "not json {"


def test_a_messages_key_is_its_text_and_a_results_the_output_or_reason():
    assert compare.message_text({"llm_message": {"content": [{"type": "text", "text": "hi"}]}}) == "hi"
    assert compare.message_text({"llm_message": "hi"}) == compare.message_text({}) == ""
    assert result_text({"rejection_reason": "no"}) == "no" and result_text({"error": "boom"}) == "boom"
    assert result_text(result_data("out", exit_code=-1)) == result_text(result_data("out")) == "out"
    assert result_text(result_data("out", exit_code=1)) == "out\n[exit code 1]"
