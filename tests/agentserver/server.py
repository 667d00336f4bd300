"""A real openhands-agent-server for the tests, and the scripted LLM its agent talks to.

The server is PyPI's ``openhands-agent-server`` (with the SDK and tools of the same
version), installed once into its own Python 3.12 virtualenv under the user's cache
folder, started on 127.0.0.1 with everything it writes in a temporary folder. The LLM is
a small OpenAI-compatible chat-completions server in this process: the agent's n-th call
gets the script's n-th answer, so a run is the same every time. Nothing leaves the
machine (see ../shared/notes/openhands-agent-server.md for the measured facts).
"""

from __future__ import annotations

import fcntl
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

VERSION = "1.58.2"
PACKAGES = [f"openhands-agent-server=={VERSION}", f"openhands-sdk=={VERSION}", f"openhands-tools=={VERSION}"]
KEY = "sk-eventviewer-test"
START_TIMEOUT = 90  # seconds to /ready: 8-12 s measured on the 2-core machine, more while the suite runs


class Unavailable(Exception):
    """The agent-server cannot be installed or started here; the message says why."""


def cache_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(os.environ.get("EVENTVIEWER_AGENT_SERVER_CACHE") or Path(base) / "eventviewer")


def python312() -> str:
    """A Python 3.12 interpreter (the agent-server needs it; eventviewer runs on 3.11)."""
    candidates = [os.environ.get("EVENTVIEWER_PYTHON312", ""), shutil.which("python3.12") or ""]
    candidates += sorted(glob.glob(str(Path.home() / ".pyenv/versions/3.12*/bin/python3.12")), reverse=True)
    candidates += ["/usr/local/bin/python3.12", "/usr/bin/python3.12"]
    for candidate in filter(None, candidates):
        check = subprocess.run(
            [candidate, "-c", "import sys, venv; assert sys.version_info[:2] == (3, 12)"], capture_output=True
        )
        if check.returncode == 0:
            return candidate
    raise Unavailable("no Python 3.12 found (set EVENTVIEWER_PYTHON312 to one)")


def uv() -> str | None:
    """uv (requirements-dev.txt), which installs the agent-server in about 15 s where pip takes 3 minutes."""
    beside = Path(sys.executable).parent / "uv"
    return str(beside) if beside.exists() else shutil.which("uv")


