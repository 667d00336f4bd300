"""What the model was sent, for every conversation the SDK answered for (sets A and A2,
sub-agents included): the messages of the branch and the view after condensation."""

import pytest

from eventviewer.trajectory.kinds import CONDENSATION
from eventviewer.trajectory.model_view import Condensed, context_sizes, model_view
from eventviewer.trajectory.reading import read

from .events import act, msg, obs, other
from .sdk import CONVERSATIONS, FIXTURES, load_folder


def sdk_messages(messages):
    return [
        {"role": m.role, "event_ids": m.event_ids, "tool_call_ids": m.tool_call_ids}
        | ({"tool_call_id": m.tool_call_id} if m.tool_call_id else {})
        for m in messages
    ]


def condensations(loaded):
    return {i: Condensed.of(d) for i, d in loaded.data.items() if d["kind"] == CONDENSATION}


@pytest.mark.parametrize("relpath", CONVERSATIONS)
def test_the_messages_are_events_to_messages_with_user_messages_merged(relpath):
    loaded = load_folder(FIXTURES / relpath)
    assert sdk_messages(read(loaded.path()).messages) == loaded.answers["path_messages"]


@pytest.mark.parametrize("relpath", CONVERSATIONS)
def test_the_model_view_is_the_sdks(relpath):
    loaded = load_folder(FIXTURES / relpath)
    view = model_view(loaded.path(), condensations(loaded))
    assert view.event_ids == loaded.answers["view_event_ids"]
    assert sdk_messages(view.messages) == loaded.answers["view_messages"]
    assert view.unhandled_condensation_request == loaded.answers["view_unhandled_condensation_request"]


@pytest.mark.parametrize("relpath", [c for c in CONVERSATIONS if c.startswith(("condense-head-before", "hooks"))])
def test_every_other_leaf_reads_as_the_sdk_reads_it(relpath):
    loaded = load_folder(FIXTURES / relpath)
    assert loaded.answers["other_leaves"]
    for leaf, answer in loaded.answers["other_leaves"].items():
        path = loaded.path(leaf)
        reading = read(path)
        assert [e.event_id for e in path] == answer["path"]
        assert [m.tool_call_ids for m in reading.messages if m.tool_call_ids] == answer["tool_call_groups"]
        assert reading.pairing.pending == answer["pending_action_ids"]


def test_a_condensation_forgets_events_and_puts_its_summary_at_its_offset():
    c = other("c1", CONDENSATION)
    path = [other("s", "SystemPromptEvent"), msg("u1"), act("a1", "k1"), obs("o1", "a1", "k1"), msg("u2"), c]
    view = model_view(path, {"c1": Condensed(frozenset({"a1", "o1"}), True, 1)})
    assert view.event_ids == ["s", "c1-summary", "u1", "u2"]
    assert view.forgotten_by == {"a1": "c1", "o1": "c1"}
    # The summary is a plain user message: the SDK sends it with the user messages beside it.
    assert [m.event_ids for m in view.messages] == [["s"], ["c1-summary", "u1", "u2"]]


def test_the_clean_up_drops_pending_actions_and_broken_batches():
    path = [msg("u1"), act("a1", "k1", response="r"), act("a2", "k2", response="r"), obs("o1", "a1", "k1")]
    view = model_view(path, {})
    # a2 has no result: it goes, and with it the rest of its response's batch, then o1's action is gone.
    assert view.event_ids == ["u1"]
    assert view.dropped == {"a1", "a2", "o1"}


def test_a_second_result_for_one_call_is_dropped():
    path = [msg("u1"), act("a1", "k1"), obs("o1", "a1", "k1"), obs("o2", "a1", "k1")]
    assert model_view(path, {}).event_ids == ["u1", "a1", "o1"]


def test_a_condensation_request_waits_until_a_condensation():
    path = [msg("u1"), other("r1", "CondensationRequest")]
    assert model_view(path, {}).unhandled_condensation_request
    assert not model_view([*path, other("c1", CONDENSATION)], {}).unhandled_condensation_request


def test_context_sizes_grow_and_drop_at_a_condensation():
    path = [
        msg("u1"),
        act("a1", "k1", response="r1"),
        obs("o1", "a1", "k1"),
        other("c1", CONDENSATION),
        act("a2", "k2", response="r2"),
    ]
    sizes = context_sizes(path, {"c1": Condensed(frozenset({"a1", "o1"}), True, 0)})
    assert sizes == {"r1": 1, "r2": 2}


