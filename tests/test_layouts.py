"""The layouts real users hand us, on real files (tests/fixtures/*/SOURCE.md): V0 session
stores, events/ folders and folders of event files without base_state.json, a folder's
events.jsonl beside its state.json, resolver outputs; and the rule over every kind of
source: one with no event eventviewer can read is refused, never "imported" empty."""

from __future__ import annotations

import io
import json
import shutil
import uuid
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from eventviewer.models import Conversation, Instance, Run, Upload

from .conftest import refused, run_import

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SESSIONS = FIXTURES / "v0-sessions" / "sessions"
CLI_CONVERSATION = FIXTURES / "openhands-cli" / "conversations" / "fd9e51ded62a48b49aef8d719a68998e"
CLI_TRAJECTORY = FIXTURES / "openhands-cli" / "trajectories" / "simple_echo_hello_world"
TAB = FIXTURES / "openhands-tab" / "conversations"
RESOLVER = FIXTURES / "resolver" / "output.jsonl"
SDK_SIMPLE = next((FIXTURES / "openhands-sdk" / "simple").iterdir())


def page_text(client, conversation: Conversation) -> str:
    response = client.get(conversation.get_absolute_url())
    assert response.status_code == 200
    return response.content.decode()


def last_file_id(folder: Path) -> str:
    return sorted(folder.glob("event-*.json"))[-1].name[12:-5]


# V0 session stores: ~/.openhands/sessions/<sid>/events/<n>.json with metadata.json


def test_a_v0_session_store_imports_one_v0_conversation_per_session(user_client):
    out = run_import(SESSIONS)
    assert "0 new of 0 events" not in out and len(out.splitlines()) == 2
    flip = Conversation.objects.get(conversation_id="63b4315947a049e2b7a51249b3d4fcc3")
    assert flip.title == "Coin Flip Simulation"  # metadata.json's, not the first message's
    assert flip.event_count == 14 and flip.head.event_id == "13"
    assert flip.model == "anthropic/claude-3-7-sonnet-20250219"
    assert flip.mismatch_count == 0
    runs = flip.events.filter(kind="ActionEvent", tool_name="execute_ipython_cell")
    assert runs.count() == 2
    assert flip.events.filter(kind="ObservationEvent", action_id__in=runs.values("event_id")).count() == 2
    stored = json.loads(flip.events.get(event_id="4").payload.raw)
    assert stored["v0"] == json.loads((SESSIONS / flip.conversation_id / "events" / "4.json").read_text())
    text = page_text(user_client, flip)
    assert "Coin Flip Simulation" in text and "Flip a coin!" in text
    short = Conversation.objects.get(conversation_id="3396c6f9bc024b81ad9bd57d9b9a6768")
    assert short.title == "Conversation 3396c" and short.event_count == 4 and short.head.event_id == "3"
    page_text(user_client, short)


def test_a_v0_session_imports_again_as_unchanged():
    run_import(SESSIONS / "63b4315947a049e2b7a51249b3d4fcc3")
    again = run_import(SESSIONS / "63b4315947a049e2b7a51249b3d4fcc3")
    assert again.startswith("unchanged 63b4315947a049e2b7a51249b3d4fcc3: 0 new of 14 events")


def test_pointing_at_a_v0_sessions_events_folder_imports_the_session():
    out = run_import(SESSIONS / "63b4315947a049e2b7a51249b3d4fcc3" / "events")
    assert out.startswith("imported 63b4315947a049e2b7a51249b3d4fcc3: 14 new of 14 events")
    assert Conversation.objects.get().title == "Coin Flip Simulation"


def test_a_v0_session_over_the_event_limit_is_refused_before_reading(settings):
    settings.EVENTVIEWER_MAX_EVENTS = 13
    session = SESSIONS / "63b4315947a049e2b7a51249b3d4fcc3"
    assert refused(session) == [f"{session}: 14 events, over the limit of 13 (EVENTVIEWER_MAX_EVENTS)"]


def test_a_v0_session_file_that_is_not_a_v0_event_is_refused_naming_it(tmp_path):
    session = tmp_path / "3396c6f9bc024b81ad9bd57d9b9a6768"
    shutil.copytree(SESSIONS / session.name, session)
    (session / "events" / "2.json").write_text('{"kind": "MessageEvent"}')
    (line,) = refused(session)
    assert (
        line == f'{session}/events/2.json: not a V0 event (expected an integer "id" and an "action" or "observation")'
    )


