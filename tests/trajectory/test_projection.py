from eventviewer.trajectory.projection import project, to_messages

from .events import act, err, msg, obs, other


def shape(turns):
    return [(t.role, t.event_ids) for t in turns]


def test_consecutive_actions_of_one_response_are_one_turn_with_k_calls():
    turns = project([msg("u"), act("a1", "c1"), act("a2", "c2"), act("a3", "c3"), obs("o1", "a1", "c1")])
    assert shape(turns) == [("user", ["u"]), ("assistant", ["a1", "a2", "a3"]), ("tool", ["o1"])]
    assert turns[1].tool_call_ids == ["c1", "c2", "c3"]


def test_events_the_model_never_sees_do_not_break_a_batch():
    path = [
        act("a1", "c1"),
        other("p", "PauseEvent"),
        other("h", "HookExecutionEvent"),
        other("cr", "CondensationRequest"),
        act("a2", "c2"),
    ]
    turns = project(path)
    assert shape(turns) == [("assistant", ["a1", "a2"]), (None, ["p"]), (None, ["h"]), (None, ["cr"])]
    assert [t.visible for t in turns] == [True, False, False, False]


def test_an_agent_error_splits_a_batch_and_the_split_is_noted():
    turns = project([act("a1", "c1"), act("a2", "c2", executable=False), err("e2", "c2"), act("a3", "c3")])
    assert shape(turns) == [("assistant", ["a1", "a2"]), ("tool", ["e2"]), ("assistant", ["a3"])]
    assert turns[2].continues == "a1"
    assert sum(len(t.tool_call_ids) for t in turns) == 3


def test_a_message_between_actions_of_one_response_splits_them():
    turns = project([act("a1", "c1"), msg("u"), act("a2", "c2")])
    assert shape(turns) == [("assistant", ["a1"]), ("user", ["u"]), ("assistant", ["a2"])]


def test_actions_of_different_responses_are_different_turns():
    turns = project([act("a1", "c1", response="r1"), act("a2", "c2", response="r2")])
    assert shape(turns) == [("assistant", ["a1"]), ("assistant", ["a2"])]
    assert turns[1].continues is None


def test_a_later_action_with_its_own_text_is_kept_and_flagged():
    turns = project([act("a1", "c1", text=True), act("a2", "c2", text=True), act("a3", "c3")])
    assert turns[0].event_ids == ["a1", "a2", "a3"]
    assert turns[0].stray_text == ["a2"]


def test_roles_follow_the_sdk():
    turns = project([other("s", "SystemPromptEvent"), msg("u"), msg("m", role="assistant"), other("x", "Condensation")])
    assert [(t.role, t.visible) for t in turns] == [
        ("system", True),
        ("user", True),
        ("assistant", True),
        (None, False),
    ]


def test_an_action_without_a_response_id_is_its_own_assistant_message():
    messages = to_messages([msg("u1"), act("a1", "k1", response=""), act("a2", "k2", response="")])
    assert [(m.role, m.event_ids) for m in messages] == [("user", ["u1"]), ("assistant", ["a1", "a2"])]
    (only,) = to_messages([act("a1", "k1", response="")])
    assert (only.role, only.kind, only.tool_call_ids) == ("assistant", "ActionEvent", ["k1"])


def test_each_message_names_its_first_events_kind_and_the_call_it_answers():
    messages = to_messages([msg("u1"), act("a1", "k1"), obs("o1", "a1", "k1"), err("e1", "k1")])
    assert [(m.kind, m.tool_call_id) for m in messages] == [
        ("MessageEvent", ""),
        ("ActionEvent", ""),
        ("ObservationEvent", "k1"),
        ("AgentErrorEvent", "k1"),
    ]
