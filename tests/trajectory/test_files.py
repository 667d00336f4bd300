"""File changes read from tool results, and what ran on other branches (pure)."""

from __future__ import annotations

import re
from typing import NamedTuple

import pytest

from eventviewer.trajectory import files, shell
from eventviewer.trajectory.diff import Diff

from .sdk import CONVERSATIONS, FIXTURES, load_folder


@pytest.mark.parametrize(
    ("command", "writes", "effect"),
    [
        ("echo 'hello world' > hello.txt && ls -1", [("write", "/workspace/hello.txt", "hello world\n")], "edit"),
        (
            "cat > app.py <<'EOF'\nprint(1)\nx = 2\nEOF\npython app.py",
            [("write", "/workspace/app.py", "print(1)\nx = 2\n")],
            "edit",
        ),
        ("printf 'a\\n' >> notes/log.txt", [("append", "/workspace/notes/log.txt", None)], "edit"),
        (
            "rm -rf build dist/x.whl",
            [("delete", "/workspace/build", None), ("delete", "/workspace/dist/x.whl", None)],
            "edit",
        ),
        ("mv old.py new.py", [("move", "/workspace/new.py", None)], "edit"),
        ("sed -i 's/a/b/' x.py ../y.py", [("edit", "/workspace/x.py", None), ("edit", "/y.py", None)], "edit"),
        ("sed -i.bak -e 's/a/b/' x.py", [("edit", "/workspace/x.py", None)], "edit"),
        ("cd /tmp && touch a && cd sub && cp a b", [("touch", "/tmp/a", None), ("write", "/tmp/sub/b", None)], "edit"),
        ("python run.py > out.txt 2>/dev/null", [("write", "/workspace/out.txt", None)], "edit"),
        ("cat <<EOF | tee -a log.md\nline\nEOF", [("append", "/workspace/log.md", None)], "edit"),
        ("pytest -q 2>&1 | tail -5", [], "command"),
        ("git commit -am 'a > b'", [], "command"),
        ("echo 'unbalanced", [], "command"),
        ("mkdir -p build && ls", [], "command"),
        ("ls -la && git status && git diff | head && grep -rn 'x > y' . > /dev/null", [], ""),
        ("wc -l < README.md; python3 --version", [], ""),
        ("find . -name '*.pyc' -delete", [], "command"),
        ('echo "a;b" > "my notes.txt"', [("write", "/workspace/my notes.txt", "a;b\n")], "edit"),
        (
            "cat a\\ b.txt>out&&rm 'old file'",
            [("write", "/workspace/out", None), ("delete", "/workspace/old file", None)],
            "edit",
        ),
    ],
)
def test_it_reads_what_a_command_writes(command, writes, effect):
    found = shell.read_command(command, "/workspace")
    assert [(w.op, w.path, w.content) for w in found.writes] == writes
    assert files.effect(terminal(command)) == effect


def test_without_a_working_directory_relative_paths_stay_as_written():
    assert [w.path for w in shell.read_command("echo x > out.txt; cd sub; rm y").writes] == ["out.txt", "y"]
    assert [w.path for w in shell.read_command("cd /srv/app && rm y").writes] == ["/srv/app/y"]


def terminal(command: str, working_dir: str = "/workspace", text: str = "") -> dict:
    return {
        "kind": "ObservationEvent",
        "tool_name": "terminal",
        "observation": {
            "kind": "TerminalObservation",
            "command": command,
            "content": [{"type": "text", "text": text}],
            "metadata": {"working_dir": working_dir},
        },
    }


def editor(command: str, path: str, old: str | None, new: str | None, error: bool = False) -> dict:
    observation = {"kind": "FileEditorObservation", "command": command, "path": path, "is_error": error}
    observation.update({"prev_exist": old is not None, "old_content": old, "new_content": new})
    return {"kind": "ObservationEvent", "tool_name": "file_editor", "observation": observation}


@pytest.mark.parametrize(
    ("data", "effect"),
    [
        (editor("create", "/w/a.py", None, "x\n"), files.EDIT),
        (editor("str_replace", "/w/a.py", "x\n", "y\n"), files.EDIT),
        (editor("str_replace", "/w/a.py", None, None, error=True), ""),
        (editor("view", "/w/a.py", None, None), ""),
        (terminal("echo hi > a"), files.EDIT),
        (terminal("make"), files.COMMAND),
        (terminal("ls"), ""),
        ({"kind": "ObservationEvent", "observation": {"kind": "TaskObservation"}}, files.COMMAND),
        ({"kind": "ObservationEvent", "observation": {"kind": "ThinkObservation"}}, ""),
        ({"kind": "ObservationEvent", "observation": "junk"}, ""),
    ],
)
def test_the_effect_of_a_result(data, effect):
    assert files.effect(data) == effect


