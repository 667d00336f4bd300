"""Background imports in real processes: a `manage.py worker` killed mid-import leaves
nothing written and its task marked failed; parser workers never outlive their import.

Each test has a database of its own that other processes can open: a SQLite file, or
(under `make test-postgres`) the test database."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from .conftest import message, write_folder

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]  # real worker processes


@pytest.fixture
def env(request, tmp_path) -> dict[str, str]:
    if connection.vendor == "postgresql":
        s = connection.settings_dict
        url = f"postgres://{s['USER']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"
    else:
        url = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    environment = {
        **os.environ,
        "DATABASE_URL": url,
        "EVENTVIEWER_UPLOAD_DIR": str(tmp_path / "uploads"),
        "EVENTVIEWER_TASKS": "database",
    }
    if connection.vendor != "postgresql":
        request.getfixturevalue("sqlite_file")  # at today's schema
    return environment


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def shell(env: dict[str, str], code: str) -> str:
    return manage(env, "shell", "--no-imports", "-c", code).strip()


def big_folder(root: Path, events: int, size: int = 3000) -> Path:
    chain = [message("m0", None, "start " + "x" * size)]
    chain += [message(f"m{i}", f"m{i - 1}", f"step {i} " + "x" * size) for i in range(1, events)]
    return write_folder(root, chain)


def children_of(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(p) for p in (task / "children").read_text().split()}
        except OSError:
            pass
    return found


def gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")  # a zombie has ended; only its parent's reaping is left


def wait_for(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


ENQUEUE = """
import shutil, sys
from eventviewer import tasks
from eventviewer.models import Upload
upload = Upload.objects.create(names=["run.zip"])
upload.folder.mkdir(parents=True)
shutil.make_archive(str(upload.folder / "upload-0"), "zip", "{root}")
result = tasks.import_upload.enqueue(str(upload.id))
Upload.objects.filter(pk=upload.pk).update(task_id=str(result.id))
print(upload.id)
"""

OUTCOME = """
import json
from django_tasks_db.models import DBTaskResult
from eventviewer.models import Conversation, Event, Upload
upload = Upload.objects.get(pk="{upload}")
task = DBTaskResult.objects.get(pk=upload.task_id)
print(json.dumps({{"conversations": Conversation.objects.count(), "events": Event.objects.count(),
    "status": task.status, "problems": upload.problems, "folder": upload.folder.exists()}}))
"""


def test_a_worker_killed_mid_import_writes_nothing_and_its_task_is_marked_failed(env, tmp_path):
    big_folder(tmp_path / "conversation", 20_000, size=200)
    upload = shell(env, ENQUEUE.format(root=tmp_path / "conversation"))
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "worker", "--interval", "0.1", "--no-startup-delay"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        progress = Path(env["EVENTVIEWER_UPLOAD_DIR"]) / upload / "progress.json"

        def importing():
            try:
                return json.loads(progress.read_text())["conversations"] > 0
            except (OSError, ValueError, KeyError):
                return False

        wait_for(importing, 120, "the import to be under way")
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
        assert not children_of(worker.pid)
        before = json.loads(shell(env, OUTCOME.format(upload=upload)))
        assert (before["conversations"], before["events"], before["status"]) == (0, 0, "RUNNING")
    finally:
        if worker.poll() is None:
            worker.kill()
    # The next worker to start finds the silent task and marks it failed.
    second = subprocess.Popen(
        [sys.executable, "manage.py", "worker", "--interval", "0.1", "--no-startup-delay"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        after = wait_for(
            lambda: (o := json.loads(shell(env, OUTCOME.format(upload=upload))))["status"] == "FAILED" and o,
            60,
            "the task to be marked failed",
        )
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=30)
    assert after["problems"] and "stopped before it finished" in after["problems"][0]
    assert after["conversations"] == 0 and not after["folder"]


def test_parser_workers_exit_when_their_import_is_killed(env, tmp_path):
    # Big enough that the import is still running when it is killed (it runs at
    # 10,000-15,000 events/s), killed as soon as its (at least two) workers are there.
    folder = big_folder(tmp_path, 20_000, size=1000)
    process = subprocess.Popen(
        [sys.executable, "manage.py", "import_conversation", str(folder)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        parsers = wait_for(lambda: len(kids := children_of(process.pid)) >= 2 and kids, 60, "parser workers")
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        wait_for(lambda: all(gone(p) for p in parsers), 5, "the parser workers to exit")
    finally:
        if process.poll() is None:
            process.kill()
    assert shell(env, "from eventviewer.models import Event; print(Event.objects.count())") == "0"


READER = """
import json, time
from collections import Counter
from django.test import Client
client, seen, slowest = Client(), Counter(), 0.0
urls = ["/", "/c/{cid}/", "/c/{cid}/?leaf=m50000", "/api/conversations/{cid}/path/?limit=100", "/api/conversations/"]
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    for url in urls:
        started = time.perf_counter()
        status = client.get(url).status_code
        slowest = max(slowest, time.perf_counter() - started)
        seen[status] += 1
    if client.get("/c/{cid}/").status_code == 404 and seen[404] > 20:
        break
print(json.dumps({{"statuses": seen, "slowest": slowest}}))
"""


def test_deleting_100000_events_goes_in_short_batches_while_readers_read(env, tmp_path):
    path = tmp_path / "big.jsonl"
    with open(path, "w") as f:
        f.write(json.dumps(message("m0", None, "start")) + "\n")
        for i in range(1, 100_000):
            f.write(json.dumps(message(f"m{i}", f"m{i - 1}", f"step {i}")) + "\n")
    out = manage(env, "import_conversation", str(path))
    cid = out.split()[1].rstrip(":")
    reader_env = {**env, "EVENTVIEWER_REQUIRE_LOGIN": "false"}
    readers = [
        subprocess.Popen(
            [sys.executable, "manage.py", "shell", "--no-imports", "-c", READER.format(cid=cid)],
            cwd=ROOT,
            env=reader_env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    time.sleep(2)  # the readers are reading
    deleted = manage(env, "delete_conversation", cid, "-v", "2")
    assert deleted.startswith(f"deleted {cid}: 100,000 events")
    longest = float(deleted.split("the longest ")[1].split()[0])
    assert longest < 1.0, deleted
    for reader in readers:
        out, err = reader.communicate(timeout=180)
        assert reader.returncode == 0, err
        seen = json.loads(out)["statuses"]
        assert set(seen) <= {"200", "404"} and seen.get("200") and seen.get("404"), seen
    left = "from eventviewer.models import Event, EventPayload, Conversation; "
    left += "print(Event.objects.count(), EventPayload.objects.count(), Conversation.objects.count())"
    assert shell(env, left) == "0 0 0"