def installed_python() -> Path:
    """The agent-server virtualenv's python, installing it the first time (about 15 s with uv,
    3 minutes with pip; a lock lets parallel test runs wait for one install)."""
    cache = cache_folder()
    cache.mkdir(parents=True, exist_ok=True)
    venv = cache / f"agent-server-{VERSION}"
    done = venv / ".eventviewer-installed"
    with open(cache / f"agent-server-{VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return venv / "bin" / "python"
        shutil.rmtree(venv, ignore_errors=True)  # an install that was interrupted
        started = time.monotonic()
        python = venv / "bin" / "python"
        if (installer := uv()) is not None:
            subprocess.run([installer, "venv", "--quiet", "--python", python312(), str(venv)], check=True)
            install = [installer, "pip", "install", "--quiet", "--python", str(python), *PACKAGES]
        else:
            subprocess.run([python312(), "-m", "venv", str(venv)], check=True)
            install = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *PACKAGES]
        result = subprocess.run(install, capture_output=True, text=True)
        if result.returncode != 0:
            raise Unavailable(f"{' '.join(install[:3])} {' '.join(PACKAGES)} failed:\n{result.stderr[-3000:]}")
        done.write_text(f"{' '.join(PACKAGES)}\ninstalled in {time.monotonic() - started:.0f} s\n")
        return python


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AgentServer:
    """One agent-server process; ``restart`` keeps its port and its conversations."""

    def __init__(self, python: Path, root: Path, key: str = KEY):
        self.python, self.root, self.key = python, root, key
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None
        for name in ("home", "conversations", "project", "bash_events", "worktrees", "tmux"):
            (root / name).mkdir(parents=True, exist_ok=True)
        self.log = root / "server.log"

    def environment(self) -> dict[str, str]:
        root = self.root
        keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TZ")}
        return {
            **keep,
            "HOME": str(root / "home"),
            "OH_SESSION_API_KEYS_0": self.key,
            "OH_SECRET_KEY": "eventviewer-test-secret",  # keeps the stored llm key readable across restarts
            "OH_CONVERSATIONS_PATH": str(root / "conversations"),
            "OH_WORKSPACE_PATH": str(root / "project"),
            "OH_BASH_EVENTS_DIR": str(root / "bash_events"),
            "OH_CONVERSATION_WORKTREE_ROOT": str(root / "worktrees"),
            "OH_ENABLE_VSCODE": "false",
            "OH_ENABLE_BROWSER": "false",
            "OH_PRELOAD_TOOLS": "false",
            "OPENHANDS_AGENT_SERVER_CONFIG_PATH": str(root / "no-config.json"),
            "TMUX_TMPDIR": str(root / "tmux"),
            "OPENHANDS_SUPPRESS_BANNER": "1",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no download of litellm's price list
        }

    def start(self) -> float:
        """Start and wait until ready; returns the seconds it took."""
        started = time.monotonic()
        with open(self.log, "a") as log:
            self.process = subprocess.Popen(
                [str(self.python), "-m", "openhands.agent_server", "--host", "127.0.0.1", "--port", str(self.port)],
                cwd=self.root,
                env=self.environment(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        while time.monotonic() - started < START_TIMEOUT:
            if self.process.poll() is not None:
                raise Unavailable(f"the agent-server exited ({self.process.returncode}):\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/ready", timeout=2) as response:
                    if response.status == 200:
                        return time.monotonic() - started
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.2)
        self.stop()
        raise Unavailable(f"the agent-server was not ready after {START_TIMEOUT} s:\n{self.log_tail()}")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self._stop_tmux()

    def restart(self) -> float:
        self.stop()
        return self.start()

    def _stop_tmux(self) -> None:
        """The terminal tool's tmux server daemonizes: find it by our TMUX_TMPDIR."""
        mine = f"TMUX_TMPDIR={self.root / 'tmux'}".encode()
        for environ in glob.glob("/proc/[0-9]*/environ"):
            try:
                with open(environ, "rb") as f:
                    if mine in f.read().split(b"\0"):
                        os.kill(int(environ.split("/")[2]), signal.SIGTERM)
            except (OSError, ValueError):
                continue

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # --- the REST API, as a client of the server ---------------------------------------

    def api(self, method: str, path: str, body: Any = None, key: str | None = None) -> tuple[int, Any]:
        request = urllib.request.Request(
            self.url + path,
            data=None if body is None else json.dumps(body).encode(),
            method=method,
            headers={"X-Session-API-Key": self.key if key is None else key, "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def create(self, llm: ScriptedLLM, text: str | None = None, **fields: Any) -> str:
        """A new conversation whose agent uses ``llm``; with ``text`` it runs at once.
        Returns its id as 32 hex digits."""
        workspace = self.root / "project" / f"w{time.monotonic_ns()}"
        body: dict[str, Any] = {
            "agent": {
                "kind": "Agent",
                "llm": {
                    "model": "openai/stub",
                    "base_url": llm.url,
                    "api_key": "stub-key",
                    "usage_id": "agent",
                    "num_retries": 0,
                },
                "tools": [{"name": "terminal"}],
            },
            "workspace": {"working_dir": str(workspace)},
            "autotitle": False,
            **fields,
        }
        if text is not None:
            body["initial_message"] = {"role": "user", "content": [{"type": "text", "text": text}]}
        status, info = self.api("POST", "/api/conversations", body)
        assert status == 201, (status, info)
        return info["id"].replace("-", "")

    def send(self, conversation_id: str, text: str) -> None:
        body = {"role": "user", "content": [{"type": "text", "text": text}], "run": True}
        status, answer = self.api("POST", f"/api/conversations/{conversation_id}/events", body)
        assert status == 200, (status, answer)

    def info(self, conversation_id: str) -> dict:
        status, info = self.api("GET", f"/api/conversations/{conversation_id}")
        assert status == 200, (status, info)
        return info

    def events(self, conversation_id: str) -> list[dict]:
        """Every event the server holds for the conversation, in its order."""
        events: list[dict] = []
        page = ""
        while True:
            status, found = self.api("GET", f"/api/conversations/{conversation_id}/events/search?limit=100{page}")
            assert status == 200, (status, found)
            events += found["items"]
            if not found["next_page_id"]:
                return events
            page = f"&page_id={found['next_page_id']}"

    def wait_for(self, conversation_id: str, status: str = "finished", timeout: float = 60) -> dict:
        """The conversation's info once its run reached ``status`` and its log went quiet
        (a last stats update can follow "finished")."""
        deadline = time.monotonic() + timeout
        seen = -1
        while time.monotonic() < deadline:
            info = self.info(conversation_id)
            count = len(self.events(conversation_id))
            if info["execution_status"] == status and count == seen:
                return info
            seen = count if info["execution_status"] == status else -1
            time.sleep(0.3)
        raise AssertionError(f"conversation {conversation_id} did not reach {status!r}:\n{self.log_tail()}")


# --- the scripted LLM -------------------------------------------------------------------


def terminal(command: str) -> dict:
    return {"tool": "terminal", "arguments": {"command": command}}


def finish(message: str = "Done.") -> dict:
    return {"tool": "finish", "arguments": {"message": message}}


class ScriptedLLM:
    """An OpenAI-compatible /v1/chat/completions on 127.0.0.1.

    A request holding n assistant messages gets ``script[n]``: one tool call each. The
    answer is the same for every conversation at the same step, so one script serves
    them all. ``hold(n)`` makes step n wait until the returned event is set."""

    def __init__(self, script: list[dict], delay: float = 0.0):
        self.script, self.delay = script, delay
        self.holds: dict[int, threading.Event] = {}
        self.calls = 0
        llm = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the http.server API)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                answer = llm.answer(body)
                data = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def hold(self, step: int) -> threading.Event:
        release = self.holds[step] = threading.Event()
        return release

    def answer(self, body: dict) -> dict:
        self.calls += 1
        step = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        release = self.holds.get(step)
        if release is not None:
            release.wait(60)
        if self.delay:
            time.sleep(self.delay)
        reply = self.script[min(step, len(self.script) - 1)]
        call = {
            "id": f"call_{step}_{self.calls}",
            "type": "function",
            "function": {"name": reply["tool"], "arguments": json.dumps(reply["arguments"])},
        }
        return {
            "id": f"chatcmpl-{self.calls}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": "stub",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": f"Step {step}.", "tool_calls": [call]},
                    "finish_reason": "tool_calls",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }

    def close(self) -> None:
        for release in self.holds.values():
            release.set()
        self.server.shutdown()
        self.server.server_close()


def waiting(check: Callable[[], Any], timeout: float = 30, every: float = 0.1) -> Any:
    """``check()``'s first truthy answer, polling until ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result or time.monotonic() > deadline:
            return result
        time.sleep(every)


class RestOnlyProxy:
    """A proxy in front of the agent-server that passes its REST API and refuses its
    WebSocket, as some reverse proxies do."""

    def __init__(self, upstream: str):
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the http.server API)
                if self.path.startswith("/sockets/"):
                    self.send_error(404, "no WebSocket here")
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() == "x-session-api-key"}
                request = urllib.request.Request(upstream + self.path, headers=headers)
                try:
                    with urllib.request.urlopen(request, timeout=30) as response:
                        status, body = response.status, response.read()
                except urllib.error.HTTPError as e:
                    status, body = e.code, e.read()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


if __name__ == "__main__":
    # `make test` starts this in the background first, so that the install (minutes) runs
    # beside the other installs, the checks and the pure tests; the tests then wait on its lock.
    try:
        print(f"agent-server virtualenv ready: {installed_python()}")
    except Unavailable as e:  # the agent-server tests say it again, and fail
        print(f"agent-server virtualenv: {e}")
