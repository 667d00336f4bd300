"""Faults: an upload whose request died is failed and cleaned up; a locked SQLite
database makes a worker and a login wait, not die."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from eventviewer import tasks
from eventviewer.models import Upload

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow  # real processes waiting out locks


def died_mid_upload(age: timedelta) -> Upload:
    """What a request killed while copying an upload leaves: its row, its folder and a
    partial file, and no task."""
    upload = Upload.objects.create(names=["big.zip"], created_at=timezone.now() - age)
    upload.folder.mkdir(parents=True)
    (upload.folder / upload.stored_name(0)).write_bytes(b"PK\x03\x04 partial")
    return upload


def test_an_upload_whose_request_died_is_marked_failed_and_its_files_removed(client, user):
    client.force_login(user)
    dead = died_mid_upload(timedelta(seconds=tasks.HANDOFF_SECONDS + 60))
    assert "Waiting for the import to start" in client.get(dead.get_absolute_url()).content.decode()
    assert tasks.reap_stopped_imports() == 1  # what every worker runs at start and every 15 s
    dead.refresh_from_db()
    assert dead.finished_at is not None and dead.problems == [tasks.INTERRUPTED]
    assert not dead.folder.exists()
    page = client.get(dead.get_absolute_url()).content.decode()
    assert "Nothing was imported" in page and "send the files again" in page
    assert tasks.reap_stopped_imports() == 0


def test_an_upload_still_being_handed_over_is_left_alone(db):
    fresh = died_mid_upload(timedelta(seconds=5))
    assert tasks.reap_stopped_imports() == 0
    fresh.refresh_from_db()
    assert fresh.finished_at is None and (fresh.folder / fresh.stored_name(0)).exists()


# -- a locked SQLite database -----------------------------------------------------------------
# An import holds SQLite's write lock until it commits. Here a plain connection holds it,
# longer than the processes' lock timeout (EVENTVIEWER_SQLITE_TIMEOUT, 3 s here, 60 s by
# default), as a long import would.

LOCK_TIMEOUT = "3"


@pytest.fixture
def sqlite_env(request, tmp_path) -> dict[str, str]:
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's database-wide write lock")
    environment = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "EVENTVIEWER_UPLOAD_DIR": str(tmp_path / "uploads"),
        "EVENTVIEWER_TASKS": "database",
        "EVENTVIEWER_SQLITE_TIMEOUT": LOCK_TIMEOUT,
        "EVENTVIEWER_REQUIRE_LOGIN": "true",
    }
    request.getfixturevalue("sqlite_file")  # at today's schema
    shell(
        environment,
        "from django.contrib.auth.models import User; User.objects.create_user('lead', password='a-long-pw-9')",
    )
    return environment


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def shell(env: dict[str, str], code: str) -> str:
    return manage(env, "shell", "--no-imports", "-c", code).strip()


@contextmanager
def write_locked(env: dict[str, str]) -> Iterator[None]:
    """SQLite's write lock held, as an import holds it until it commits."""
    holder = sqlite3.connect(env["DATABASE_URL"].removeprefix("sqlite:///"), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("UPDATE auth_user SET first_name = 'importing'")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


LOGIN = """
import time
from django.test import Client
c = Client()
t = time.monotonic()
bad = c.post('/accounts/login/', {'username': 'lead', 'password': 'wrong'})
good = c.post('/accounts/login/', {'username': 'lead', 'password': 'a-long-pw-9'})
page = c.get('/')
print(bad.status_code, good.status_code, page.status_code, round(time.monotonic() - t, 1))
"""


def test_a_login_while_an_import_holds_the_write_lock_succeeds_at_once(sqlite_env):
    with write_locked(sqlite_env):
        bad, good, page, seconds = shell(sqlite_env, LOGIN).split()
    assert (bad, good, page) == ("200", "302", "200")
    assert float(seconds) < float(LOCK_TIMEOUT)  # it never waited for the lock


def test_five_bad_passwords_during_an_import_still_lock_the_account(sqlite_env):
    code = (
        "from django.test import Client\nc = Client()\n"
        "print([c.post('/accounts/login/', {'username': 'lead', 'password': 'x'}).status_code for _ in range(6)])"
    )
    with write_locked(sqlite_env):
        assert shell(sqlite_env, code) == "[200, 200, 200, 200, 429, 429]"
    assert shell(sqlite_env, LOGIN).split()[1] == "429"
    manage(sqlite_env, "axes_reset")  # ends every lockout
    assert shell(sqlite_env, LOGIN).split()[1] == "302"


def test_a_worker_waits_out_a_locked_database_and_then_runs_tasks(sqlite_env):
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "worker", "--interval", "0.2", "--no-startup-delay"],
        cwd=ROOT,
        env=sqlite_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(2)  # started, polling
        with write_locked(sqlite_env):
            time.sleep(2 * float(LOCK_TIMEOUT) + 1)  # polls meet the lock and time out
            assert worker.poll() is None, worker.communicate()[1][-2000:]
        task_id = shell(
            sqlite_env, "from eventviewer.tasks import delete_conversations; print(delete_conversations.enqueue([]).id)"
        )
        reader = sqlite3.connect(sqlite_env["DATABASE_URL"].removeprefix("sqlite:///"))
        status = ""
        for _ in range(150):
            (status,) = reader.execute(
                "SELECT status FROM django_tasks_database_dbtaskresult WHERE id = ?", [task_id.replace("-", "")]
            ).fetchone()
            if status == "SUCCESSFUL":
                break
            time.sleep(0.2)
        reader.close()
        assert status == "SUCCESSFUL" and worker.poll() is None
    finally:
        worker.terminate()
        _, err = worker.communicate(timeout=30)
    assert "The database is locked (an import is writing)" in err
