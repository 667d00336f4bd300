"""A real openhands-agent-server for the whole session, a scripted LLM for each test, and
`manage.py sync --follow` running beside the test."""

from __future__ import annotations

import io
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from django.core.management import call_command
from django.db import OperationalError, connections

from eventviewer.models import Conversation

from .server import KEY, AgentServer, ScriptedLLM, Unavailable, finish, installed_python, terminal


@pytest.hookimpl(tryfirst=True)  # before xdist's, which writes the group into the test's id
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``--dist loadgroup``) every agent-server test goes to one worker,
    so one server starts (and one worker waits for its install), not one per worker."""
    for item in items:
        if item.get_closest_marker("agentserver"):
            item.add_marker(pytest.mark.xdist_group("agentserver"))


@pytest.fixture(scope="session")
def agent_server(tmp_path_factory) -> Iterator[AgentServer]:
    try:
        started = time.monotonic()
        python = installed_python()
        installed = time.monotonic() - started
        server = AgentServer(python, tmp_path_factory.mktemp("agent-server"))
        ready = server.start()
    except Unavailable as e:
        pytest.fail(f"The agent-server tests are never skipped: {e}", pytrace=False)
    print(f"\nagent-server {server.url}: virtualenv ready in {installed:.1f} s, server ready in {ready:.1f} s")
    yield server
    server.stop()


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    """Runs `echo hello` in the terminal, then finishes."""
    stub = ScriptedLLM([terminal("echo hello"), finish("Said hello.")])
    yield stub
    stub.close()


class Output(io.StringIO):
    """What a command running in another thread prints, readable while it runs."""

    def __init__(self) -> None:
        super().__init__()
        self.lock = threading.Lock()

    def write(self, text: str) -> int:
        with self.lock:
            return super().write(text)

    def text(self) -> str:
        with self.lock:
            return self.getvalue()


class Following:
    """`manage.py sync --follow` in a thread, stopped as Ctrl-C would."""

    def __init__(self, url: str, *args: str, key: str = KEY):
        self.output = Output()
        self.stop = threading.Event()
        self.error: BaseException | None = None
        arguments = ["--server", url, "--api-key", key, "--follow", *args]
        self.thread = threading.Thread(target=self._run, args=(arguments,), daemon=True)
        self.thread.start()

    def _run(self, arguments: list[str]) -> None:
        try:
            call_command("sync", *arguments, stdout=self.output, stderr=self.output, stop=self.stop)
        except BaseException as e:  # the test reads it
            self.error = e
        finally:
            connections.close_all()  # this thread's: a test database with a session open cannot be dropped

    def says(self, text: str, timeout: float = 60, times: int = 1) -> bool:
        """Whether the output holds ``text`` (at least ``times`` times) within ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while self.output.text().count(text) < times:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
        return True

    def finish(self, timeout: float = 30) -> None:
        self.stop.set()
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "sync --follow did not stop"


@pytest.fixture
def follow(transactional_db, agent_server) -> Iterator[Callable[..., Following]]:
    runs: list[Following] = []

    def start(*args: str, key: str = KEY, url: str = "") -> Following:
        runs.append(Following(url or agent_server.url, *args, key=key))
        return runs[-1]

    yield start
    for run in runs:
        run.finish()


def stored(conversation_id: str) -> Conversation | None:
    """The conversation as stored now. A follower may be writing: SQLite's shared
    in-memory test database then answers "locked" at once, so look again."""
    for _ in range(50):
        try:
            return Conversation.objects.filter(conversation_id=conversation_id).first()
        except OperationalError:
            time.sleep(0.1)
    raise AssertionError("the database stayed locked")


def stored_ids(conversation_id: str) -> list[str]:
    for _ in range(50):
        try:
            conversation = Conversation.objects.filter(conversation_id=conversation_id).first()
            if conversation is None:
                return []
            return list(conversation.events.order_by("seq").values_list("event_id", flat=True))
        except OperationalError:
            time.sleep(0.1)
    raise AssertionError("the database stayed locked")