# An SDK or CLI events/ folder without base_state.json, and folders of event files


def test_an_events_folder_without_base_state_imports_by_the_folder_id_and_the_sdk_head(user_client):
    out = run_import(CLI_CONVERSATION)
    assert out.startswith("imported fd9e51ded62a48b49aef8d719a68998e: 5 new of 5 events")
    conversation = Conversation.objects.get()
    assert conversation.head.event_id == last_file_id(CLI_CONVERSATION / "events")
    assert conversation.title == "hi"
    assert "I appreciate the follow-up" in page_text(user_client, conversation)


def test_pointing_at_the_events_folder_itself_imports_its_conversation():
    out = run_import(CLI_CONVERSATION / "events")
    assert out.startswith("imported fd9e51ded62a48b49aef8d719a68998e: 5 new of 5 events")
    assert "expected a JSON array" not in out
    assert run_import(CLI_CONVERSATION).startswith("unchanged fd9e51ded62a48b49aef8d719a68998e")


def test_an_events_folder_given_as_dot_is_named_by_its_conversation_folder(monkeypatch):
    monkeypatch.chdir(CLI_CONVERSATION / "events")
    assert run_import(".").startswith("imported fd9e51ded62a48b49aef8d719a68998e: 5 new of 5 events")


def test_one_event_file_alone_is_refused_in_one_line_saying_what_to_pass():
    event = sorted(CLI_TRAJECTORY.glob("event-*.json"))[1]
    (line,) = refused(event)
    assert line == (
        f"{event}: one SDK event file (event-NNNNN-<id>.json): pass the folder holding the "
        "conversation's events, or a .zip of it"
    )


def test_pointing_at_an_sdk_conversations_events_folder_imports_the_conversation_with_its_state():
    run_import(SDK_SIMPLE / "events")
    conversation = Conversation.objects.get()
    assert conversation.conversation_id == SDK_SIMPLE.name
    assert conversation.source == str(SDK_SIMPLE)
    assert hasattr(conversation, "stored_state")  # base_state.json was read and kept


def test_a_folder_of_event_files_imports_as_one_conversation_with_a_derived_stable_id(user_client, tmp_path):
    first_id = sorted(CLI_TRAJECTORY.glob("event-*.json"))[0].name[12:-5]
    derived = uuid.uuid5(uuid.NAMESPACE_URL, f"eventviewer:simple_echo_hello_world:{first_id}").hex
    out = run_import(CLI_TRAJECTORY)
    assert out.startswith(f"imported {derived}: 5 new of 5 events") and "expected a JSON array" not in out
    conversation = Conversation.objects.get()
    assert conversation.head.event_id == last_file_id(CLI_TRAJECTORY)
    assert "echo hello world" in page_text(user_client, conversation)
    # The same events in an events/ folder of a folder of that name are the same conversation.
    events = tmp_path / "simple_echo_hello_world" / "events"
    shutil.copytree(CLI_TRAJECTORY, events)
    assert run_import(events.parent).startswith(f"unchanged {derived}: 0 new of 5 events")
    assert run_import(CLI_TRAJECTORY.parent).startswith(f"unchanged {derived}")


# A folder with an events file and other JSON files (OpenHands-Tab's events.jsonl + state.json)


def test_a_folders_events_jsonl_imports_and_its_state_json_is_ignored(user_client):
    out = run_import(TAB)
    assert len(out.splitlines()) == 2
    named = Conversation.objects.get(conversation_id="a9eb940753ed45f4b44de665cf6264e7")  # the folder's UUID
    assert named.event_count == 35 and named.title == "hey"
    assert named.head.event_id == "eae4dd14-61e1-43d7-a560-391fe9547db2"
    assert "How can I help you today?" in page_text(user_client, named)
    first = json.loads((TAB / "local-mi5p89cd" / "events.jsonl").read_text().splitlines()[0])["id"]
    local = Conversation.objects.get(
        conversation_id=uuid.uuid5(uuid.NAMESPACE_URL, f"eventviewer:local-mi5p89cd:{first}").hex
    )
    assert local.event_count == 38 and local.head.event_id == "0ca18296-6bde-4f3b-ad03-bc0b42bf24db"
    page_text(user_client, local)
    # The file alone is the same conversation.
    assert run_import(TAB / "local-mi5p89cd" / "events.jsonl").startswith(f"unchanged {local.conversation_id}")