def apply(before: str, diff: Diff) -> str:
    """A unified diff applied to ``before``: the simplest patch, for checking diffs."""
    old = before.splitlines(keepends=True)
    out: list[str] = []
    at = 0
    for line in diff.lines:
        if line.tone == "hunk":
            start = int(re.match(r"@@ -(\d+)", line.text).group(1))
            start = max(start - 1, 0) if ",0 " not in line.text.split("+")[0] else start
            out.extend(old[at:start])
            at = start
        elif line.tone == "del":
            at += 1
        elif line.tone == "add":
            out.append(line.text[1:] + "\n")
        elif line.tone == "":
            out.append(old[at])
            at += 1
    out.extend(old[at:])
    return "".join(out)


def editor_results() -> list[tuple[str, str, dict]]:
    found = []
    for relpath in CONVERSATIONS:
        loaded = load_folder(FIXTURES / relpath)
        for event_id, data in loaded.data.items():
            observation = data.get("observation") or {}
            if observation.get("kind") == "FileEditorObservation" and observation.get("command") in files.EDITOR_WRITES:
                found.append((relpath, event_id, data))
    return found


EDITOR_RESULTS = editor_results()


def test_the_fixtures_hold_file_edits():
    assert len(EDITOR_RESULTS) >= 60
    assert {d["observation"]["command"] for _, _, d in EDITOR_RESULTS} == {"create", "str_replace"}


@pytest.mark.parametrize(("relpath", "event_id", "data"), EDITOR_RESULTS, ids=[e for _, e, _ in EDITOR_RESULTS])
def test_each_fixture_edit_is_a_diff_that_turns_the_old_file_into_the_new(relpath, event_id, data):
    observation = data["observation"]
    (change,) = files.changes(event_id, data)
    assert (change.event_id, change.path, change.exact) == (event_id, observation["path"], True)
    assert change.op == ("create" if observation["command"] == "create" else "edit")
    assert apply(observation.get("old_content") or "", change.diff) == observation["new_content"]


def test_a_created_file_is_all_added_lines():
    data = editor("create", "/workspace/count.py", None, "print(1)\nprint(2)\n")
    (change,) = files.changes("e1", data)
    assert [(line.tone, line.text) for line in change.diff.lines] == [
        ("head", "--- /dev/null"),
        ("head", "+++ b/workspace/count.py"),
        ("hunk", "@@ -0,0 +1,2 @@"),
        ("add", "+print(1)"),
        ("add", "+print(2)"),
    ]
    assert change.diff.added == 2 and change.diff.removed == 0


def test_a_failed_edit_and_a_read_change_nothing():
    assert files.changes("e", editor("str_replace", "/w/a", "x", "y", error=True)) == []
    assert files.changes("e", editor("view", "/w/a", None, None)) == []
    assert files.changes("e", terminal("cat a.txt")) == []


def test_a_command_change_says_what_is_not_known():
    write, gone = files.changes("e", terminal("echo 'wc -w data.txt' > count.sh && rm -f old.sh"))
    assert (write.path, write.op, write.exact) == ("/workspace/count.sh", "write", False)
    assert [line.text for line in write.diff.lines if line.tone == "add"] == ["+wc -w data.txt"]
    assert "before is not recorded" in write.note
    assert (gone.path, gone.op, gone.diff.lines) == ("/workspace/old.sh", "delete", [])
    (edited,) = files.changes("e", terminal("sed -i 's/a/b/' x.py"))
    assert edited.note == "the command does not say what it wrote"


def test_a_command_that_changes_directory_does_not_start_in_the_directory_it_ends_in():
    (change,) = files.changes("e", terminal("cd sub && echo x > a", working_dir="/workspace/sub"))
    assert change.path == "a"  # where "sub" was is not known
    (change,) = files.changes("e", terminal("cd sub && echo x > a", working_dir="/workspace/sub"), cwd="/workspace")
    assert change.path == "/workspace/sub/a"


def test_changes_are_grouped_by_file_with_how_the_branch_left_it():
    found = [
        *files.changes("e1", editor("create", "/w/a.py", None, "1\n")),
        *files.changes("e2", editor("str_replace", "/w/b.py", "1\n", "2\n")),
        *files.changes("e3", editor("str_replace", "/w/a.py", "1\n", "2\n")),
        *files.changes("e4", terminal("mv /w/b.py /w/c.py && rm /w/a.py")),
    ]
    histories = files.by_file(found)
    assert [(h.path, h.status, [c.event_id for c in h.changes]) for h in histories] == [
        ("/w/a.py", "deleted", ["e1", "e3", "e4"]),
        ("/w/b.py", "deleted", ["e2", "e4"]),
        ("/w/c.py", "edited", ["e4"]),
    ]
    assert histories[1].changes[-1].note == "moved to /w/c.py"


