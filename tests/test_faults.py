"""Faults: an upload whose request died is failed and cleaned up; a locked SQLite
database makes a worker and a login wait, not die."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from eventviewer import tasks
from eventviewer.models import Upload


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
    assert "Waiting for a worker" in client.get(dead.get_absolute_url()).content.decode()
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
