"""`manage.py watch`: a folder an agent is writing, followed file by file."""

from __future__ import annotations

import io
import json
import threading
import time
import uuid
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import OperationalError

from eventviewer.imports import watch
from eventviewer.imports.watch import FolderWatch
from eventviewer.models import Conversation

from .conftest import action, message, observation, write_folder

START = [message("u", None, "Count the words."), action("a1", "u", "c1")]


def write(folder: Path, seq: int, event: dict, text: str | None = None) -> None:
    """One event file, as the agent writes it (``text``: what is on disk so far)."""
    path = folder / "events" / f"event-{seq:05d}-{event['id']}.json"
    path.write_text(json.dumps(event) if text is None else text)


def ids(conversation_id: str) -> list[str]:
    """The stored event ids. A watch in another thread may be writing: SQLite's shared
    in-memory test database then answers "locked" at once, so look again."""
    for _ in range(50):
        try:
            return list(
                Conversation.objects.get(conversation_id=conversation_id)
                .events.order_by("seq")
                .values_list("event_id", flat=True)
            )
        except Conversation.DoesNotExist:
            return []
        except OperationalError:
            time.sleep(0.05)
    raise AssertionError("the database stayed locked")


@pytest.fixture
def said() -> list[str]:
    return []


@pytest.fixture
def agent_folder(tmp_path) -> Path:
    return write_folder(tmp_path, START)


@pytest.mark.django_db
def test_each_look_stores_the_new_event_files(agent_folder, said):
    looks = FolderWatch(agent_folder, said.append)
    cid = agent_folder.name

    assert [r.added for r in looks.look()] == [2]
    assert looks.look() == []  # nothing changed: nothing read, nothing written
    write(agent_folder, 2, observation("o1", "a1", "a1", "c1"))
    (result,) = looks.look()

    assert result.added == 1
    assert ids(cid) == ["u", "a1", "o1"]
    conversation = Conversation.objects.get()
    assert conversation.head.event_id == "o1"
    assert conversation.is_live  # events just arrived
    assert said == []


@pytest.mark.django_db
def test_a_half_written_file_is_retried_not_refused(agent_folder, said):
    looks = FolderWatch(agent_folder, said.append)
    cid = agent_folder.name
    looks.look()
    write(agent_folder, 2, observation("o1", "a1", "a1", "c1"))
    thanks = message("m", "o1", "Thanks.")
    write(agent_folder, 3, thanks, text=json.dumps(thanks)[:40])  # caught mid-write
    # base_state.json already names it, as an agent writing in place could.
    (agent_folder / "base_state.json").write_text(json.dumps({"id": str(uuid.UUID(cid)), "leaf_event_id": "m"}))
    write(agent_folder, 4, message("n", "m", "Bye."), text="")  # created, nothing written yet

    looks.look()
    assert ids(cid) == ["u", "a1", "o1"]  # what comes before it is stored

    write(agent_folder, 3, thanks)
    write(agent_folder, 4, message("n", "m", "Bye."))
    looks.look()
    assert ids(cid) == ["u", "a1", "o1", "m", "n"]
    assert Conversation.objects.get().head.event_id == "m"  # base_state.json's HEAD
    assert said == []  # a file being written is not a problem to report


@pytest.mark.django_db
def test_a_file_that_stays_broken_is_reported_once(agent_folder, said, monkeypatch):
    monkeypatch.setattr(watch, "GRACE", 0)
    looks = FolderWatch(agent_folder, said.append)
    write(agent_folder, 2, {"id": "o1"}, text="{not json")
    looks.look()
    looks.look()
    assert len(said) == 1
    assert said[0].startswith("still not importable after 0 s (retrying while watching): ")
    assert f"{agent_folder}/events/event-00002-o1.json: malformed JSON" in said[0]
    assert ids(agent_folder.name) == ["u", "a1"]


@pytest.mark.django_db
def test_files_already_stored_are_not_read_again(agent_folder, said):
    looks = FolderWatch(agent_folder, said.append)
    looks.look()
    write(agent_folder, 0, START[0], text="garbage: a file the watch must not read again. " * 20)
    write(agent_folder, 2, observation("o1", "a1", "a1", "c1"))
    (result,) = looks.look()
    assert result.added == 1
    first = agent_folder / "events" / "event-00000-u.json"
    assert said == [f"{first}: was rewritten after it was stored; the stored event is kept as it was"]
    looks.look()
    assert len(said) == 1  # once


@pytest.mark.django_db
def test_a_stored_file_truncated_or_deleted_is_said_once_naming_it(agent_folder, said):
    looks = FolderWatch(agent_folder, said.append)
    looks.look()
    first, second = sorted((agent_folder / "events").glob("event-*.json"))
    size = first.stat().st_size
    first.write_text("{")
    second.unlink()
    looks.look()
    looks.look()
    assert said == [
        f"{first}: was truncated ({size:,} to 1 bytes) after it was stored; the stored event is kept as it was",
        f"{second}: was deleted after it was stored; the stored event is kept as it was",
    ]
    assert ids(agent_folder.name) == ["u", "a1"]


