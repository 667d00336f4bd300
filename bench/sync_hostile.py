"""Hostile agent-servers (issue 22, item 8 and 10) against `manage.py sync [--follow]`, each
run in a fresh process whose peak memory is measured. Run by ``bench/run.py --hostile``.

Targets: each refusal within 500 MB peak and 60 s; following 1,500 conversations with
at most 10 threads and 6 database connections."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from common import BENCH, PROJECT, django_environment

from tests.agentserver.fake import FakeAgentServer, HostileHTTP, chain, info, send_json
from tests.agentserver.server import KEY

TARGET_MB = 500
TARGET_S = 60.0  # endless pages: 500,000 events pulled before the cap refuses them
CID = "0123456789abcdef0123456789abcdef"


def _rest(page: Callable[[BaseHTTPRequestHandler], None]) -> Callable[[BaseHTTPRequestHandler], None]:
    def answer(handler: BaseHTTPRequestHandler) -> None:
        if handler.path.split("?")[0].endswith("/events/search"):
            page(handler)
        else:
            send_json(handler, info(CID, chain(CID, 1)))

    return answer


def huge(handler: BaseHTTPRequestHandler) -> None:
    block = b"[" + b'"xxxxxxx",' * (1024 * 1024 // 10)
    handler.send_response(200)
    handler.send_header("Content-Length", str(300 * len(block)))
    handler.end_headers()
    for _ in range(300):
        handler.wfile.write(block)


def endless(handler: BaseHTTPRequestHandler) -> None:
    n = int(handler.path.rsplit("page_id=p", 1)[1].split("&")[0]) if "page_id=p" in handler.path else 0
    send_json(handler, {"items": chain(CID, 100, start=n * 100), "next_page_id": f"p{n + 1}"})


def trickle(handler: BaseHTTPRequestHandler) -> None:
    handler.send_response(200)
    handler.send_header("Content-Length", "1000000")
    handler.end_headers()
    for _ in range(100_000):
        handler.wfile.write(b" ")
        handler.wfile.flush()
        time.sleep(0.01)


async def flood(socket: Any, conversation_id: str) -> None:
    for event in chain(conversation_id, 20_000, start=10):
        await socket.send(json.dumps(event))


async def big_frames(socket: Any, conversation_id: str) -> None:
    (event,) = chain(conversation_id, 1, start=10, size=17 * 1024 * 1024)
    for _ in range(20):
        await socket.send(json.dumps(event))


CASES: list[tuple[str, Callable[[], Any], list[str], dict[str, str]]] = [
    ("sync: an events page of 300 MB", lambda: HostileHTTP(_rest(huge)), ["--conversation", CID], {}),
    ("sync: endless pages", lambda: HostileHTTP(_rest(endless)), ["--conversation", CID], {}),
    (
        "sync: a body a byte at a time, EVENTVIEWER_SYNC_ANSWER_SECONDS=5",
        lambda: HostileHTTP(_rest(trickle)),
        ["--conversation", CID],
        {"EVENTVIEWER_SYNC_ANSWER_SECONDS": "5"},
    ),
    (
        "sync --follow: a WebSocket flood past EVENTVIEWER_MAX_EVENTS=1000",
        lambda: FakeAgentServer({CID: chain(CID, 10)}, push=flood),
        ["--conversation", CID, "--follow"],
        {"EVENTVIEWER_MAX_EVENTS": "1000"},
    ),
    (
        "sync --follow: 17 MiB WebSocket frames",
        lambda: FakeAgentServer({CID: chain(CID, 10)}, push=big_frames),
        ["--conversation", CID, "--follow"],
        {},
    ),
]
MANY = 1500


def child(url: str, arguments: list[str], expect_live: int) -> None:
    """In the fresh process: the command, its peak memory, and (following) its threads and connections."""
    from common import setup_django

    setup_django(os.environ["DATABASE_URL"])
    from django.core.management import CommandError, call_command
    from django.db.backends.signals import connection_created

    opened: set[int] = set()
    connection_created.connect(lambda **kwargs: opened.add(threading.get_ident()), weak=False)
    out, stop = io.StringIO(), threading.Event()
    result: dict[str, Any] = {"refused": False, "line": ""}

    def run() -> None:
        try:
            call_command("sync", "--server", url, "--api-key", KEY, *arguments, stdout=out, stderr=out, stop=stop)
        except CommandError as e:
            result["refused"], result["line"] = True, str(e)

    started = time.perf_counter()
    thread = threading.Thread(target=run)
    thread.start()
    threads = 0
    while thread.is_alive() and time.perf_counter() - started < 300:
        threads = max(threads, threading.active_count() - 1)
        if expect_live and out.getvalue().count(": following live") >= expect_live:
            time.sleep(2)
            threads = max(threads, threading.active_count() - 1)
            stop.set()
        thread.join(0.2)
    stop.set()
    thread.join()
    refusal = [line for line in out.getvalue().splitlines() if "refused" in line or "over the limit" in line]
    status = Path("/proc/self/status").read_text()
    peak = int(status.split("VmHWM:")[1].split()[0]) / 1024
    result.update(
        seconds=time.perf_counter() - started,
        peak_mb=peak,
        threads=threads,
        connections=len(opened),
        line=(refusal or [result["line"]])[0][-140:],
    )
    print(json.dumps(result))


def _child(url: str, arguments: list[str], database_url: str, extra: dict[str, str], live: int = 0) -> dict:
    env = dict(os.environ, **django_environment(database_url), **extra)
    done = subprocess.run(
        [sys.executable, str(BENCH / "sync_hostile.py"), url, str(live), *arguments],
        env=env,
        cwd=PROJECT,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        return {"refused": False, "line": done.stderr[-200:], "seconds": 0, "peak_mb": 0, "crashed": True}
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(report: Any, database_url: str, only: str = "") -> None:
    for label, start, arguments, extra in CASES:
        if only and not any(text in label for text in only.split(",")):
            continue
        print(f"... {label}", file=sys.stderr)
        server = start()
        try:
            got = _child(server.url, arguments, database_url, extra)
        finally:
            server.close()
        met = got["refused"] and got["peak_mb"] < TARGET_MB and got["seconds"] < TARGET_S
        outcome = f"refused: {got['line'][-90:]}" if got["refused"] else f"NOT refused: {got['line'][-90:]}"
        report.add(
            label,
            f"{outcome}; {got['seconds']:.1f} s, {got['peak_mb']:.0f} MB peak",
            f"refused, < {TARGET_S:.0f} s, < {TARGET_MB} MB",
            met,
            got["seconds"],
        )
    label = f"sync --follow: {MANY:,} conversations"
    if only and not any(text in label for text in only.split(",")):
        return
    print(f"... {label}", file=sys.stderr)
    server = FakeAgentServer({uuid.uuid4().hex: chain(CID, 2) for _ in range(MANY)})
    try:
        for cid in server.conversations:
            server.conversations[cid] = chain(cid, 2)
        got = _child(server.url, ["--follow"], database_url, {}, live=MANY)
    finally:
        server.close()
    met = got.get("threads", 99) <= 10 and got.get("connections", 99) <= 6 and got["peak_mb"] < TARGET_MB
    report.add(
        label,
        f"{got.get('threads')} threads, {got.get('connections')} database connections, "
        f"{got['peak_mb']:.0f} MB peak, all live after {got['seconds']:.0f} s",
        f"<= 10 threads, <= 6 connections, < {TARGET_MB} MB",
        met,
        got["seconds"],
    )


if __name__ == "__main__":
    child(sys.argv[1], sys.argv[3:], int(sys.argv[2]))
