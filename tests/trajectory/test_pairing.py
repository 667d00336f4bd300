import pytest

from eventviewer.trajectory.pairing import Identity, LeafProblems, pair, problems_per_leaf, referenced_actions

from .events import act, err, msg, obs, other


def test_results_may_come_in_any_order():
    result = pair([act("a1", "c1"), act("a2", "c2"), obs("o2", "a2", "c2"), obs("o1", "a1", "c1")])
    assert result.pending == []
    assert result.result_for == {"a2": "o2", "a1": "o1"}


def test_an_action_without_a_result_is_pending_in_path_order():
    result = pair([act("a1", "c1"), act("a2", "c2"), act("a3", "c3"), obs("o2", "a2", "c2")])
    assert result.pending == ["a1", "a3"]


def test_an_invalid_call_is_never_pending_and_an_agent_error_answers_by_tool_call_id():
    result = pair([act("a1", "c1", executable=False), err("e1", "c1"), act("a2", "c2", executable=False)])
    assert result.pending == []
    assert result.result_for == {"a1": "e1"}


def test_a_rejection_answers_its_action():
    result = pair([act("a1", "c1"), obs("r1", "a1", "c1", kind="UserRejectObservation")])
    assert result.pending == [] and result.answers == {"r1": "a1"}


@pytest.mark.parametrize(
    ("path", "elsewhere", "code", "text"),
    [
        ([obs("o", "ghost", "c1")], set(), "unknown_action", "does not exist in this conversation"),
        ([obs("o", "a9", "c1")], {"a9"}, "other_branch", "on another branch"),
        ([obs("o", "a1", "c1"), act("a1", "c1")], set(), "before_action", "comes before its action a1"),
        ([act("a1", "c1"), obs("o", "a1", "c2")], set(), "tool_call_id", "'c2' does not match the action's 'c1'"),
        (
            [act("a1", "c1"), obs("o", "a1", "c1", tool="file_editor")],
            set(),
            "tool_name",
            "'file_editor' does not match",
        ),
        ([act("a1", "c1"), obs("o1", "a1", "c1"), obs("o", "a1", "c1")], set(), "duplicate", "already answered by o1"),
        ([msg("m"), obs("o", "m", "c1")], set(), "unknown_action", "is a MessageEvent, not an action"),
        ([obs("o", "", "c1")], set(), "no_action_id", "names no action"),
        ([err("o", "c7")], set(), "unknown_tool_call", "no action on this branch made"),
        ([err("o", "c1"), act("a1", "c1")], set(), "before_action", "comes before the action"),
        ([act("a1", "c1"), err("o", "c1", tool="other")], set(), "tool_name", "does not match"),
        ([act("a1", "c1"), obs("o1", "a1", "c1"), err("o", "c1")], set(), "duplicate", "second result"),
    ],
)
def test_each_kind_of_mismatch_is_flagged_with_a_reason(path, elsewhere, code, text):
    result = pair(path, elsewhere)
    assert list(result.mismatched) == ["o"]
    assert result.mismatched["o"].code == code
    assert text in result.mismatched["o"].reason
    assert "o" not in result.answers


def test_a_mismatched_result_does_not_answer_its_action():
    result = pair([act("a1", "c1"), obs("bad", "a1", "c9")])
    assert result.pending == ["a1"]
    assert "bad" in result.mismatched


def test_a_result_is_never_both_valid_and_mismatched():
    path = [
        act("a1", "c1"),
        obs("o1", "a1", "c1"),
        obs("o2", "a1", "c1"),
        obs("o3", "a1", "zz"),
        other("x", "PauseEvent"),
    ]
    result = pair(path)
    assert not set(result.answers) & set(result.mismatched)


def test_it_asks_only_for_actions_off_the_path():
    assert referenced_actions([act("a1", "c1"), obs("o1", "a1", "c1"), obs("o2", "far", "c2")]) == {"far"}


@pytest.mark.parametrize(
    ("path", "elsewhere", "refs", "action"),
    [
        ([obs("o", "ghost", "c1")], set(), (), ""),  # nothing to link to: the action does not exist
        ([obs("o", "a9", "c1")], {"a9"}, ("a9",), ""),
        ([obs("o", "a1", "c1"), act("a1", "c1")], set(), ("a1",), "a1"),
        ([act("a1", "c1"), obs("o", "a1", "c2")], set(), (), "a1"),
        ([act("a1", "c1"), obs("o1", "a1", "c1"), obs("o", "a1", "c1")], set(), ("a1", "o1"), "a1"),
        ([msg("m"), obs("o", "m", "c1")], set(), ("m",), ""),
        ([err("o", "c1"), act("a1", "c1")], set(), (), "a1"),
        ([act("a1", "c1"), err("o", "c1", tool="other")], set(), (), "a1"),
        ([err("o", "c7")], set(), (), ""),
    ],
)
def test_a_mismatch_names_the_events_it_refers_to_and_the_action_it_was_meant_for(path, elsewhere, refs, action):
    mismatch = pair(path, elsewhere).mismatched["o"]
    assert (mismatch.refs, mismatch.action) == (refs, action)
    assert all(ref in mismatch.reason for ref in refs)


def test_a_pending_action_knows_the_mismatched_results_meant_for_it():
    result = pair(
        [act("a1", "c1"), act("a2", "c2"), obs("bad", "a1", "c9"), obs("o2", "a2", "c2"), obs("x", "a2", "c2")]
    )
    assert result.pending == ["a1"]
    assert result.unmatched_for == {"a1": ["bad"], "a2": ["x"]}  # a2 is answered: x is a duplicate


# A tool_call_id made again by a later action (a retry): an agent error with that call
# answers the latest action that made it.
REUSED = [act("a1", "c1"), obs("o1", "a1", "c1"), act("a2", "c1"), err("e1", "c1")]


def test_an_agent_error_answers_the_latest_action_that_made_its_tool_call():
    result = pair(REUSED)
    assert result.answers == {"o1": "a1", "e1": "a2"}
    assert result.pending == [] and result.mismatched == {}


def placed(pk: int, parent: int | None, event) -> Identity:
    fields = ("event_id", "kind", "tool_name", "tool_call_id", "action_id", "executable")
    return Identity(pk, parent, *(getattr(event, name) for name in fields))


def test_the_one_walk_answers_a_reused_tool_call_with_its_latest_action_on_each_branch():
    # a1 -> o1 -> a2 -> e1 (the retry answered), and beside a2: o1 -> e2 (a1 answered twice).
    tree = [placed(pk, pk - 1 or None, e) for pk, e in enumerate(REUSED, start=1)]
    tree.append(placed(5, 2, err("e2", "c1")))
    assert problems_per_leaf(tree) == {
        "e1": LeafProblems(pending=0, mismatched=0),
        "e2": LeafProblems(pending=0, mismatched=1),
    }
