"""Corrupted copies of the real SDK conversations are refused whole.

Every corruption must end in CommandError with one clear stderr line that names the
file (and the event, where its id is known), and leave the database as it was; the
intact copy then imports cleanly.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from eventviewer.models import Conversation, Event

from .conftest import SCENARIOS, fixture_folder, message, sdk_answers
from .trajectory.sdk import load

pytestmark = pytest.mark.django_db

EVENT_CAP = 30_000  # EVENTVIEWER_MAX_EVENT_BYTES for these tests: above every fixture event (22 kB)
EVENT_FILE = re.compile(r"event-\d{5}-(?P<id>[^/\s:]+)\.json")


class Expect(NamedTuple):
    file: str | None  # the file name the line must contain; None: some event file, named with its id
    event_id: str | None  # "event <id>" must be in the line, when the id is known
    says: str  # a fragment of the message


class Target(NamedTuple):
    """One conversation copy and what the untouched fixture says about it."""

    folder: Path
    files: list[Path]  # event files in append order
    ids: list[str]
    children: dict[str, list[str]]  # tree node -> its children

    def file_of(self, event_id: str) -> Path:
        return self.files[self.ids.index(event_id)]

    def nodes(self) -> list[str]:
        return [i for i in self.ids if i in self.children]


_LOADED: dict[str, tuple[list[str], dict[str, list[str]]]] = {}


def copy_fixture(scenario: str, root: Path) -> Target:
    source = fixture_folder(scenario)
    folder = root / scenario / source.name
    shutil.copytree(source, folder)
    for path in folder.rglob("*"):
        path.chmod(0o644 if path.is_file() else 0o755)
    if scenario not in _LOADED:
        loaded = load(scenario)
        children: dict[str, list[str]] = {node: [] for node in loaded.tree.parent}
        for node, parent in loaded.tree.parent.items():
            if parent is not None:
                children[parent].append(node)
        _LOADED[scenario] = ([e.event_id for e in sorted(loaded.events.values(), key=lambda e: e.seq)], children)
    ids, children = _LOADED[scenario]
    return Target(folder, sorted((folder / "events").glob("event-*.json")), ids, children)


def descendants(target: Target, node: str) -> list[str]:
    found, todo = [], [node]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(target.children[current])
    return found


def pick(items: list, k: int):
    return items[k % len(items)]


def rewrite(path: Path, change: Callable[[dict], None]) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


# --- the corruptions: each edits the copy and says what the refusal must read --------


def truncated(t: Target, k: int) -> Expect:
    path = pick(t.files, k)
    content = path.read_bytes().rstrip()
    path.write_bytes(content[: k % len(content)])
    return Expect(path.name, None, "malformed JSON")


WRONG_TYPES = {
    "id": [7, 1.5, True, ["x"], {"id": "x"}],
    "kind": [7, False, ["MessageEvent"], {}],
    "parent_id": [3, True, [], {"id": "x"}],
    "action": ["rm -rf /", 1, ["ls"], True],
    "observation": ["ok", 0, [], False],
    "tool_call_id": [["c"], 5, {}, True],
}


def wrong_type(field: str) -> Callable[[Target, int], Expect]:
    def corrupt(t: Target, k: int) -> Expect:
        path = pick(t.files, k)
        event_id = t.ids[t.files.index(path)]
        value = pick(WRONG_TYPES[field], k // len(t.files))
        rewrite(path, lambda data: data.__setitem__(field, value))
        if field == "id":
            return Expect(path.name, event_id, f"the file name says event {event_id} but the file holds event")
        shape = "an object" if field in ("action", "observation") else "a string"
        return Expect(path.name, event_id, f'"{field}" must be {shape}, not')

    corrupt.__name__ = f"wrong_{field}"
    return corrupt


def missing_id(t: Target, k: int) -> Expect:
    path = pick(t.files, k)
    rewrite(path, lambda data: data.pop("id"))
    return Expect(path.name, t.ids[t.files.index(path)], "but the file holds event None")


def missing_kind(t: Target, k: int) -> Expect:
    path = pick(t.files, k)
    rewrite(path, lambda data: data.pop("kind"))
    return Expect(path.name, t.ids[t.files.index(path)], 'the event has no "kind"')


def cycle(t: Target, k: int) -> Expect:
    """Re-point an event's parent at one of its descendants (or itself)."""
    with_children = [n for n in t.nodes() if t.children[n]]
    node = pick(with_children, k)
    below = pick(descendants(t, node), k // len(with_children))
    rewrite(t.file_of(node), lambda data: data.__setitem__("parent_id", below))
    return Expect(None, node, "cycle")


def dangling_parent(t: Target, k: int) -> Expect:
    node = pick(t.nodes(), k)
    rewrite(t.file_of(node), lambda data: data.__setitem__("parent_id", f"ghost-{k}"))
    return Expect(t.file_of(node).name, node, f"parent ghost-{k} does not exist")


def duplicate_id(t: Target, k: int) -> Expect:
    """A new file at the end, in the SDK's name pattern, repeating an earlier id."""
    event_id = pick(t.ids, k)
    name = f"event-{len(t.files):05d}-{event_id}.json"
    copy = json.loads(t.file_of(event_id).read_text())
    if k % 2:
        copy["timestamp"] = "2099-01-01T00:00:00"  # same id, different content
    (t.folder / "events" / name).write_text(json.dumps(copy))
    return Expect(name, event_id, "duplicate event id")


def huge_string(t: Target, k: int) -> Expect:
    path = pick(t.files, k)
    rewrite(path, lambda data: data.__setitem__("extra", "x" * (EVENT_CAP + k % 1000)))
    return Expect(path.name, None, f"over the limit of {EVENT_CAP:,} (EVENTVIEWER_MAX_EVENT_BYTES)")


def deep_nesting(t: Target, k: int) -> Expect:
    depth = pick([300, 1000, 5000], k // len(t.files))
    # A file with room for the nesting under the size cap, so the nesting is what fails.
    path = pick([f for f in t.files if f.stat().st_size + 2 * depth + 20 < EVENT_CAP], k)
    text = path.read_text().rstrip()
    path.write_text(text[:-1] + ', "deep": ' + "[" * depth + "]" * depth + "}")
    if depth > 1000:  # beyond what orjson reads at all
        return Expect(path.name, None, "(depth limit exceeded)")
    return Expect(path.name, None, "nested deeper than 254 levels of arrays and objects")


def invalid_utf8(t: Target, k: int) -> Expect:
    path = pick(t.files, k)
    content = path.read_bytes()
    spots = [m.end() for m in re.finditer(rb'":\s*"', content)]
    at = pick(spots, k)
    path.write_bytes(content[:at] + pick([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x80abc"], k) + content[at:])
    return Expect(path.name, None, "malformed JSON")


def not_an_object(t: Target, k: int) -> Expect:
    path = pick(t.files, k)
    value, name = pick(
        [
            ("[]", "an array"),
            ('"event"', "a string"),
            ("42", "a number"),
            ("null", "null"),
            ("true", "a boolean"),
            (f"[{path.read_text()}]", "an array"),
        ],
        k,
    )
    path.write_text(value)
    return Expect(path.name, None, f"an event must be a JSON object, not {name}")


def empty_file(t: Target, k: int) -> Expect:
    path = pick(t.files, k)
    path.write_bytes(b"")
    return Expect(path.name, None, "malformed JSON")


def missing_head(t: Target, k: int) -> Expect:
    ghost = pick(["ghost", "00000000-0000-0000-0000-000000000000", t.ids[0] + "x", "head\nwith a newline"], k)
    rewrite(t.folder / "base_state.json", lambda data: data.__setitem__("leaf_event_id", ghost))
    return Expect("base_state.json", None, "leaf_event_id")


def broken_base_state(t: Target, k: int) -> Expect:
    path = t.folder / "base_state.json"
    content = path.read_bytes().rstrip()
    path.write_bytes(content[: k % len(content)])
    return Expect("base_state.json", None, "malformed JSON")


CORRUPTIONS = [
    truncated,
    *(wrong_type(field) for field in WRONG_TYPES),
    missing_id,
    missing_kind,
    cycle,
    dangling_parent,
    duplicate_id,
    huge_string,
    deep_nesting,
    invalid_utf8,
    not_an_object,
    empty_file,
    missing_head,
    broken_base_state,
]


# --- running the import -------------------------------------------------------------


def counts() -> tuple[int, int]:
    return Conversation.objects.count(), Event.objects.count()


def zipped(folder: Path) -> Path:
    archive = folder.parent / f"{folder.name}.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                z.write(path, f"{folder.name}/{path.relative_to(folder)}")
    return archive


def refused(*paths: Path) -> list[str]:
    """The problem lines of an import that must fail and write nothing."""
    before = counts()
    err = io.StringIO()
    with pytest.raises(CommandError, match=r"^nothing was imported \(\d+ problems?\)$"):
        call_command("import_conversation", *[str(p) for p in paths], stdout=io.StringIO(), stderr=err)
    assert counts() == before
    return err.getvalue().splitlines()


def imports(path: Path) -> str:
    out = io.StringIO()
    call_command("import_conversation", str(path), stdout=out)
    return out.getvalue()


def check_line(line: str, label: Path, expect: Expect) -> None:
    assert "Traceback" not in line and "\r" not in line
    assert line.startswith(f"{label}/"), line
    assert expect.says in line, line
    if expect.file is not None:
        assert f"/{expect.file}: " in line, line
    else:
        named = EVENT_FILE.search(line)
        assert named and f"event {named['id']}: " in line, line
    if expect.event_id is not None:
        assert f"event {expect.event_id}" in line, line


def corrupt_and_refuse(scenario: str, corruption, k: int, as_zip: bool, with_good: str | None, root: Path) -> None:
    target = copy_fixture(scenario, root / "bad")
    intact = copy_fixture(scenario, root / "intact")
    expect = corruption(target, k)
    path = zipped(target.folder) if as_zip else target.folder
    paths = [fixture_folder(with_good), path] if with_good else [path]

    (line,) = refused(*paths)  # one problem, one line
    check_line(line, path, expect)

    # The refusal left nothing behind: the intact copy imports in full.
    before = counts()
    out = imports(intact.folder)
    events = sdk_answers(scenario)["events"]
    assert out.startswith(f"imported {intact.folder.name}: {events} new of {events} events")
    assert counts() == (before[0] + 1, before[1] + events)


def other_than(scenario: str) -> str:
    return next(s for s in SCENARIOS if s != scenario)


@pytest.fixture
def low_event_cap(settings):
    settings.EVENTVIEWER_MAX_EVENT_BYTES = EVENT_CAP
    return settings


@pytest.mark.parametrize("corruption", CORRUPTIONS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("as_zip", [False, True], ids=["folder", "zip"])
def test_each_corruption_is_refused_with_one_clear_line_and_nothing_written(
    corruption, as_zip, low_event_cap, tmp_path
):
    corrupt_and_refuse("branching-retries", corruption, 3, as_zip, None, tmp_path)


@pytest.mark.slow
@hypothesis_settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    scenario=st.sampled_from(SCENARIOS),
    corruption=st.sampled_from(CORRUPTIONS),
    k=st.integers(0, 10_000),
    as_zip=st.booleans(),
    with_good=st.booleans(),
)
def test_random_corruptions_of_every_scenario_are_refused(low_event_cap, scenario, corruption, k, as_zip, with_good):
    with tempfile.TemporaryDirectory() as root, transaction.atomic():
        corrupt_and_refuse(scenario, corruption, k, as_zip, other_than(scenario) if with_good else None, Path(root))
        transaction.set_rollback(True)  # each example starts from an empty database


def test_a_good_conversation_in_the_same_command_is_rolled_back_too(low_event_cap, tmp_path):
    good = fixture_folder("simple")
    target = copy_fixture("long-300", tmp_path)
    expect = dangling_parent(target, 250)
    lines = refused(good, target.folder)
    assert len(lines) == 1
    check_line(lines[0], target.folder, expect)
    assert counts() == (0, 0)


def test_a_corrupted_resync_leaves_the_imported_conversation_as_it_was(low_event_cap, tmp_path):
    target = copy_fixture("branching-retries", tmp_path)
    imports(target.folder)
    conversation = Conversation.objects.get()
    head, before = conversation.head_id, counts()
    rows = list(Event.objects.order_by("pk").values_list("pk", "event_id", "parent_id", "depth", "digest"))
    (target.folder / "events" / f"event-{len(target.files):05d}-late.json").write_text(
        json.dumps(message("late", "ghost", "appended after the import"))
    )
    (target.folder / "events" / f"event-{len(target.files) + 1:05d}-later.json").write_text(
        json.dumps(message("later", "late", "its child"))
    )
    (line,) = refused(target.folder)
    assert f"/event-{len(target.files):05d}-late.json: event late: parent ghost does not exist" in line
    conversation.refresh_from_db()
    assert (conversation.head_id, counts()) == (head, before)
    assert list(Event.objects.order_by("pk").values_list("pk", "event_id", "parent_id", "depth", "digest")) == rows


@pytest.mark.parametrize(
    ("event", "says"),
    [
        ({"id": "a\nb", "kind": "MessageEvent"}, '"id" contains control characters'),
        ({"id": "a\rb", "kind": "MessageEvent"}, '"id" contains control characters'),
        ({"id": "x" * 300 + "\n", "kind": "MessageEvent"}, '"id" is longer than 255 characters'),
        ({"id": "m2", "kind": "Message\nEvent"}, '"kind" contains control characters'),
        ({"id": "m2", "kind": "MessageEvent", "parent_id": "m1\n"}, '"parent_id" contains control characters'),
        ({"id": "a\u2028b", "kind": "MessageEvent", "parent_id": "ghost"}, "parent ghost does not exist"),
        ({"id": "a\x85b", "kind": "MessageEvent", "parent_id": "m1\u2029"}, "does not exist"),
    ],
)
def test_ids_with_line_breaks_still_make_one_line(tmp_path, event, says):
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(message("m1", None, "hi")) + "\n" + json.dumps(event) + "\n")
    (line,) = refused(path)
    assert line.startswith(f"{path}:2: ") and says in line


@pytest.mark.parametrize("name", ["event-00001-a\nb.json", "event-00001-a\u2028b.json", "event-00001-a\rb.json"])
def test_a_file_name_with_a_line_break_still_makes_one_line(folder, name):
    path = folder([message("m1", None, "hi")])
    (path / "events" / name).write_text(json.dumps(message("a", "m1", "x")))
    lines = refused(path)
    assert len(lines) == 1 and lines[0].startswith(f"{path}/events/event-00001-a")


@pytest.mark.parametrize("depth", [254, 255, 1000])
def test_a_json_array_file_with_a_deeply_nested_event_is_refused_or_imported(tmp_path, depth):
    """Each event of an array file is written out on its own, which orjson does up to
    254 levels deep."""
    path = tmp_path / "events.json"
    nested = "[" * (depth - 1) + "]" * (depth - 1)  # inside the event object
    path.write_text('[{"id": "m1", "kind": "MessageEvent", "deep": ' + nested + "}]")
    if depth <= 254:
        assert imports(path).startswith("imported ")
    else:
        (line,) = refused(path)
        assert line == f"{path}[0]: event m1: nested deeper than 254 levels of arrays and objects"
