"""Background work, run by `manage.py worker` processes (django-tasks, with its
database backend): imports sent from the Import page, and deletions.

A background import writes how far it has come, with a heartbeat, to a file beside its
upload (the database is the import's alone until it commits: SQLite has one writer);
its page reads that file. A worker that stops mid-import (killed, out of memory) leaves
nothing written, and its silence marks its task failed."""

from __future__ import annotations

import logging
import os
import shutil
import socket
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django_tasks import TaskResult, TaskResultStatus, default_task_backend, task
from django_tasks_db.models import DBTaskResult

from eventviewer.imports.importer import ImportFailed, import_paths
from eventviewer.imports.progress import Progress, ticking
from eventviewer.models import Conversation, Upload

logger = logging.getLogger(__name__)

HEARTBEAT = 1.0  # seconds between progress writes
PROGRESS_FILE = "progress.json"
STOPPED = "the worker importing these files stopped before it finished (killed, or out of memory); nothing was imported"
# From an upload's row to its task: the request copies the files it received (seconds
# for the largest upload allowed). An upload still without a task after this long lost
# its request (the server stopped mid-upload) and will never get one.
HANDOFF_SECONDS = 600
INTERRUPTED = (
    "the upload was cut off before a worker was asked to import it (the server stopped while receiving it); "
    "nothing was imported: send the files again"
)


class WorkerStopped(Exception):
    """What a stopped worker's task is marked failed with."""


@task()
def import_upload(upload_id: str) -> list[dict[str, Any]]:
    """Import an upload's files, all or nothing, recording the outcome on the Upload."""
    upload = Upload.objects.get(pk=upload_id)
    progress = Progress()
    try:
        with ticking(HEARTBEAT, lambda: write_progress(upload.folder, progress)):
            imported = import_paths(upload.paths(), progress, upload.run or None)
    except ImportFailed as e:
        # The files' fault, said on the upload's page: a line in the log, no traceback.
        finish(upload, problems=e.problems)
        logger.info("import %s of %s: nothing was imported: %s", upload.pk, ", ".join(upload.names), e.problems[0])
        return []
    except Exception as e:
        finish(upload, problems=[f"the import failed: {type(e).__name__}: {e}"])
        raise
    results = [
        {
            "conversation_id": r.conversation.conversation_id,
            "title": str(r.conversation),
            "url": r.conversation.get_absolute_url(),
            "created": r.created,
            "added": r.added,
            "unchanged": r.unchanged,
            "summary": r.describe(),
        }
        for r in imported
    ]
    finish(upload, results=results)
    return results


@task()
def delete_conversations(pks: list[int]) -> int:
    """Delete conversations (already hidden) a batch of events at a time."""
    return sum(c.delete_in_batches() for c in Conversation.objects.filter(pk__in=pks))


def delete_in_background(conversations: QuerySet[Conversation]) -> None:
    """Hide these conversations at once; a worker deletes them."""
    pks = list(conversations.values_list("pk", flat=True))
    Conversation.objects.filter(pk__in=pks).update(deleting=True)
    delete_conversations.enqueue(pks)


def finish(upload: Upload, results: list[dict[str, Any]] | None = None, problems: list[str] | None = None) -> None:
    Upload.objects.filter(pk=upload.pk).update(
        results=results or [], problems=problems or [], finished_at=timezone.now()
    )
    shutil.rmtree(upload.folder, ignore_errors=True)


def write_progress(folder: Path, progress: Progress) -> None:
    """How far the import has come, with who is doing it and when it last said so."""
    if not folder.is_dir():
        return
    body = {"pid": os.getpid(), "host": socket.gethostname(), "beat": time.time(), **progress.as_dict()}
    partial = folder / f".{PROGRESS_FILE}.{os.getpid()}"
    partial.write_bytes(orjson.dumps(body))
    os.replace(partial, folder / PROGRESS_FILE)


def read_progress(upload: Upload) -> dict[str, Any] | None:
    try:
        progress: dict[str, Any] = orjson.loads((upload.folder / PROGRESS_FILE).read_bytes())
        return progress
    except (OSError, orjson.JSONDecodeError):
        return None


def is_silent(progress: dict[str, Any] | None, started: Any) -> bool:
    """Whether the worker running an import has stopped: its process is gone (when it
    ran on this machine), or it has not written for EVENTVIEWER_WORKER_SILENCE_SECONDS."""
    silence = settings.EVENTVIEWER_WORKER_SILENCE_SECONDS
    if progress is None:
        return started is not None and (timezone.now() - started).total_seconds() > silence
    if progress.get("host") == socket.gethostname() and not _alive(int(progress.get("pid", 0))):
        return True
    return time.time() - float(progress.get("beat", 0)) > silence


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def upload_state(upload: Upload) -> tuple[str, dict[str, Any] | None]:
    """waiting, running, stopped, failed or done, and the running import's progress."""
    if upload.finished_at is not None:
        return ("failed" if upload.problems else "done"), None
    result = _task_result(upload)
    if result is None or result.status == TaskResultStatus.READY:
        return "waiting", None
    progress = read_progress(upload)
    if result.status == TaskResultStatus.RUNNING:
        return ("stopped" if is_silent(progress, result.started_at) else "running"), progress
    return "stopped", progress  # finished without recording its outcome


def _task_result(upload: Upload) -> TaskResult[Any] | None:
    if not upload.task_id:
        return None
    try:
        return default_task_backend.get_result(upload.task_id)
    except Exception:  # noqa: BLE001 (a task the backend no longer knows: pruned)
        return None


def reap_stopped_imports() -> int:
    """Mark failed the imports whose worker stopped (their task and their upload) and the
    uploads whose request died before it asked for a worker, removing their files.
    Returns how many. Run by every worker, at start and now and then."""
    reaped = 0
    cut_off = timezone.now() - timedelta(seconds=HANDOFF_SECONDS)
    for upload in Upload.objects.filter(finished_at__isnull=True, task_id="", created_at__lt=cut_off):
        finish(upload, problems=[INTERRUPTED])  # its partial files go with it
        reaped += 1
    for upload in Upload.objects.filter(finished_at__isnull=True).exclude(task_id=""):
        state, _ = upload_state(upload)
        if state != "stopped":
            continue
        with transaction.atomic():
            running = DBTaskResult.objects.filter(pk=upload.task_id, status=TaskResultStatus.RUNNING).first()
            if running is not None:
                running.set_failed(WorkerStopped(STOPPED))
            finish(upload, problems=[STOPPED])
        reaped += 1
    return reaped