def test_a_tool_loop_opened_by_thinking_blocks_stays_whole_or_goes():
    first = act("a1", "k1", response="r1")
    first.thinking = True
    path = [
        msg("u1"),
        first,
        obs("o1", "a1", "k1"),
        act("a2", "k2", response="r2"),
        obs("o2", "a2", "k2"),
        other("c1", CONDENSATION),
        msg("u2"),
    ]
    # Forgetting a1 and o1 alone would leave the loop's a2 and o2: they go too.
    view = model_view(path, {"c1": Condensed(frozenset({"a1", "o1"}))})
    assert view.event_ids == ["u1", "u2"]
    assert view.dropped == {"a2", "o2"}


@pytest.mark.parametrize(
    ("data", "condensed"),
    [
        ({"forgotten_event_ids": ["a", 3], "summary": "s", "summary_offset": 0}, Condensed(frozenset({"a"}), True, 0)),
        ({"forgotten_event_ids": "ab", "summary": 3, "summary_offset": 2}, Condensed(frozenset(), False, 2)),
        ({"forgotten_event_ids": None, "summary_offset": -1}, Condensed()),
        ({"summary": "", "summary_offset": True}, Condensed(frozenset(), True, None)),
        ({"summary_offset": "1"}, Condensed()),
    ],
)
def test_what_a_condensation_says_is_read_from_its_json_and_junk_counts_as_absent(data, condensed):
    assert Condensed.of(data) == condensed


def test_a_summary_at_offset_zero_comes_first():
    path = [msg("u1"), msg("u2"), other("c1", CONDENSATION)]
    assert model_view(path, {"c1": Condensed(frozenset({"u1"}), True, 0)}).event_ids == ["c1-summary", "u2"]


def test_a_condensation_without_a_summary_puts_none_in_the_view():
    path = [msg("u1"), msg("u2"), other("c1", CONDENSATION)]
    assert model_view(path, {"c1": Condensed(frozenset({"u1"}), False, 0)}).event_ids == ["u2"]
    assert model_view(path, {"c1": Condensed(frozenset({"u1"}), True, None)}).event_ids == ["u2"]


def test_a_summary_is_a_user_message_from_the_environment_at_the_condensations_time():
    condensation = other("c1", CONDENSATION)
    condensation.timestamp = "2026-01-01T00:00:00"
    view = model_view([msg("u1"), condensation], {"c1": Condensed(frozenset(), True, 1)})
    summary = view.events[1]
    assert (summary.event_id, summary.kind) == ("c1-summary", "CondensationSummaryEvent")
    assert (summary.source, summary.role, summary.timestamp) == ("environment", "user", "2026-01-01T00:00:00")
    assert view.summaries == {"c1-summary": "c1"}


def test_only_the_calls_and_messages_of_a_response_have_a_context_size():
    condensation = other("c1", CONDENSATION)
    condensation.llm_response_id = "condenser-call"
    path = [msg("u1"), act("a1", "k1", response="r1"), obs("o1", "a1", "k1"), condensation]
    assert context_sizes(path, {}) == {"r1": 1}


def test_a_view_of_one_whole_tool_loop_keeps_it():
    first = act("a1", "k1", response="r1")
    first.thinking = True
    assert model_view([first, obs("o1", "a1", "k1")], {}).event_ids == ["a1", "o1"]


def test_tool_loops_one_after_another_are_each_whole():
    loops = []
    for i in (1, 2):
        action = act(f"a{i}", f"k{i}", response=f"r{i}")
        action.thinking = True
        loops += [action, obs(f"o{i}", f"a{i}", f"k{i}")]
    path = [msg("u1"), *loops, other("c1", CONDENSATION)]
    view = model_view(path, {"c1": Condensed(frozenset({"a1"}))})
    # The first loop lost its action, so its result goes; the second is whole and stays.
    assert view.event_ids == ["u1", "a2", "o2"]
    assert model_view(path[:-1], {}).event_ids == ["u1", "a1", "o1", "a2", "o2"]


def test_broken_batches_all_go():
    path = [
        msg("u1"),
        act("a1", "k1", response="r1"),
        act("a2", "k2", response="r1"),
        act("b1", "m1", response="r2"),
        act("b2", "m2", response="r2"),
        obs("o1", "a1", "k1"),
        obs("o2", "a2", "k2"),
        obs("p1", "b1", "m1"),
        obs("p2", "b2", "m2"),
        other("c1", CONDENSATION),
    ]
    view = model_view(path, {"c1": Condensed(frozenset({"a1", "b1"}))})
    assert view.event_ids == ["u1"]