def test_a_folder_of_only_state_files_is_refused_naming_them(tmp_path):
    shutil.copy(TAB / "local-mi5p89cd" / "state.json", tmp_path / "state.json")
    (line,) = refused(tmp_path)
    assert line.startswith(f"{tmp_path}: no conversation found (it holds state.json, none of them events")


# OpenHands resolver outputs


def test_a_resolver_output_imports_as_a_run_named_by_issue_with_its_outcome(user_client):
    run_import(RESOLVER)
    run = Run.objects.get()
    assert run.name == "resolver"
    found = {i.instance_id: i for i in Instance.objects.select_related("conversation")}
    assert sorted(found) == ["neubig/pr-viewer#1", "neubig/pr-viewer#5"]
    license_ = found["neubig/pr-viewer#5"]
    assert license_.outcome == "resolved" and license_.test_result["success"] is True
    conversation = license_.conversation
    assert conversation.event_count == 8 and conversation.head.event_id == "7"
    assert conversation.cost == pytest.approx(0.070713)
    assert conversation.mismatch_count == 0 and conversation.pending_count == 0
    assert conversation.events.filter(kind="ObservationEvent").count() == 3
    stored = json.loads(conversation.events.get(event_id="1").payload.raw)
    assert stored["v0"] == json.loads(RESOLVER.read_text().splitlines()[0])["history"][1]
    text = page_text(user_client, conversation)
    assert "touch LICENSE" in text and "neubig/pr-viewer#5" in text
    assert found["neubig/pr-viewer#1"].conversation.event_count == 44


def test_a_resolver_row_that_failed_is_failed(tmp_path):
    rows = [json.loads(line) for line in RESOLVER.read_text().splitlines()]
    rows[0]["success"] = False
    (tmp_path / "output.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run_import(tmp_path / "output.jsonl")
    assert Instance.objects.get(instance_id="neubig/pr-viewer#5").outcome == "failed"


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (
            {"task": "fix it", "history": [], "success": True},
            'row 1: not a row eventviewer can read: it has "task", "history", "success"; missing "instance_id"',
        ),
        (
            {"instance_id": "x", "test_result": {}},
            'row 1: not a row eventviewer can read: it has "instance_id", "test_result"; missing "history" (',
        ),
        (
            {"issue": {"owner": "o", "repo": "r", "number": 1}, "success": True},
            'row 1: not a row eventviewer can read: it has "issue", "success"; missing "history" (',
        ),
        (
            {"issue": {"owner": "o", "repo": "r"}, "history": []},
            'row 1: a resolver output\'s "issue" must have "owner", "repo" (strings) and "number" (an integer)',
        ),
        ({"answer": 42, "score": 1}, 'line 1 is neither an event (it has no "id" or "kind") nor an evaluation row'),
    ],
)
def test_a_row_format_we_cannot_read_is_refused_with_its_fields(tmp_path, row, expected):
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(row) + "\n")
    (line,) = refused(path)
    assert line.startswith(f"{path}: {expected}")
    assert 'the event has no "id"' not in line


# Never silently empty: every kind of source with no readable event is refused


def sdk_folder(root: Path) -> Path:
    folder = root / "fd9e51ded62a48b49aef8d719a68998e"
    (folder / "events").mkdir(parents=True)
    (folder / "base_state.json").write_text("{}")
    return folder


def with_junk_events(root: Path) -> Path:
    folder = sdk_folder(root)
    (folder / "events" / "notes.json").write_text("[]")
    return folder


def v0_session(root: Path) -> Path:
    events = root / "sessions" / "3396c6f9bc024b81ad9bd57d9b9a6768" / "events"
    events.mkdir(parents=True)
    (events.parent / "metadata.json").write_text('{"title": "t"}')
    (events / "0.json").write_text('{"not": "an event"}')
    return root / "sessions"


def events_folder(root: Path) -> Path:
    (root / "events").mkdir()
    (root / "events" / "event-00000-x.json").write_text('{"no": "id"}')
    return root / "events"


def tab_folder(root: Path) -> Path:
    (root / "local-x").mkdir()
    (root / "local-x" / "events.jsonl").write_text("\n\n")
    (root / "local-x" / "state.json").write_text('{"status": "IDLE"}')
    return root


def file(name: str, text: str) -> Callable[[Path], Path]:
    def make(root: Path) -> Path:
        (root / name).write_text(text)
        return root / name

    return make