@pytest.mark.django_db
def test_a_conversation_folder_that_is_a_symbolic_link_is_said_once(tmp_path, said):
    root = tmp_path / "conversations"
    root.mkdir()
    elsewhere = write_folder(tmp_path / "elsewhere", START)
    (root / elsewhere.name).symlink_to(elsewhere)
    write_folder(root, START)
    looks = FolderWatch(root, said.append)
    assert [r.added for r in looks.look()] == [2]  # the other one
    looks.look()
    assert said == [f"{root / elsewhere.name}: a symbolic link; eventviewer never follows links, so it is not watched"]


@pytest.mark.django_db
def test_a_new_conversation_in_a_watched_root_is_found(tmp_path, said):
    root = tmp_path / "conversations"
    first = write_folder(root, START)
    looks = FolderWatch(root, said.append)
    looks.look()
    second = write_folder(root, [message("x", None, "Another task.")])
    (result,) = looks.look()
    assert result.conversation.conversation_id == second.name
    assert Conversation.objects.count() == 2 and ids(first.name) == ["u", "a1"]


APP_CONVERSATION = (
    Path(__file__).resolve().parent
    / "fixtures/app-server/openhands-home/v1_conversations/cacbc37bb14848e78a86c44fd00affdb"
)


@pytest.mark.django_db
def test_the_app_servers_layout_is_followed_file_by_file(tmp_path, said):
    """v1_conversations/<hex>/<event-hex>.json: the app server writes a file per event."""
    files = sorted(APP_CONVERSATION.glob("*.json"), key=lambda f: json.loads(f.read_text())["timestamp"])
    folder = tmp_path / "v1_conversations" / APP_CONVERSATION.name
    folder.mkdir(parents=True)
    for file in files[:-2]:
        (folder / file.name).write_bytes(file.read_bytes())
    looks = FolderWatch(tmp_path, said.append)
    expected = [json.loads(f.read_text())["id"] for f in files]

    assert [r.added for r in looks.look()] == [10]
    assert looks.look() == []  # nothing changed: nothing written
    last, after = files[-2:]
    (folder / last.name).write_bytes(last.read_bytes()[:50])  # caught mid-write
    looks.look()
    assert ids(APP_CONVERSATION.name) == expected[:10]
    (folder / last.name).write_bytes(last.read_bytes())
    (folder / after.name).write_bytes(after.read_bytes())
    (result,) = looks.look()
    assert result.added == 2
    assert ids(APP_CONVERSATION.name) == expected
    assert Conversation.objects.get().is_live
    assert said == []  # a file being written is not a problem to report


@pytest.mark.django_db
def test_the_app_servers_layout_is_watched_by_what_changed(tmp_path, said):
    """Each look read every file of the folder again (35 CPU-seconds in 52 s, 850 MB for
    40,000 events): now only the new ones, placed after the stored ones by their timestamps."""
    from .test_sources import app_server_folder

    folder = app_server_folder(tmp_path, 30)
    later = folder / f"{99:032x}.json"
    event = message(f"{99:032x}", f"{29:032x}", "later")
    event["timestamp"] = "2026-01-02T00:00:00"
    moved = folder / f"{29:032x}.json"
    later.write_text(json.dumps(event))
    later.rename(tmp_path / "later.json")
    moved.rename(tmp_path / "last.json")
    looks = FolderWatch(tmp_path, said.append)
    assert [r.added for r in looks.look()] == [29]
    (tmp_path / "last.json").rename(moved)
    (result,) = looks.look()
    assert result.added == 1
    first = folder / f"{0:032x}.json"
    first.write_text("not read again: not JSON. " * 40)
    (tmp_path / "later.json").rename(later)
    (result,) = looks.look()
    assert result.added == 1
    stored = ids("ab" * 16)
    assert stored == [f"{i:032x}" for i in range(30)] + [f"{99:032x}"]
    assert said == [f"{first}: was rewritten after it was stored; the stored event is kept as it was"]


@pytest.mark.django_db(transaction=True)
def test_the_command_stores_a_new_file_within_two_seconds(agent_folder):
    out, stop = io.StringIO(), threading.Event()
    thread = threading.Thread(
        target=call_command, args=("watch", str(agent_folder)), kwargs={"stdout": out, "stop": stop}
    )
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while ids(agent_folder.name) != ["u", "a1"] and time.monotonic() < deadline:
            time.sleep(0.05)
        written = time.monotonic()
        write(agent_folder, 2, observation("o1", "a1", "a1", "c1"))
        while ids(agent_folder.name) != ["u", "a1", "o1"] and time.monotonic() < written + 10:
            time.sleep(0.05)
        assert time.monotonic() - written < 2
    finally:
        stop.set()
        thread.join(10)
    lines = out.getvalue().splitlines()
    assert lines[0] == f"watching {agent_folder} (every 1 s); Ctrl-C stops"
    assert f"{agent_folder.name}: 1 new of 3 events, 1 branch" in out.getvalue()
    assert f"http://127.0.0.1:8000/c/{agent_folder.name}/" in out.getvalue()
    assert lines[-1] == "stopped watching"
    assert not Conversation.objects.get().is_live  # nothing follows it any more
