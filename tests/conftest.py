"""Shared fixtures: real SDK conversations, hand-made ones, and clients.

Nothing here imports Django at module level: the pure tests under tests/trajectory load
this file too, and run without Django (``make test-pure``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from eventviewer.models import Conversation

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "openhands-sdk"
# Set A (one conversation each). Set A2 (sub-agents, several conversations, side events) is read
# by the tests of those features.
SET_A2 = {"condense-head-before", "hooks", "pause-interrupt", "tokens-and-logs", "subagent", "multimodal"}
SCENARIOS = sorted(
    p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name != "sdk-answers" and p.name not in SET_A2
)


def pytest_configure(config: pytest.Config) -> None:
    # make test-fast leaves these out; make test runs them (see the Makefile).
    config.addinivalue_line(
        "markers", "slow: real processes, lock waits, migrations, long imports, memory measurements"
    )


@pytest.fixture(autouse=True)
def tasks_run_inline(request, tmp_path):
    """Background tasks run inside the request that enqueues them (the worker tests
    start real `manage.py worker` processes instead); uploads go to a temporary folder;
    passwords are hashed cheaply."""
    if not request.config.pluginmanager.hasplugin("django"):
        return  # the pure core's tests, which run without Django
    settings = request.getfixturevalue("settings")
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    # A cheap hasher for the accounts tests make (PBKDF2 costs 0.2 s of CPU a password).
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.EVENTVIEWER_UPLOAD_DIR = tmp_path / "uploads"
    if "lockouts" in settings.CACHES:  # SQLite: sessions and lockouts in files, each test its own
        files = {name: {**settings.CACHES[name], "LOCATION": str(tmp_path / name)} for name in ("sessions", "lockouts")}
        settings.CACHES = {**settings.CACHES, **files}


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory) -> Path:
    """A SQLite database file at today's schema, migrated once by `manage.py migrate`: the
    tests that start `manage.py` processes on a database file copy it (``sqlite_file``)
    rather than each migrate a new one."""
    path = tmp_path_factory.mktemp("migrated") / "db.sqlite3"
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{path}"}
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"], cwd=root, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return path


@pytest.fixture
def sqlite_file(request, tmp_path) -> Path:
    """``tmp_path / "db.sqlite3"``, a copy of ``migrated_sqlite``."""
    path = tmp_path / "db.sqlite3"
    shutil.copyfile(request.getfixturevalue("migrated_sqlite"), path)
    return path


def fixture_folder(scenario: str) -> Path:
    (folder,) = [p for p in (FIXTURES / scenario).iterdir() if p.is_dir()]
    return folder


def sdk_answers(scenario: str) -> dict:
    return json.loads((FIXTURES / "sdk-answers" / f"{fixture_folder(scenario).name}.json").read_text())


def import_scenario(scenario: str) -> Conversation:
    from eventviewer.imports.importer import import_paths

    (result,) = import_paths([(fixture_folder(scenario), scenario)])
    return result.conversation


@pytest.fixture
def imported(db) -> Callable[[str], Conversation]:
    return import_scenario


@pytest.fixture
def copy_scenario(tmp_path) -> Callable[[str], Path]:
    """A writable copy of a fixture conversation folder."""

    def copy(scenario: str) -> Path:
        source = fixture_folder(scenario)
        target = tmp_path / scenario / source.name
        shutil.copytree(source, target)
        for path in target.rglob("*"):
            path.chmod(0o644 if path.is_file() else 0o755)
        return target

    return copy


def write_folder(
    root: Path, events: list[dict], base_state: dict | None = None, conversation_id: str | None = None
) -> Path:
    """A conversation folder in the SDK's on-disk format, from event dicts."""
    conversation_id = conversation_id or uuid.uuid4().hex
    folder = root / conversation_id
    (folder / "events").mkdir(parents=True)
    for seq, event in enumerate(events):
        event_id = event.get("id", f"missing-{seq}") if isinstance(event, dict) else f"bad-{seq}"
        (folder / "events" / f"event-{seq:05d}-{event_id}.json").write_text(json.dumps(event))
    if base_state is not None:
        (folder / "base_state.json").write_text(json.dumps({"id": str(uuid.UUID(conversation_id)), **base_state}))
    return folder


@pytest.fixture
def folder(tmp_path) -> Callable[..., Path]:
    return lambda events, base_state=None, conversation_id=None: write_folder(
        tmp_path, events, base_state, conversation_id
    )


