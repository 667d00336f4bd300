"""Problems and failures of a branch, each kind named, the first one found."""

from eventviewer.trajectory.events import Light, describe
from eventviewer.trajectory.failures import failures
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
