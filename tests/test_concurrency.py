"""Imports running at the same time, in real processes, against PostgreSQL.

SQLite serializes writers by design (and the suite uses an in-memory SQLite database
other processes cannot see), so these run in `make test-postgres`, which CI runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from eventviewer.models import Conversation, Event

from .conftest import action, fixture_folder, message, observation

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL: run make test-postgres"),
]


def big_conversation(path: Path, turns: int) -> Path:
    events = [message("m0", None, "a long task")]
    for i in range(turns):
        events.append(action(f"a{i}", events[-1]["id"], f"c{i}", response=f"r{i}"))
        events.append(observation(f"o{i}", f"a{i}", f"a{i}", f"c{i}", text="x" * 2000))
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    return path


def start_import(*paths: Path) -> subprocess.Popen:
    settings = connection.settings_dict
    url = (
        f"postgres://{settings['USER']}@{settings['HOST'] or '127.0.0.1'}:{settings['PORT'] or 5432}/{settings['NAME']}"
    )
    env = {**os.environ, "DATABASE_URL": url}
    return subprocess.Popen(
        [sys.executable, "manage.py", "import_conversation", *map(str, paths)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(*processes: subprocess.Popen) -> list[str]:
    outputs = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        outputs.append(out)
    return outputs


def test_two_imports_of_different_conversations_at_once(tmp_path):
    first = start_import(big_conversation(tmp_path / "first.jsonl", 600))
    second = start_import(fixture_folder("long-300"))
    finish(first, second)
    assert Conversation.objects.count() == 2
    assert Event.objects.count() == 1201 + 322
    for conversation in Conversation.objects.all():
        assert conversation.event_count == conversation.events.count()
        assert len(conversation.read_path(conversation.head).path) == conversation.event_count


def test_the_same_conversation_imported_by_two_processes_lands_once(tmp_path):
    source = big_conversation(tmp_path / "same.jsonl", 800)
    outputs = finish(*[start_import(source) for _ in range(3)])
    conversation = Conversation.objects.get()
    assert conversation.events.count() == conversation.event_count == 1601
    assert len(set(conversation.events.values_list("event_id", flat=True))) == 1601
    verbs = sorted(out.split()[0] for out in outputs)
    assert verbs == ["imported", "unchanged", "unchanged"]


def test_a_resync_racing_a_first_import_adds_each_event_once(tmp_path):
    full = big_conversation(tmp_path / "full.jsonl", 500)
    lines = full.read_text().splitlines()
    partial = tmp_path / "partial" / full.name
    partial.parent.mkdir()
    partial.write_text("\n".join(lines[:400]) + "\n")
    finish(start_import(partial), start_import(full))
    conversation = Conversation.objects.get()
    assert conversation.events.count() == len(lines)
    assert conversation.head.event_id == "o499"