@pytest.fixture
def open_site(settings):
    """The site as `make run` serves it: no login needed to read."""
    settings.EVENTVIEWER_REQUIRE_LOGIN = False
    return settings


@pytest.fixture
def user(db, django_user_model):
    return django_user_model.objects.create_user("reviewer-lead", password="a-long-test-password")


@pytest.fixture
def user_client(client, user):
    client.force_login(user)
    return client


def ev(event_id: str, kind: str, parent: str | None = None, **fields) -> dict:
    """A minimal SDK event dict."""
    event = {"id": event_id, "kind": kind, "source": fields.pop("source", "agent"), "timestamp": "2026-01-01T00:00:00"}
    if parent is not None:
        event["parent_id"] = parent
    event.update(fields)
    return event


def action(
    event_id: str, parent: str | None, call: str, tool: str = "terminal", response: str = "r1", **fields
) -> dict:
    fields.setdefault("action", {"kind": "TerminalAction", "command": "ls"})
    fields.setdefault("thought", [])
    return ev(
        event_id,
        "ActionEvent",
        parent,
        tool_name=tool,
        tool_call_id=call,
        llm_response_id=response,
        tool_call={"id": call, "name": tool, "arguments": "{}"},
        **fields,
    )


def observation(
    event_id: str, parent: str | None, action_id: str, call: str, tool: str = "terminal", text: str = "ok", **fields
) -> dict:
    return ev(
        event_id,
        "ObservationEvent",
        parent,
        source="environment",
        action_id=action_id,
        tool_call_id=call,
        tool_name=tool,
        observation={"kind": "TerminalObservation", "content": [{"type": "text", "text": text}]},
        **fields,
    )


def message(event_id: str, parent: str | None, text: str, role: str = "user") -> dict:
    return ev(
        event_id,
        "MessageEvent",
        parent,
        source="user" if role == "user" else "agent",
        llm_message={"role": role, "content": [{"type": "text", "text": text}]},
    )


class _TextOf(HTMLParser):
    """The text inside the element with one id, as a browser shows it (tags dropped,
    entities decoded)."""

    VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"})

    def __init__(self, element_id: str):
        super().__init__()
        self.element_id = element_id
        self.depth = 0  # open elements inside the wanted one, counting it; 0: outside
        self.found = False
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in self.VOID:
            return
        if self.depth:
            self.depth += 1
        elif dict(attrs).get("id") == self.element_id:
            self.depth, self.found = 1, True

    def handle_endtag(self, tag):
        if self.depth and tag not in self.VOID:
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            self.parts.append(data)


def text_of(html: str, element_id: str) -> str:
    """The visible text of the element ``id=element_id`` on a page, whitespace collapsed."""
    parser = _TextOf(element_id)
    parser.feed(html)
    assert parser.found, f"no element with id {element_id!r} on the page"
    return " ".join(" ".join(parser.parts).split())


@pytest.fixture
def migrate():
    """Moves the test database to a migration (returns the apps as they were then); after
    the test, whatever happened, it is at today's schema again for the tests that follow
    (the transactional ones, and the processes that open the same database)."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    def to(target: tuple[str, str] | None = None):
        """To ``target``; with none, to today's schema."""
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        targets = [target] if target else executor.loader.graph.leaf_nodes()
        executor.migrate(targets)
        return executor.loader.project_state(targets).apps

    yield to
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


def run_import(*args) -> str:
    """What `manage.py import_conversation ARGS` prints."""
    import io

    from django.core.management import call_command

    out = io.StringIO()
    call_command("import_conversation", *[str(a) for a in args], stdout=out)
    return out.getvalue()


def refused(*args) -> list[str]:
    """An import that must fail: its problem lines, after checking that nothing was written
    (no conversation, event, run or instance) and that no line is a traceback."""
    import io

    from django.core.management import CommandError, call_command

    from eventviewer.models import Conversation, Event, Instance, Run

    def counts() -> tuple[int, ...]:
        return tuple(model.objects.count() for model in (Conversation, Event, Run, Instance))

    before = counts()
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_conversation", *[str(a) for a in args], stdout=io.StringIO(), stderr=err)
    assert counts() == before
    lines = err.getvalue().splitlines()
    assert lines and all("Traceback" not in line for line in lines)
    return lines