def test_a_file_changed_more_than_once_by_file_editor_has_its_net_diff():
    found = [
        *files.changes("e1", editor("create", "/w/a.py", None, "one\n")),
        *files.changes("e2", editor("str_replace", "/w/a.py", "one\n", "two\n")),
        *files.changes("e3", editor("str_replace", "/w/a.py", "two\n", "three\n")),
        *files.changes("e4", editor("str_replace", "/w/b.py", "1\n", "2\n")),
        *files.changes("e5", editor("str_replace", "/w/c.py", "x\n", "y\n")),
        *files.changes("e6", editor("str_replace", "/w/c.py", "y\n", "x\n")),
    ]
    a, b, c = files.by_file(found)
    assert a.net is not None and [line.text for line in a.net.lines] == [
        "--- /dev/null",
        "+++ b/w/a.py",
        "@@ -0,0 +1 @@",
        "+three",
    ]
    assert b.net is None  # changed once: its one diff is the net
    assert c.net is not None and c.net.lines == []  # changed back
    assert all(change.texts is None for h in (a, b, c) for change in h.changes)  # not kept past grouping


def test_a_file_last_written_by_a_command_has_no_net_diff():
    found = [
        *files.changes("e1", editor("str_replace", "/workspace/a.sh", "1\n", "2\n")),
        *files.changes("e2", terminal("echo x > a.sh")),
    ]
    (history,) = files.by_file(found)
    assert history.net is None


class P(NamedTuple):
    event_id: str
    pk: int


def ran(pk: int, parent: int | None, effect: str = files.EDIT, timestamp: str = "2026-01-01T00:00:10") -> files.Ran:
    return files.Ran(f"e{pk}", pk, parent, effect, timestamp)


def listed(found: files.Drift) -> dict[str, list[str]]:
    return {fork.event_id: [r.event_id for r in fork.ran] for fork in found.forks}


# A tree: 1 -> 2 -> 3 -> 4 (the path read); 2 -> 5 -> 6 -> 7 and 3 -> 8 (other branches); 9 -> 10 (a second root).
PARENTS = {1: None, 2: 1, 3: 2, 4: 3, 5: 2, 6: 5, 7: 6, 8: 3, 9: None, 10: 9}
PATH = [P("e1", 1), P("e2", 2), P("e3", 3), P("e4", 4)]
TIMES = {1: "2026-01-01T00:00:00", 2: "2026-01-01T00:00:01", 3: "2026-01-01T00:00:02", 4: "2026-01-01T00:00:03"}


def test_what_ran_on_other_branches_is_listed_at_the_point_where_they_forked():
    elsewhere = [ran(3, 2), ran(6, 5), ran(7, 6, files.COMMAND), ran(8, 3)]
    found = files.drift(PATH, elsewhere, PARENTS, TIMES)
    assert listed(found) == {"e2": ["e6", "e7"], "e3": ["e8"]}
    assert [f.event_id for f in found.forks] == ["e2", "e3"]  # path order
    assert [(f.edits, f.commands) for f in found.forks] == [(1, 1), (1, 0)]
    assert (found.edits, found.commands) == (2, 1)
    assert found.fork_at(["e3", "e4"]).event_id == "e3" and found.fork_at(["e4"]) is None


def test_a_fork_counts_all_that_ran_after_it_and_lists_as_many_as_asked():
    elsewhere = [ran(5, 2), ran(6, 5, files.COMMAND), ran(7, 6)]
    (fork,) = files.drift(PATH, elsewhere, PARENTS, TIMES, keep=1).forks
    assert (fork.event_id, fork.edits, fork.commands, [r.event_id for r in fork.ran]) == ("e2", 2, 1, ["e5"])


def test_only_what_ran_after_the_fork_point_counts():
    found = files.drift(
        PATH, [ran(6, 5, timestamp="2025-12-31T23:59:59"), ran(8, 3, timestamp="not a time")], PARENTS, TIMES
    )
    assert listed(found) == {"e3": ["e8"]}


def test_another_root_counts_from_the_branch_root_and_below_the_leaf_from_the_leaf():
    path = PATH[:3]  # the branch ends at 3: 4 and 8 are below it
    found = files.drift(path, [ran(10, 9), ran(4, 3), ran(8, 3, timestamp="2025-01-01T00:00:00")], PARENTS, TIMES)
    assert listed(found) == {"e1": ["e10"], "e3": ["e4"]}


def test_nothing_ran_elsewhere_is_no_drift():
    assert not files.drift(PATH, [ran(3, 2)], PARENTS, TIMES)
    assert not files.drift([], [ran(6, 5)], PARENTS, TIMES)


@pytest.mark.parametrize(
    ("observation", "tool", "words"),
    [
        ({"command": "view", "path": "/w/a.py"}, "file_editor", "view /w/a.py"),
        ({"command": "ls -la", "path": ""}, "terminal", "ls -la"),
        ({"command": "", "path": "/w/a.py"}, "terminal", "terminal"),
        ({}, "think", "think"),
        ({"kind": "TaskObservation", "command": ""}, "task", "a sub-agent's task"),
        ({}, None, ""),
    ],
)
def test_a_results_label_is_its_command_and_path_else_its_tool(observation, tool, words):
    assert files.label({"kind": "ObservationEvent", "tool_name": tool, "observation": observation}) == words