def app_server(root: Path) -> Path:
    folder = root / "v1_conversations" / "0eb8b4d7d1a14751b2b449213c4127d1"
    folder.mkdir(parents=True)
    (folder / "2bf879d90d6149c8afe4b6a68138ff28.json").write_text("{}")
    return root


def zipped(root: Path) -> Path:
    folder = sdk_folder(root / "inside")
    with zipfile.ZipFile(root / "run.zip", "w") as archive:
        archive.write(folder / "base_state.json", f"{folder.name}/base_state.json")
    return root / "run.zip"


def neighbours_only(root: Path) -> Path:
    (root / "state.json").write_text('{"status": "IDLE"}')
    (root / "metadata.json").write_text('{"title": "t"}')
    return root


# Each kind of source the detector knows, made without a readable event, and what its one
# line must say.
KINDS: dict[str, tuple[Callable[[Path], Path], str]] = {
    "sdk-folder-without-events": (sdk_folder, "/events: holds no event file (expected SDK event files named"),
    "sdk-folder-with-unnamed-files": (with_junk_events, "/events: holds 1 file named notes.json: expected SDK"),
    "v0-session-store": (v0_session, "/events/0.json: not a V0 event"),
    "events-folder": (events_folder, "/event-00000-x.json: the file name says event x but the file holds event None"),
    "folder-of-event-files": (
        lambda root: events_folder(root).rename(root / "simple_echo_hello_world"),
        "simple_echo_hello_world/event-00000-x.json: the file name says event x",
    ),
    "events-jsonl-with-state": (tab_folder, "local-x/events.jsonl: holds no events"),
    "json-array": (file("events.json", "[]"), "events.json: holds no events"),
    "json-object": (file("answer.json", '{"events": []}'), "answer.json: holds no events"),
    "jsonl": (file("log.jsonl", "\n"), "log.jsonl: holds no events"),
    "v0-trajectory": (file("traj.json", '[{"id": 0, "action": 7}]'), 'traj.json[0]: "id" must be a string'),
    "evaluation-output": (
        file("output.jsonl", json.dumps({"instance_id": "i", "history": [{"x": 1}]}) + "\n"),
        'output.jsonl: row 1 (instance i), history[0]: the event has no "id"',
    ),
    "resolver-output": (
        file(
            "output.jsonl",
            json.dumps({"issue": {"owner": "o", "repo": "r", "number": 1}, "history": [{"x": 1}]}) + "\n",
        ),
        'output.jsonl: row 1 (instance o/r#1), history[0]: the event has no "id"',
    ),
    "app-server": (app_server, '2bf879d90d6149c8afe4b6a68138ff28.json: the event has no "id"'),
    "zip": (zipped, "run.zip/fd9e51ded62a48b49aef8d719a68998e/events: holds no event file"),
    "only-neighbours": (neighbours_only, "no conversation found (it holds metadata.json, state.json, none of them"),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_source_with_no_readable_event_is_refused_saying_what_it_holds(tmp_path, kind):
    make, says = KINDS[kind]
    (line,) = refused(make(tmp_path))
    assert line.startswith(str(tmp_path)) and says in line


def test_the_import_page_refuses_a_v0_session_with_no_readable_event(client, open_site, tmp_path):
    root = v0_session(tmp_path)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in root.rglob("*.json"):
            archive.write(path, str(path.relative_to(root)))
    (tmp_path / "sessions.zip").write_bytes(buffer.getvalue())
    with open(tmp_path / "sessions.zip", "rb") as f:
        response = client.post("/import/", {"files": f})
    html = client.get(response["Location"]).content.decode()
    assert "Nothing was imported" in html and "not a V0 event" in html
    assert not Conversation.objects.exists() and Upload.objects.get().problems


def test_the_import_page_imports_a_zip_of_a_layout_without_base_state(client, open_site, tmp_path):
    with zipfile.ZipFile(tmp_path / "tab.zip", "w") as archive:
        for path in TAB.rglob("*.json*"):
            archive.write(path, str(path.relative_to(TAB)))
    with open(tmp_path / "tab.zip", "rb") as f:
        response = client.post("/import/", {"files": f})
    html = client.get(response["Location"]).content.decode()
    assert "Nothing was imported" not in html and "35 new events, 0 unchanged" in html
    assert Conversation.objects.count() == 2
