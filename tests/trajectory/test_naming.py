"""Branch names tell siblings apart by their own first step and how they end, never by id first."""

from eventviewer.trajectory.naming import branch_names
from eventviewer.trajectory.skeleton import Node, build_skeleton


def skeleton(events, head, labels):
    """A skeleton of (id, parent, kind, outcome) events, labelled as the importer labels it."""
    nodes = [Node(i, parent, seq, 0, kind, outcome) for seq, (i, parent, kind, outcome) in enumerate(events)]
    depth = {}
    for n in nodes:
        depth[n.id] = 0 if n.parent is None else depth[n.parent] + 1
    built = build_skeleton([n._replace(depth=depth[n.id]) for n in nodes], head)
    for node in built["nodes"]:
        node["label"] = labels.get(node["id"], "")
        if node["run"]:
            node["run"]["first_label"] = labels.get(node["run"]["first"], "")
    return built


# The demo's branching-retries: after "ls -1", a Python script or, asked again, a shell one;
# or, before anything, a question about data.txt.
RETRIES = [
    ("sys", None, "SystemPromptEvent", ""),
    ("u", "sys", "MessageEvent", ""),
    ("ls", "u", "ActionEvent", ""),
    ("ls-out", "ls", "ObservationEvent", ""),
    ("py", "ls-out", "ActionEvent", ""),
    ("py-done", "py", "ObservationEvent", "finished"),
    ("ask", "u", "MessageEvent", ""),
    ("ask-done", "ask", "ObservationEvent", "finished"),
    ("sh", "ls-out", "MessageEvent", ""),
    ("sh-done", "sh", "ObservationEvent", "finished"),
]
LABELS = {
    "ls": "terminal: ls -1",
    "py": "file_editor: create /workspace/count.py",
    "ask": "User: Before writing anything, check whether data.txt exists.",
    "sh": "User: Prefer a shell script over Python.",
    "py-done": "finish result: count.py counts words",
    "sh-done": "finish result: count.sh runs wc -w",
    "ask-done": "finish result: there is no data.txt",
}


def test_each_branch_is_named_by_its_own_first_step_and_its_outcome():
    names = branch_names(skeleton(RETRIES, "sh-done", LABELS))
    assert names == {
        "py-done": "file_editor: create /workspace/count.py · finished",
        "sh-done": "User: Prefer a shell script over Python. · finished",
        "ask-done": "User: Before writing anything, check whether data.txt exists. · finished",
    }


def test_retries_of_one_step_are_told_apart_by_how_they_end():
    events = [
        ("sys", None, "SystemPromptEvent", ""),
        ("a1", "sys", "ActionEvent", ""),
        ("o1", "a1", "ObservationEvent", "finished"),
        ("a2", "sys", "ActionEvent", ""),
        ("o2", "a2", "ObservationEvent", "error"),
        ("a3", "sys", "ActionEvent", ""),
        ("o3", "a3", "ObservationEvent", "finished"),
    ]
    labels = {"a1": "terminal: ls -1", "a2": "terminal: ls -1", "a3": "terminal: ls -1"}
    labels |= {"o1": "terminal result: a b", "o3": "terminal result: c"}
    names = branch_names(skeleton(events, "o3", labels))
    assert names["o2"] == "terminal: ls -1 · error"
    assert names["o1"] == "terminal: ls -1 · finished, ends: terminal result: a b"
    assert names["o3"] == "terminal: ls -1 · finished, ends: terminal result: c"


def test_branches_alike_in_every_word_get_the_shortest_start_of_their_id_that_differs():
    events = [("sys", None, "SystemPromptEvent", "")]
    events += [(f"29074545-{i}", "sys", "ObservationEvent", "finished") for i in range(2)]
    names = branch_names(skeleton(events, "29074545-1", {}))
    assert names == {
        "29074545-0": "result · finished, ends: result (29074545-0)",
        "29074545-1": "result · finished, ends: result (29074545-1)",
    }
    assert len(set(names.values())) == 2


def test_the_only_branch_is_named_by_its_leaf():
    events = [("sys", None, "SystemPromptEvent", ""), ("o", "sys", "ObservationEvent", "error")]
    assert branch_names(skeleton(events, "o", {"o": "execute_bash result: Reading"})) == {
        "o": "execute_bash result: Reading · error"
    }


def test_an_open_branch_says_so():
    events = [("sys", None, "SystemPromptEvent", ""), ("a", "sys", "ActionEvent", "")]
    assert branch_names(skeleton(events, "a", {"a": "terminal: sleep 100"})) == {"a": "terminal: sleep 100 · open"}
