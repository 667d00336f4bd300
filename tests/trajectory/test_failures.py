"""Problems and failures of a branch, each kind named, the first one found."""

from eventviewer.trajectory.events import Light, describe
from eventviewer.trajectory.failures import Count, failures, run_end_errors
from eventviewer.trajectory.reading import read

from .sdk import FIXTURES, load_folder


def lights(loaded):
    """The branch as stored rows: Lights with their pk, seq and parent pk."""
    pk = {event_id: i + 1 for i, event_id in enumerate(loaded.data)}
    path = []
    for ev in loaded.path():
        parent = loaded.tree.parent.get(ev.event_id)
        path.append(
            describe(loaded.data[ev.event_id])._replace(pk=pk[ev.event_id], seq=ev.seq, parent_pk=pk.get(parent))
        )
    return path, pk


def folder(scenario):
    (found,) = [p for p in (FIXTURES / scenario).iterdir() if p.is_dir()]
    return load_folder(found)


def test_every_failure_of_the_errors_conversation_is_named_in_order():
    loaded = folder("errors")
    path, _ = lights(loaded)
    reading = read(path)
    found = failures(reading)
    assert list(found.kinds.values()) == [
        "invalid_call",
        "agent_error",
        "invalid_call",
        "agent_error",
        "invalid_call",
        "agent_error",
        "tool_error",
        "conversation_error",
    ]
    summary = found.summary(reading.turns)
    assert [c.label for c in summary.counts] == [
        "1 conversation error",
        "3 agent errors",
        "1 tool error",
        "3 invalid calls",
    ]
    assert summary.first == next(e.event_id for e in path if e.failure == "invalid_call")
    assert summary.first_turn == 3  # system prompt, user message, then the first assistant turn


def test_a_blocked_hook_beside_the_branch_counts_after_the_event_it_ran_beside():
    loaded = folder("hooks")
    path, pk = lights(loaded)
    side = [
        describe(data)._replace(pk=pk[event_id], parent_pk=pk[data["parent_id"]])
        for event_id, data in loaded.data.items()
        if event_id in loaded.answers["other_leaves"]
    ]
    reading = read(path)
    found = failures(reading, side)
    blocked = [e for e, code in found.kinds.items() if code == "hook_blocked"]
    assert len(blocked) == 3  # two beside the branch (PreToolUse, UserPromptSubmit), one on it (Stop)
    assert "rejected" in found.kinds.values()
    side_blocks = [e for e in blocked if e in found.beside]
    assert len(side_blocks) == 2
    assert all(found.beside[e] in {x.event_id for x in path} for e in side_blocks)


def test_pending_and_mismatched_come_from_pairing_first():
    action = Light("a1", "ActionEvent", tool_name="t", tool_call_id="c1", llm_response_id="r", executable=True, pk=1)
    wrong = Light(
        "o1", "ObservationEvent", tool_name="other", tool_call_id="c1", action_id="a1", failure="exit_code", pk=2
    )
    reading = read([action, wrong])
    assert failures(reading).kinds == {"a1": "pending", "o1": "mismatched"}


def test_a_branch_without_failures_has_an_empty_summary():
    path = [Light("u", "MessageEvent", source="user", pk=1), Light("m", "MessageEvent", source="agent", pk=2)]
    reading = read(path)
    summary = failures(reading).summary(reading.turns)
    assert (summary.counts, summary.total, summary.first, summary.first_code, summary.first_turn) == (
        [],
        0,
        None,
        None,
        None,
    )


def test_the_first_failure_names_its_kind_and_turn():
    path = [
        Light("u", "MessageEvent", source="user", pk=1),
        Light("e1", "AgentErrorEvent", failure="agent_error", pk=2),
        Light("e2", "ConversationErrorEvent", failure="conversation_error", pk=3),
    ]
    reading = read(path)
    summary = failures(reading).summary(reading.turns)
    assert (summary.first, summary.first_code, summary.first_turn, summary.total) == ("e1", "agent_error", 2, 2)
    assert [c.label for c in summary.counts] == ["1 conversation error", "1 agent error"]


def test_a_failing_side_event_first_points_at_the_turn_it_ran_beside():
    path = [Light("u", "MessageEvent", source="user", pk=1), Light("m", "MessageEvent", source="agent", pk=2)]
    hook = Light("h", "HookExecutionEvent", failure="hook_blocked", pk=3, parent_pk=2)
    reading = read(path)
    found = failures(reading, [hook])
    assert found.kinds == {"h": "hook_blocked"} and found.beside == {"h": "m"}
    summary = found.summary(reading.turns)
    assert (summary.first, summary.first_code, summary.first_turn) == ("h", "hook_blocked", 2)


def test_a_failure_outside_every_turn_has_no_turn():
    summary = failures(read([Light("e", "AgentErrorEvent", failure="agent_error", pk=1)])).summary([])
    assert (summary.first, summary.first_turn) == ("e", None)


def test_a_side_event_without_a_parent_is_beside_nothing():
    path = [Light("u", "MessageEvent", source="user", pk=1), Light("v", "MessageEvent", source="agent")]
    orphan = Light("h", "HookExecutionEvent", failure="hook_blocked", pk=3)
    assert failures(read(path), [orphan]).kinds == {}


def test_side_events_that_did_not_fail_are_not_counted():
    path = [Light("u", "MessageEvent", source="user", pk=1)]
    assert failures(read(path), [Light("h", "HookExecutionEvent", pk=2, parent_pk=1)]).kinds == {}


def test_counts_read_one_or_many():
    assert [Count(code, 1).label for code in ("pending", "exit_code", "rejected")] == [
        "1 pending action",
        "1 non-zero exit code",
        "1 rejection",
    ]
    assert Count("hook_blocked", 1_200).label == "1,200 hook blocks"
    assert Count("mismatched", 0).label == "0 mismatched results"


def legacy_end(kinds_after):
    """HEAD (a finish message) and the tree events appended after it, each the previous one's child."""
    head = Light("m", "MessageEvent", source="agent", pk=1, seq=5, depth=5)
    after = [
        Light(f"x{i}", kind, failure="conversation_error" if kind == "ConversationErrorEvent" else "", pk=i + 2)
        for i, kind in enumerate(kinds_after)
    ]
    after = [e._replace(parent_pk=1 if i == 0 else after[i - 1].pk, seq=6 + i) for i, e in enumerate(after)]
    return head, after


def test_conversation_errors_that_ended_the_run_below_head_count_for_its_branch():
    head, after = legacy_end(["ConversationErrorEvent", "ConversationErrorEvent"])
    ended = run_end_errors(head, after)
    assert [e.event_id for e in ended] == ["x0", "x1"]
    reading = read([head])
    found = failures(reading, (), ended)
    assert found.kinds == {"x0": "conversation_error", "x1": "conversation_error"}
    summary = found.summary(reading.turns)
    assert [c.label for c in summary.counts] == ["2 conversation errors"]
    assert summary.ended_label == "2 conversation errors" and summary.first_below


def test_a_run_that_went_on_after_head_did_not_end_in_its_errors():
    head, after = legacy_end(["ConversationErrorEvent", "MessageEvent", "ConversationErrorEvent"])
    assert run_end_errors(head, after) == []
    head, after = legacy_end(["ConversationErrorEvent"])
    assert run_end_errors(head, [after[0]._replace(parent_pk=99)]) == []  # not below HEAD
    assert failures(read([head])).summary([]).ended == ()
