"""What run.py and load.py share: Django setup, the import child, machine facts."""

from __future__ import annotations

import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import warnings
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
PROJECT = BENCH.parent
if str(PROJECT) not in sys.path:
    sys.path.insert(0, str(PROJECT))


def django_environment(database_url: str) -> dict[str, str]:
    """Environment for this process and its children.

    Settings load with DEBUG on, so static files need no collectstatic;
    ``setup_django`` then turns DEBUG off for the measured work (see there).
    """
    return {
        "DJANGO_SETTINGS_MODULE": "eventviewer.settings",
        "DATABASE_URL": database_url,
        "DEBUG": "true",
        "SECRET_KEY": "bench",
        "EVENTVIEWER_REQUIRE_LOGIN": "false",
        "SECURE_SSL_REDIRECT": "false",
        "LOG_LEVEL": "CRITICAL",
    }


def setup_django(database_url: str, migrate: bool = False) -> None:
    os.environ.update(django_environment(database_url))
    # WhiteNoise warns that STATIC_ROOT (filled by collectstatic) does not exist: not needed here.
    warnings.filterwarnings("ignore", message="No directory at", module="whitenoise")
    import django
    from django.conf import settings

    django.setup()
    # Imports and requests run as in production: with DEBUG on, Django would keep
    # the SQL of every query (megabytes per bulk insert) and render templates with
    # debug information. Set before anything builds the template engines.
    settings.DEBUG = False
    if migrate:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)


def database_version() -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SHOW server_version")
            return f"PostgreSQL {cursor.fetchone()[0]}"
        if connection.vendor == "sqlite":
            cursor.execute("SELECT sqlite_version()")
            return f"SQLite {cursor.fetchone()[0]}"
    return connection.vendor


def forget(conversation_ids: list[str]) -> None:
    """Delete earlier copies of these (synthetic) conversations, so imports start fresh."""
    from django.db import connection, transaction

    from eventviewer.models import Conversation, Event

    with transaction.atomic():
        conversations = list(Conversation.objects.filter(conversation_id__in=conversation_ids))
        for conversation in conversations:
            Event.objects.filter(conversation=conversation).delete()
            conversation.delete()
    if conversations:
        # The next import must find the database as the first did. SQLite: give the freed
        # pages back, so it grows the file again. PostgreSQL: clear the deleted rows out
        # of the tables and their indexes (the search index's above all); left to
        # autovacuum, each repeat would insert among more dead entries than the one before.
        with connection.cursor() as cursor:
            cursor.execute("VACUUM")


@dataclass
class ImportRun:
    conversation_id: str
    added: int
    seconds: float
    peak_rss_mb: float  # the child's peak resident set size, from the kernel


def import_in_child(folder: Path, database_url: str) -> ImportRun:
    """Import ``folder`` in a fresh process (bench/import_child.py), which reports its
    own peak RSS (see ``import_child.peak_rss_mb``)."""
    env = dict(os.environ, **django_environment(database_url))
    command = [sys.executable, str(BENCH / "import_child.py"), str(folder)]
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=err, cwd=PROJECT)
        out = proc.stdout.read()
        proc.stdout.close()
        proc.wait()
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"import of {folder} failed ({proc.returncode}):\n{err.read().decode(errors='replace')}")
    result = json.loads(out.decode().strip().splitlines()[-1])
    return ImportRun(result["conversation_id"], result["added"], result["seconds"], result["peak_rss_mb"])


def event_at_depth(conversation_id: str, depth: int) -> str:
    """The id of the event at ``depth`` on the HEAD path (0 is the root)."""
    from eventviewer.models import Conversation, Event

    conversation = Conversation.objects.select_related("head").get(conversation_id=conversation_id)
    path = Event.objects.path_to(conversation.head)
    return path[min(depth, len(path) - 1)].event_id


def write_json(path: Path, data: Any) -> None:
    """Write through a temporary file, so a reader never sees half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def machine_info() -> dict[str, Any]:
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "memory_gb": _memory_gb(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "sqlite_library": sqlite3.sqlite_version,
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _memory_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None
