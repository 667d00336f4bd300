"""Property-based tests of the pure trajectory rules: tree, projection, pairing.

Each property is checked against a brute-force reference written here in the
simplest possible way, on random logs that hypothesis shrinks when they fail.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eventviewer.trajectory import kinds
from eventviewer.trajectory.pairing import focus, pair, problems_per_leaf
from eventviewer.trajectory.projection import project
from eventviewer.trajectory.tree import Entry, TreeError, build_tree

from .events import act, err, obs
from .sdk import Ev

FAST = settings(max_examples=200, deadline=None)

TREE_KINDS = [
    kinds.MESSAGE,
    kinds.ACTION,
    kinds.OBSERVATION,
    kinds.STATE_UPDATE,
    kinds.CONVERSATION_ERROR,
    "PauseEvent",
    kinds.SYSTEM_PROMPT,
    kinds.AGENT_ERROR,
]
INVISIBLE = [
    "PauseEvent",
    kinds.CONDENSATION,
    kinds.CONDENSATION_REQUEST,
    kinds.STATE_UPDATE,
    kinds.CONVERSATION_ERROR,
    "HookExecutionEvent",
]
VISIBLE = sorted(kinds.LLM_VISIBLE - {kinds.ACTION})


class Row(NamedTuple):
    id: str
    kind: str
    parent_ref: str | None


# --- the tree ------------------------------------------------------------------------


def entries_of(rows: list[Row]) -> list[Entry]:
    return [Entry(seq, *row, where=f"event-{seq:05d}-{row.id}.json") for seq, row in enumerate(rows)]


def reference_parents(rows: list[Row]) -> dict[str, str | None]:
    """Each tree event's parent by the SDK's rules, for logs with unique, unreserved ids."""
    parents: dict[str, str | None] = {}
    previous = None
    for row in rows:
        if row.kind == kinds.STATE_UPDATE:
            continue
        if row.parent_ref == kinds.ROOT_PARENT_ID:
            parents[row.id] = None
        elif row.parent_ref is not None:
            parents[row.id] = row.parent_ref
        else:
            parents[row.id] = previous
        previous = row.id
    return parents


def reference_path(parents: dict[str, str | None], leaf: str) -> list[str] | None:
    """Root-first path, or None when the walk meets a missing event or a cycle."""
    chain, seen = [], set()
    current: str | None = leaf
    while current is not None:
        if current in seen or current not in parents:
            return None
        seen.add(current)
        chain.append(current)
        current = parents[current]
    return chain[::-1]


def reference_cycles(parents: dict[str, str | None]) -> list[frozenset[str]]:
    cycles = set()
    for start in parents:
        chain: list[str] = []
        current: str | None = start
        while current is not None and current in parents and current not in chain:
            chain.append(current)
            current = parents[current]
        if current is not None and current in chain:
            cycles.add(frozenset(chain[chain.index(current) :]))
    return list(cycles)


@st.composite
def logs(draw, forward: bool = False, min_size: int = 1) -> list[Row]:
    """A log in append order. Parents are an earlier tree event, null (legacy) or
    "__root__"; with ``forward``, also any tree event at all (later ones, itself)."""
    size = draw(st.integers(min_size, 25))
    names = draw(st.permutations([f"ev{i}" for i in range(size)]))  # ids never follow append order
    event_kinds = draw(st.lists(st.sampled_from(TREE_KINDS), min_size=size, max_size=size))
    nodes = [name for name, kind in zip(names, event_kinds, strict=True) if kind != kinds.STATE_UPDATE]
    rows = []
    for name, kind in zip(names, event_kinds, strict=True):
        earlier = [r.id for r in rows if r.kind != kinds.STATE_UPDATE]
        choices = ["legacy", "root"] + (["earlier"] if earlier else []) + (["any"] if forward and nodes else [])
        choice = draw(st.sampled_from(choices))
        if choice == "earlier":
            ref = draw(st.sampled_from(earlier))
        elif choice == "any":
            ref = draw(st.sampled_from(nodes))
        else:
            ref = None if choice == "legacy" else kinds.ROOT_PARENT_ID
        rows.append(Row(name, kind, ref))
    return rows


def shuffled(draw, rows: list[Row]) -> list[Entry]:
    """The entries in any order: only ``seq`` says what was appended first."""
    return draw(st.permutations(entries_of(rows)))


def problems_of(entries: list[Entry]) -> list:
    with pytest.raises(TreeError) as caught:
        build_tree(entries)
    assert str(caught.value) == "\n".join(str(p) for p in caught.value.problems)
    return caught.value.problems


@FAST
@given(st.data())
def test_every_path_matches_a_brute_force_walk_of_the_sdk_rules(data):
    rows = data.draw(logs())
    tree = build_tree(shuffled(data.draw, rows))
    parents = reference_parents(rows)
    assert tree.parent == parents
    assert list(tree.parent) == [r.id for r in rows if r.kind != kinds.STATE_UPDATE]  # append order
    roots = {r.id for r in rows if r.kind != kinds.STATE_UPDATE and parents[r.id] is None}
    for node in parents:
        path = tree.path(node)
        assert path == reference_path(parents, node)
        assert tree.depth[node] == len(path) - 1
        assert path[0] in roots and path[-1] == node
    assert set(tree.depth) == set(parents)


@FAST
@given(st.data())
def test_state_updates_are_never_nodes_nor_legacy_parents(data):
    rows = data.draw(logs())
    tree = build_tree(entries_of(rows))
    updates = {r.id for r in rows if r.kind == kinds.STATE_UPDATE}
    assert not updates & set(tree.parent)
    assert not updates & {p for p in tree.parent.values() if p is not None}


@FAST
@given(st.data())
def test_a_null_parent_roots_only_the_first_tree_event(data):
    rows = data.draw(logs())
    tree = build_tree(entries_of(rows))
    nodes = [r for r in rows if r.kind != kinds.STATE_UPDATE]
    if nodes and nodes[0].parent_ref is None:
        assert tree.parent[nodes[0].id] is None
    for before, row in zip(nodes, nodes[1:], strict=False):
        if row.parent_ref is None:
            assert tree.parent[row.id] == before.id


@FAST
@given(st.data())
def test_head_is_the_leaf_event_id_else_the_last_tree_event_that_is_not_an_error(data):
    rows = data.draw(logs())
    tree = build_tree(entries_of(rows))
    candidates = [r.id for r in rows if r.kind not in (kinds.STATE_UPDATE, kinds.CONVERSATION_ERROR)]
    assert tree.head(None) == (candidates[-1] if candidates else None)
    assert tree.head(None, head_is_empty=True) is None
    for node in tree.parent:
        assert tree.head(node) == node
        assert tree.head(node, head_is_empty=True) == node
    for missing in ["ghost", *(r.id for r in rows if r.kind == kinds.STATE_UPDATE)]:
        with pytest.raises(TreeError, match="does not exist"):
            tree.head(missing)


@FAST
@given(st.data())
def test_parents_may_come_later_and_every_cycle_is_reported_once(data):
    rows = data.draw(logs(forward=True))
    parents = reference_parents(rows)
    cycles = reference_cycles(parents)
    if not cycles:
        tree = build_tree(shuffled(data.draw, rows))
        for node in parents:
            assert tree.path(node) == reference_path(parents, node)
            assert tree.depth[node] == len(tree.path(node)) - 1
        return
    found = problems_of(shuffled(data.draw, rows))
    assert len(found) == len(cycles)
    assert all("cycle" in p.message for p in found)
    named = [p.event_id for p in found]
    assert all(sum(name in cycle for name in named) == 1 for cycle in cycles)
    for p in found:
        seq = next(i for i, r in enumerate(rows) if r.id == p.event_id)
        assert p.where == f"event-{seq:05d}-{p.event_id}.json"


def valid_log(min_size: int = 1):
    return logs(min_size=min_size).filter(lambda rows: any(r.kind != kinds.STATE_UPDATE for r in rows))


def pick_node(data, rows: list[Row], label: str) -> int:
    return data.draw(st.sampled_from([i for i, r in enumerate(rows) if r.kind != kinds.STATE_UPDATE]), label=label)


@FAST
@given(st.data())
def test_a_missing_parent_is_reported_on_its_event(data):
    rows = data.draw(valid_log())
    i = pick_node(data, rows, "orphan")
    rows[i] = rows[i]._replace(parent_ref="ghost")
    (problem,) = problems_of(shuffled(data.draw, rows))
    assert (problem.event_id, problem.message) == (rows[i].id, "parent ghost does not exist")
    assert problem.where == f"event-{i:05d}-{rows[i].id}.json"


@FAST
@given(st.data())
def test_a_parent_that_is_a_state_update_is_reported_on_its_event(data):
    rows = data.draw(valid_log())
    rows.append(Row("update", kinds.STATE_UPDATE, None))
    i = pick_node(data, rows, "child")
    rows[i] = rows[i]._replace(parent_ref="update")
    (problem,) = problems_of(entries_of(rows))
    assert problem.event_id == rows[i].id and "is a ConversationStateUpdateEvent" in problem.message


@FAST
@given(st.data())
def test_re_pointing_an_ancestor_at_a_descendant_is_one_cycle(data):
    rows = data.draw(valid_log())
    parents = reference_parents(rows)
    descendant = data.draw(st.sampled_from(sorted(parents)), label="descendant")
    path = reference_path(parents, descendant)
    ancestor = data.draw(st.sampled_from(path), label="ancestor")  # may be the descendant: a self-loop
    loop = set(path[path.index(ancestor) :])
    rows = [r._replace(parent_ref=descendant) if r.id == ancestor else r for r in rows]
    (problem,) = problems_of(shuffled(data.draw, rows))
    assert problem.event_id in loop
    if len(loop) == 1:
        assert problem.message == "is its own parent (cycle)"
    else:
        assert problem.message.startswith("the parent chain loops back to this event (cycle: ")
        assert set(problem.message.removesuffix(")").split("(cycle: ")[1].split(" -> ")) == loop


@FAST
@given(st.data())
def test_a_duplicate_id_is_reported_on_the_later_event(data):
    rows = data.draw(valid_log())
    first = data.draw(st.sampled_from(range(len(rows))), label="first")
    kind = data.draw(st.sampled_from(TREE_KINDS), label="kind")
    rows.append(Row(rows[first].id, kind, data.draw(st.sampled_from([None, kinds.ROOT_PARENT_ID]))))
    (problem,) = problems_of(shuffled(data.draw, rows))
    assert problem.event_id == rows[first].id
    assert problem.where == f"event-{len(rows) - 1:05d}-{rows[first].id}.json"
    assert problem.message == f"duplicate event id (first seen in event-{first:05d}-{rows[first].id}.json)"


@FAST
@given(st.data())
def test_a_duplicate_in_place_is_always_refused_and_named(data):
    rows = data.draw(valid_log(min_size=2))
    i, j = sorted(data.draw(st.lists(st.sampled_from(range(len(rows))), min_size=2, max_size=2, unique=True)))
    rows[j] = rows[j]._replace(id=rows[i].id)
    found = problems_of(entries_of(rows))
    assert any(p.event_id == rows[i].id and p.message.startswith("duplicate event id") for p in found)
    assert all(p.event_id in {r.id for r in rows} for p in found)


@FAST
@given(st.data())
def test_the_reserved_root_id_is_refused_wherever_it_appears(data):
    rows = data.draw(valid_log())
    i = data.draw(st.integers(0, len(rows)), label="position")
    rows.insert(i, Row(kinds.ROOT_PARENT_ID, data.draw(st.sampled_from(TREE_KINDS)), None))
    # Shifting later events by one keeps every parent valid: only the reserved id is wrong.
    found = problems_of(entries_of(rows))
    assert [(p.event_id, p.where) for p in found] == [(kinds.ROOT_PARENT_ID, f"event-{i:05d}-__root__.json")]
    assert "reserved" in found[0].message


@FAST
@given(st.data())
def test_every_kind_of_problem_is_reported_at_once(data):
    rows = data.draw(valid_log(min_size=2))
    parents = reference_parents(rows)
    descendant = data.draw(st.sampled_from(sorted(parents)), label="descendant")
    path = reference_path(parents, descendant)
    ancestor = data.draw(st.sampled_from(path), label="ancestor")
    loop = set(path[path.index(ancestor) :])
    rows = [r._replace(parent_ref=descendant) if r.id == ancestor else r for r in rows]
    outside = [i for i, r in enumerate(rows) if r.kind != kinds.STATE_UPDATE and r.id not in loop]
    orphan = data.draw(st.sampled_from(outside), label="orphan") if outside else None
    if orphan is not None:
        rows[orphan] = rows[orphan]._replace(parent_ref="ghost")
    rows.append(Row(rows[0].id, kinds.MESSAGE, None))
    found = problems_of(entries_of(rows))
    assert sum(p.message.startswith("duplicate event id") for p in found) == 1
    assert sum("cycle" in p.message and p.event_id in loop for p in found) == 1
    assert sum(p.message == "parent ghost does not exist" for p in found) == (orphan is not None)
    assert len(found) == 2 + (orphan is not None)


# --- the projection ------------------------------------------------------------------


@st.composite
def model_paths(draw) -> list[Ev]:
    """Actions of a few responses mixed with events the model sees and does not see."""
    path = []
    for i, what in enumerate(draw(st.lists(st.sampled_from(["action"] * 3 + ["visible", "invisible"]), max_size=30))):
        if what == "action":
            path.append(
                act(
                    f"p{i}",
                    f"call{i}",
                    response=draw(st.sampled_from(["r1", "r2", "r3", ""])),
                    executable=draw(st.booleans()),
                    text=draw(st.booleans()),
                )
            )
        else:
            kind = draw(st.sampled_from(VISIBLE if what == "visible" else INVISIBLE))
            path.append(Ev(f"p{i}", kind, source="agent", role=draw(st.sampled_from(["", "user", "assistant"]))))
    return path


@FAST
@given(model_paths())
def test_projection_conserves_every_tool_call_and_every_event(path):
    turns = project(path)
    actions = [e for e in path if e.kind == kinds.ACTION]
    assert sum(len(t.tool_call_ids) for t in turns) == len(actions)
    assert [c for t in turns for c in t.tool_call_ids] == [e.tool_call_id for e in actions]
    placed = [e.event_id for t in turns for e in t.events]
    assert sorted(placed) == sorted(e.event_id for e in path) and len(set(placed)) == len(placed)
    index = {e.event_id: i for i, e in enumerate(path)}
    starts = [index[t.events[0].event_id] for t in turns]
    assert starts == sorted(starts)  # turns come in the order of their first event
    for t in turns:
        assert [index[e.event_id] for e in t.events] == sorted(index[e.event_id] for e in t.events)
    # What the model sees keeps the path's order exactly.
    assert [e.event_id for t in turns if t.visible for e in t.events] == [
        e.event_id for e in path if e.kind in kinds.LLM_VISIBLE
    ]


@FAST
@given(model_paths())
def test_turns_have_the_sdk_roles(path):
    for t in project(path):
        if t.kind == kinds.ACTION:
            assert t.is_batch and t.role == "assistant" and t.visible
        else:
            assert len(t.events) == 1 and not t.tool_call_ids
            assert t.visible == (t.kind in kinds.LLM_VISIBLE)
            assert t.role == (kinds.role_of(t.kind, t.events[0].role) if t.visible else None)
        if t.tool_call_ids:
            assert t.role == "assistant"


@FAST
@given(model_paths())
def test_a_batch_is_a_maximal_run_of_one_response_ignoring_what_the_model_never_sees(path):
    turns = project(path)
    seen = [e for e in path if e.kind in kinds.LLM_VISIBLE]  # the model's view of the path
    position = {e.event_id: i for i, e in enumerate(seen)}
    first_of_response: dict[str, str] = {}
    for t in turns:
        if not t.is_batch:
            continue
        response = t.events[0].llm_response_id
        assert all(e.kind == kinds.ACTION and e.llm_response_id == response for e in t.events)
        spots = [position[e.event_id] for e in t.events]
        assert spots == list(range(spots[0], spots[0] + len(spots)))  # consecutive in the model's view
        after = spots[-1] + 1
        assert not (after < len(seen) and seen[after].kind == kinds.ACTION and seen[after].llm_response_id == response)
        before = spots[0] - 1
        assert not (before >= 0 and seen[before].kind == kinds.ACTION and seen[before].llm_response_id == response)
        assert t.stray_text == [e.event_id for e in t.events[1:] if e.carries_text]
        assert t.continues == (first_of_response.get(response) if response else None)
        if response:
            first_of_response.setdefault(response, t.events[0].event_id)


# --- pairing -------------------------------------------------------------------------

CALLS = st.sampled_from(["c1", "c2", "c3", ""])
TOOL_NAMES = ["terminal", "file_editor"]
TOOLS = st.sampled_from(TOOL_NAMES)
RESULT_KINDS = [kinds.OBSERVATION, kinds.USER_REJECT, kinds.AGENT_ERROR]


@st.composite
def paired_paths(draw) -> tuple[list[Ev], frozenset[str]]:
    """Actions and results in any order, results naming right or wrong actions."""
    actions = [
        act(f"a{i}", draw(CALLS), tool=draw(TOOLS), executable=draw(st.booleans()))
        for i in range(draw(st.integers(0, 6)))
    ]
    others = [Ev("m0", kinds.MESSAGE, role="user"), Ev("p0", "PauseEvent")][: draw(st.integers(0, 2))]
    results = []
    for i in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from(RESULT_KINDS))
        target = draw(st.sampled_from(actions)) if actions and draw(st.booleans()) else None
        call = target.tool_call_id if target and draw(st.booleans()) else draw(CALLS)
        tool = target.tool_name if target and draw(st.booleans()) else draw(st.sampled_from([*TOOL_NAMES, ""]))
        if kind == kinds.AGENT_ERROR:
            results.append(err(f"r{i}", call, tool=tool))
        else:
            action_id = target.event_id if target else draw(st.sampled_from(["", "ghost", "x1", "m0", "p0", f"r{i}"]))
            results.append(obs(f"r{i}", action_id, call, tool=tool, kind=kind))
    path = draw(st.permutations(actions + results + others))
    elsewhere = draw(st.sampled_from([frozenset(), frozenset({"x1"})]))
    return path, elsewhere


@FAST
@given(paired_paths())
def test_every_result_either_answers_one_action_or_is_mismatched(args):
    path, elsewhere = args
    result = pair(path, elsewhere)
    by_id = {e.event_id: e for e in path}
    assert not set(result.answers) & set(result.mismatched)
    for e in path:
        if e.kind in kinds.ACTION_RESULTS or (e.kind == kinds.AGENT_ERROR and e.tool_call_id):
            assert (e.event_id in result.answers) != (e.event_id in result.mismatched)
        else:
            assert e.event_id not in result.answers and e.event_id not in result.mismatched
    # answers and result_for are one bijection: each action is answered at most once.
    assert {a: r for r, a in result.answers.items()} == result.result_for
    assert len(set(result.answers.values())) == len(result.answers)
    for answer, action_id in result.answers.items():
        action, res = by_id[action_id], by_id[answer]
        assert action.kind == kinds.ACTION and path.index(action) < path.index(res)
        assert res.tool_call_id == action.tool_call_id
        if res.kind in kinds.ACTION_RESULTS:
            assert res.action_id == action_id and res.tool_name == action.tool_name


@FAST
@given(paired_paths())
def test_pending_is_every_executable_action_without_a_valid_result(args):
    path, elsewhere = args
    result = pair(path, elsewhere)
    executable = [e.event_id for e in path if e.kind == kinds.ACTION and e.executable]
    assert result.pending == [a for a in executable if a not in result.result_for]
    assert not set(result.pending) & set(result.result_for)
    assert result.problem_count == len(result.pending) + len(result.mismatched)


@FAST
@given(paired_paths())
def test_an_observation_answers_exactly_when_the_brute_force_rule_says_so(args):
    path, elsewhere = args
    result = pair(path, elsewhere)
    answered: set[str] = set()
    for i, e in enumerate(path):
        earlier = path[:i]
        if e.kind in kinds.ACTION_RESULTS:
            fits = [
                a
                for a in earlier
                if a.kind == kinds.ACTION
                and a.event_id == e.action_id
                and a.tool_call_id == e.tool_call_id
                and a.tool_name == e.tool_name
            ]
        elif e.kind == kinds.AGENT_ERROR and e.tool_call_id:
            makers = [a for a in earlier if a.kind == kinds.ACTION and a.tool_call_id == e.tool_call_id]
            fits = [a for a in makers[-1:] if not (e.tool_name and a.tool_name and e.tool_name != a.tool_name)]
        else:
            continue
        expected = fits[0].event_id if fits and fits[0].event_id not in answered else None
        assert result.answers.get(e.event_id) == expected
        if expected:
            answered.add(expected)
        else:
            mismatch = result.mismatched[e.event_id]
            assert mismatch.code and mismatch.reason and "\n" not in mismatch.reason
            if fits:
                assert mismatch.code == "duplicate"


@dataclass
class Placed(Ev):
    """An event placed in a tree, as the stored rows are."""

    pk: int = 0
    parent_pk: int | None = None


@FAST
@given(paired_paths(), st.data())
def test_the_one_walk_counts_each_branchs_problems_as_pairing_that_branch_does(args, data):
    path, _ = args
    placed: list[Placed] = []
    for pk, e in enumerate(path, start=1):  # each event hangs on an earlier one, or is a root
        parent = data.draw(st.sampled_from([None, *[p.pk for p in placed]]))
        placed.append(Placed(**vars(e), pk=pk, parent_pk=parent))
    by_pk = {p.pk: p for p in placed}
    parents = {p.parent_pk for p in placed}
    found = problems_per_leaf(placed)
    leaves = [p for p in placed if p.pk not in parents]
    assert set(found) == {p.event_id for p in leaves}
    for leaf in leaves:
        branch, current = [], leaf
        while current is not None:
            branch.append(current)
            current = by_pk.get(current.parent_pk) if current.parent_pk else None
        expected = pair(branch[::-1])
        assert found[leaf.event_id] == (len(expected.pending), len(expected.mismatched))


@FAST
@given(paired_paths(), st.data())
def test_pairing_what_decides_some_events_says_what_the_whole_branch_says_about_them(args, data):
    path, elsewhere = args
    picked = data.draw(st.sets(st.sampled_from(range(len(path)))) if path else st.just(set()), label="shown")
    shown = [path[i] for i in sorted(picked)]
    whole = pair(path, elsewhere)
    decides = focus(shown)
    part = pair([e for e in path if decides.decides(e)], elsewhere)
    for event in shown:
        eid = event.event_id
        assert (eid in part.pending) == (eid in whole.pending)
        assert part.mismatched.get(eid) == whole.mismatched.get(eid)
        assert part.result_for.get(eid) == whole.result_for.get(eid)
        assert part.answers.get(eid) == whole.answers.get(eid)
        assert part.unmatched_for.get(eid) == whole.unmatched_for.get(eid)
