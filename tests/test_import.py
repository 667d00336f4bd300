"""Importing conversations: every source format, re-syncs, and every kind of bad input."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from django.db import connection

from eventviewer.imports.importer import import_paths
from eventviewer.models import Conversation, Event, EventPayload

from .conftest import (
    FIXTURES,
    SCENARIOS,
    action,
    ev,
    fixture_folder,
    message,
    observation,
    refused,
    run_import,
    sdk_answers,
    write_folder,
)

pytestmark = pytest.mark.django_db


def test_it_prints_one_line_per_conversation_with_its_url():
    out = run_import(fixture_folder("simple").parent.parent)
    assert len(out.splitlines()) == len(list((FIXTURES / "sdk-answers").iterdir()))
    for scenario in SCENARIOS:
        conversation_id = fixture_folder(scenario).name
        assert f"http://127.0.0.1:8000/c/{conversation_id}/" in out


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_it_stores_every_event_and_the_sdk_head(scenario):
    run_import(fixture_folder(scenario))
    answers = sdk_answers(scenario)
    conversation = Conversation.objects.get(conversation_id=answers["conversation"])
    assert conversation.event_count == answers["events"] == conversation.events.count()
    assert conversation.head.event_id == answers["leaf"]
    assert conversation.execution_status == answers["execution_status"]
    assert conversation.model == "openai/fixture-model"


def test_it_keeps_the_original_json_verbatim():
    folder = fixture_folder("simple")
    run_import(folder)
    files = sorted((folder / "events").glob("event-*.json"))
    for seq, path in enumerate(files):
        stored = Event.objects.get(seq=seq)
        assert stored.payload.raw == path.read_text().strip()
    stored = Event.objects.get(seq=1)
    assert stored.parent_ref == json.loads(files[1].read_text())["parent_id"]
    # Stored packed: a long observation takes less room than its file.
    largest = max(files, key=lambda p: p.stat().st_size)
    packed = EventPayload.objects.get(event__event_id=json.loads(largest.read_text())["id"]).packed
    assert len(packed) < largest.stat().st_size


def test_the_title_is_the_first_user_message():
    run_import(fixture_folder("simple"))
    assert Conversation.objects.get().title == "Create a file hello.txt containing 'hello world'."


def test_a_legacy_log_without_parents_is_one_linear_branch():
    run_import(fixture_folder("legacy-v1.30-parallel"))
    events = list(Event.objects.order_by("seq"))
    assert all(e.parent_ref is None for e in events)
    assert [e.depth for e in events] == list(range(len(events)))
    assert all(e.parent_id == prev.pk for prev, e in zip(events, events[1:], strict=False))


def test_head_is_not_always_the_last_event():
    run_import(fixture_folder("branching-retries"))
    conversation = Conversation.objects.get()
    last = conversation.events.order_by("-seq").first()
    assert conversation.head.event_id != last.event_id
    assert conversation.leaf_count == 3


def test_a_fork_pair_shares_event_ids_across_two_conversations(copy_scenario, tmp_path):
    original = copy_scenario("simple")
    fork = tmp_path / "fork" / ("f" * 32)
    shutil.copytree(original, fork)
    base = json.loads((fork / "base_state.json").read_text())
    base["id"] = "f" * 32
    (fork / "base_state.json").write_text(json.dumps(base))
    run_import(original, fork)
    assert Conversation.objects.count() == 2
    shared = Event.objects.filter(seq=0).values_list("event_id", flat=True)
    assert len(set(shared)) == 1
    for conversation in Conversation.objects.all():
        path_pks = {e.pk for e in conversation.read_path(conversation.head).path}
        assert path_pks == set(conversation.events.values_list("pk", flat=True))


def test_importing_again_changes_nothing():
    run_import(fixture_folder("simple"))
    out = run_import(fixture_folder("simple"))
    assert out.startswith("unchanged ")
    assert Event.objects.count() == 6


def test_a_resync_adds_only_new_events_and_moves_head(copy_scenario):
    folder = copy_scenario("simple")
    files = sorted((folder / "events").glob("event-*.json"))
    last = files[-1]
    held_back = last.read_text()
    last.unlink()
    base = json.loads((folder / "base_state.json").read_text())
    final_leaf = base["leaf_event_id"]
    base["leaf_event_id"] = json.loads(files[-2].read_text())["id"]
    base["execution_status"] = "running"
    (folder / "base_state.json").write_text(json.dumps(base))
    run_import(folder)
    conversation = Conversation.objects.get()
    assert (conversation.event_count, conversation.execution_status) == (5, "running")

    last.write_text(held_back)
    base["leaf_event_id"], base["execution_status"] = final_leaf, "finished"
    (folder / "base_state.json").write_text(json.dumps(base))
    out = run_import(folder)
    conversation.refresh_from_db()
    assert out.startswith(f"updated {conversation.conversation_id}: 1 new of 6 events")
    assert conversation.head.event_id == final_leaf
    assert conversation.execution_status == "finished"


def test_a_changed_event_on_resync_is_refused(copy_scenario):
    folder = copy_scenario("simple")
    run_import(folder)
    target = sorted((folder / "events").glob("event-*.json"))[2]
    data = json.loads(target.read_text())
    data["summary"] = "rewritten history"
    target.write_text(json.dumps(data))
    (line,) = refused(folder)
    assert target.name in line and data["id"] in line and "differs from the copy imported before" in line


def test_json_and_jsonl_files_import_with_legacy_and_explicit_parents(tmp_path):
    events = [message("m1", None, "hello"), action("a1", None, "c1"), observation("o1", "a1", "a1", "c1")]
    (tmp_path / "run.jsonl").write_text("\n".join(json.dumps(e) for e in events) + "\n")
    (tmp_path / "run.json").write_text(json.dumps(events))
    run_import(tmp_path / "run.jsonl")
    conversation = Conversation.objects.get()
    assert [e.event_id for e in conversation.read_path(conversation.head).path] == ["m1", "a1", "o1"]
    assert run_import(tmp_path / "run.jsonl").startswith("unchanged")
    # The same events under the same name are the same conversation, whatever the format.
    assert run_import(tmp_path / "run.json").startswith("unchanged")
    assert Conversation.objects.count() == 1


def test_a_file_named_by_its_conversation_id_keeps_that_id(tmp_path):
    target = tmp_path / "0123456789abcdef0123456789abcdef.jsonl"
    target.write_text(json.dumps(message("m1", None, "hi")) + "\n")
    run_import(target)
    assert Conversation.objects.get().conversation_id == "0123456789abcdef0123456789abcdef"


def zip_dir(source: Path, target: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(target, "w") as z:
        for path in sorted(source.rglob("*")):
            if path.is_file():
                z.write(path, prefix + str(path.relative_to(source)))
    return target


def test_a_zip_of_a_persistence_root_imports_every_conversation(tmp_path):
    archive = zip_dir(fixture_folder("simple").parent.parent, tmp_path / "all.zip")
    out = run_import(archive)
    assert len(out.splitlines()) == len(list((FIXTURES / "sdk-answers").iterdir())) == Conversation.objects.count()


def test_a_zip_of_one_conversation_folder(tmp_path):
    folder = fixture_folder("errors")
    archive = zip_dir(folder, tmp_path / "one.zip", prefix=f"{folder.name}/")
    run_import(archive)
    assert Conversation.objects.get().conversation_id == folder.name


# Bad input: refused whole, nothing written, one line per problem naming file and event.


def test_malformed_json_names_the_file(folder):
    path = folder([message("m1", None, "hi"), message("m2", "m1", "there")])
    bad = sorted((path / "events").glob("*.json"))[1]
    bad.write_text('{"id": "m2", "kind": ')
    (line,) = refused(path)
    assert line.startswith(str(path)) and bad.name in line and "malformed JSON" in line


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (["not", "an", "object"], "an event must be a JSON object, not an array"),
        ({"kind": "MessageEvent"}, 'the event has no "id"'),
        ({"id": "x1"}, 'event x1: the event has no "kind"'),
        ({"id": 7, "kind": "MessageEvent"}, '"id" must be a string, not a number'),
        ({"id": "x1", "kind": "MessageEvent", "parent_id": 3}, 'event x1: "parent_id" must be a string, not a number'),
        ({"id": "x1", "kind": "ActionEvent", "action": "rm -rf /"}, 'event x1: "action" must be an object'),
        ({"id": "x1", "kind": "ActionEvent", "tool_call_id": ["c"]}, 'event x1: "tool_call_id" must be a string'),
        ({"id": "x1", "kind": "ObservationEvent", "observation": []}, 'event x1: "observation" must be an object'),
        ({"id": "x\u0000", "kind": "MessageEvent"}, '"id" contains control characters'),
        ({"id": "x" * 300, "kind": "MessageEvent"}, '"id" is longer than 255 characters'),
    ],
)
def test_wrong_shapes_and_types_are_refused(tmp_path, event, expected):
    target = tmp_path / "events.jsonl"
    target.write_text(json.dumps(message("m0", None, "hi")) + "\n" + json.dumps(event) + "\n")
    (line,) = refused(target)
    assert line.startswith(f"{target}:2: ") and expected in line


def test_a_duplicate_id_is_refused(folder):
    path = folder([message("m1", None, "hi"), message("m2", "m1", "a"), message("m3", "m1", "b")])
    files = sorted((path / "events").glob("*.json"))
    data = json.loads(files[2].read_text())
    data["id"] = "m2"
    files[2].unlink()
    (path / "events" / "event-00002-m2.json").write_text(json.dumps(data))
    (line,) = refused(path)
    assert "event-00002-m2.json" in line and "event m2: duplicate event id" in line


def test_a_missing_parent_is_refused(folder):
    path = folder([message("m1", None, "hi"), message("m2", "ghost", "lost")])
    (line,) = refused(path)
    assert "event-00001-m2.json: event m2: parent ghost does not exist" in line


def test_a_cycle_is_refused(folder):
    path = folder([message("m1", None, "hi"), message("a", "b", "x"), message("b", "a", "y")])
    (line,) = refused(path)
    assert "cycle" in line and "event a" in line and "event-00001-a.json" in line


def test_the_reserved_root_id_is_refused(folder):
    path = folder([message("m1", None, "hi"), message("__root__", "m1", "x")])
    (line,) = refused(path)
    assert '"__root__" is reserved' in line


def test_a_head_naming_a_missing_event_is_refused(folder):
    path = folder([message("m1", None, "hi")], base_state={"leaf_event_id": "nowhere", "execution_status": "idle"})
    (line,) = refused(path)
    assert line.startswith(f"{path}/base_state.json") and "nowhere" in line


def test_a_gap_in_event_files_is_refused(folder):
    path = folder([message("m1", None, "hi"), message("m2", "m1", "a"), message("m3", "m2", "b")])
    sorted((path / "events").glob("*.json"))[1].unlink()
    (line,) = refused(path)
    assert "event-00001-*.json is missing" in line


def test_a_file_over_the_size_cap_is_refused(folder, settings):
    settings.EVENTVIEWER_MAX_EVENT_BYTES = 300
    path = folder([message("m1", None, "hi"), message("m2", "m1", "x" * 400)])
    (line,) = refused(path)
    assert "event-00001-m2.json" in line and "over the limit of 300" in line and "EVENTVIEWER_MAX_EVENT_BYTES" in line


def test_every_problem_is_reported_and_nothing_is_written(folder, tmp_path):
    good = fixture_folder("simple")
    bad = folder([message("m1", None, "hi"), message("m2", "ghost", "x"), message("m3", "ghost2", "y")])
    lines = refused(good, bad)
    assert len(lines) == 2 and all("does not exist" in line for line in lines)


def test_a_zip_member_escaping_its_folder_is_refused(tmp_path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("conv/events/event-00000-m1.json", json.dumps(message("m1", None, "hi")))
        z.writestr("../../etc/cron.d/evil", "boom")
    (line,) = refused(archive)
    assert "would land outside its folder" in line and "../../etc/cron.d/evil" in line


def test_a_zip_with_an_absolute_member_is_refused(tmp_path):
    archive = tmp_path / "abs.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("/etc/passwd", "root")
    (line,) = refused(archive)
    assert "absolute path" in line


def test_a_zip_bomb_is_refused_by_its_uncompressed_size(tmp_path, settings):
    settings.EVENTVIEWER_MAX_ZIP_BYTES = 10_000
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("c/events/event-00000-m1.json", " " * 50_000)
    (line,) = refused(archive)
    assert "exceed 10,000 bytes" in line and "EVENTVIEWER_MAX_ZIP_BYTES" in line


def test_a_zip_with_too_many_members_is_refused(tmp_path, settings):
    settings.EVENTVIEWER_MAX_ZIP_MEMBERS = 5
    archive = tmp_path / "many.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for i in range(6):
            z.writestr(f"c/events/event-{i:05d}-m{i}.json", "{}")
    (line,) = refused(archive)
    assert "6 members" in line and "EVENTVIEWER_MAX_ZIP_MEMBERS" in line


def test_symlinks_are_never_followed(folder, tmp_path):
    path = folder([message("m1", None, "hi")])
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(message("m2", "m1", "secret")))
    (path / "events" / "event-00001-m2.json").symlink_to(secret)
    (line,) = refused(path)
    assert "symbolic link" in line


def test_a_path_that_is_not_a_conversation_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    (line,) = refused(tmp_path / "notes.txt")
    assert "expected a conversation folder" in line
    assert refused(tmp_path / "missing")[0].endswith("no such file or folder")


def test_state_updates_are_stored_but_not_on_any_branch(folder):
    path = folder(
        [
            message("m1", None, "hi"),
            ev("u1", "ConversationStateUpdateEvent", None, key="execution_status", value="paused"),
            message("m2", None, "legacy child of m1"),
        ]
    )
    run_import(path)
    conversation = Conversation.objects.get()
    assert conversation.execution_status == "paused"
    assert Event.objects.get(event_id="u1").depth is None
    assert [e.event_id for e in conversation.read_path(conversation.head).path] == ["m1", "m2"]


DEMO_PROBLEMS = Path(__file__).resolve().parent.parent / "demo" / "problems" / "9d1e5c0a7b2f4e6a8c3d5f7091b2c4e6"


@pytest.mark.parametrize("scenario", [*SCENARIOS, "demo-problems"])
def test_the_figures_counted_at_import_match_the_stored_branch(scenario):
    """A first import counts the HEAD branch from memory; reading it back agrees."""
    folder = DEMO_PROBLEMS if scenario == "demo-problems" else fixture_folder(scenario)
    run_import(folder)
    conversation = Conversation.objects.get()
    counted = (conversation.head_path_length, conversation.pending_count, conversation.mismatch_count)
    conversation.refresh_figures()
    assert (conversation.head_path_length, conversation.pending_count, conversation.mismatch_count) == counted
    if scenario == "demo-problems":
        assert counted[1:] == (2, 3)


@pytest.mark.parametrize("size", [300, 65_535, 65_536, 65_537, 200_000])
def test_large_events_arrive_whole_and_too_large_ones_are_refused_with_their_size(tmp_path, settings, size):
    """Small event files are read without asking their size first; large ones are not."""
    event = message("m1", None, "")
    folder = write_folder(tmp_path, [event])
    (path,) = (folder / "events").glob("event-*.json")
    event["llm_message"]["content"][0]["text"] = "x" * (size - len(json.dumps(event)))
    path.write_text(json.dumps(event))
    assert path.stat().st_size == size

    settings.EVENTVIEWER_MAX_EVENT_BYTES = size
    run_import(folder)
    assert Event.objects.get(event_id="m1").payload.raw == path.read_text()

    Conversation.objects.all().delete()
    settings.EVENTVIEWER_MAX_EVENT_BYTES = size - 1
    (line,) = refused(folder)
    assert (
        line
        == f"{folder}/events/{path.name}: {size:,} bytes, over the limit of {size - 1:,} (EVENTVIEWER_MAX_EVENT_BYTES)"
    )


def test_only_the_command_line_import_tunes_the_process_and_puts_it_back(tmp_path):
    """A web server's import must leave its process alone; the command line's owns its
    process and restores the collector and the switch interval even when it fails."""
    import gc
    import sys

    before = sys.getswitchinterval()
    import_paths([(fixture_folder("simple"), "simple")])
    assert sys.getswitchinterval() == before and gc.isenabled()
    run_import(fixture_folder("errors"))
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n")
    refused(broken)
    assert sys.getswitchinterval() == before and gc.isenabled()


def test_a_re_import_refuses_a_new_event_at_a_position_an_old_one_holds(tmp_path, db):
    from eventviewer.imports.importer import ImportFailed

    first = write_folder(tmp_path / "a", [message("m1", None, "go"), message("m2", "m1", "on")], None, "ab" * 16)
    import_paths([(first, "a")])
    second = write_folder(tmp_path / "b", [message("m1", None, "go"), message("m3", "m1", "other")], None, "ab" * 16)
    with pytest.raises(ImportFailed) as failed:
        import_paths([(second, "b")])
    assert any("position 1 already holds event m2" in line for line in failed.value.problems)
    assert list(Event.objects.values_list("event_id", flat=True).order_by("seq")) == ["m1", "m2"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's planner statistics")
def test_a_big_import_leaves_postgresql_statistics_for_the_columns_pages_select_by(folder):
    """An import that grows the event table by a tenth or more refreshes the statistics a
    page's queries are planned with (children by parent, a conversation's events), so the
    first page after it does not wait for autovacuum."""
    from eventviewer.imports.writers.postgres import ANALYZE_FROM

    log = [message("m0", None, "start")]
    log += [message(f"m{n}", f"m{n - 1}", f"step {n}") for n in range(1, ANALYZE_FROM + 10)]
    import_paths([(folder(log, conversation_id="ab" * 16), "test")])
    with connection.cursor() as cursor:
        cursor.execute("SELECT attname FROM pg_stats WHERE tablename = 'eventviewer_event'")
        analyzed = {row[0] for row in cursor.fetchall()}
    assert {"parent_id", "conversation_id", "depth", "kind"} <= analyzed
