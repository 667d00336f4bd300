"""Load test: gunicorn serving a ~10k-event conversation to concurrent readers.

    python bench/load.py [--duration 10] [--concurrency 8] [--workers 3] [--events 10000]

Makes a throwaway SQLite database and imports a generated conversation into it,
collects static files into the same temporary folder, starts
``gunicorn eventviewer.wsgi`` with production settings (DEBUG off), then runs
--concurrency reader threads for --duration seconds against the conversation
page, the path API and the diagram. Reports requests/s, p50, p95 and errors per
URL, writes bench/load-results.json and exits 1 if any request failed.
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import BENCH, PROJECT, machine_info, setup_django, write_json
from generate import generate

RESULTS = BENCH / "load-results.json"
READY_TIMEOUT = 60.0
REQUEST_TIMEOUT = 60.0


@dataclass
class Sample:
    url: str
    seconds: float
    error: str = ""  # empty when the response was a 200


@dataclass
class Server:
    process: subprocess.Popen
    port: int
    log: Path
    env: dict[str, str] = field(default_factory=dict)


# -- setup ----------------------------------------------------------------------


def prepare(workdir: Path, events: int) -> tuple[str, str, list[str]]:
    """Database, conversation and static files; returns (database URL, settings module, URLs)."""
    database_url = f"sqlite:///{workdir}/load.sqlite3"
    setup_django(database_url, migrate=True)
    from django.db import connections

    from eventviewer.imports.importer import import_paths

    folder = generate(workdir / "conversations", events)
    (result,) = import_paths([(folder, str(folder))])
    conversation = result.conversation
    connections.close_all()  # the server's workers have the database to themselves
    print(
        f"imported {conversation.event_count:,} events, HEAD depth {conversation.head_path_length:,}, "
        f"{conversation.leaf_count} leaves",
        file=sys.stderr,
    )

    # collectstatic writes to STATIC_ROOT; a settings module in the temporary folder
    # points it there, so the checkout stays untouched.
    (workdir / "bench_settings.py").write_text(
        f"from eventviewer.settings import *  # noqa: F403\n\nSTATIC_ROOT = {str(workdir / 'static')!r}\n"
    )
    cid = conversation.conversation_id
    urls = [f"/c/{cid}/", f"/api/conversations/{cid}/path/", f"/c/{cid}/diagram.svg"]
    return database_url, "bench_settings", urls


def server_environment(workdir: Path, database_url: str, settings_module: str) -> dict[str, str]:
    return dict(
        os.environ,
        DJANGO_SETTINGS_MODULE=settings_module,
        PYTHONPATH=os.pathsep.join([str(workdir), str(PROJECT)]),
        DEBUG="false",
        SECRET_KEY="bench",
        ALLOWED_HOSTS="127.0.0.1",
        EVENTVIEWER_REQUIRE_LOGIN="false",
        SECURE_SSL_REDIRECT="false",
        DATABASE_URL=database_url,
        LOG_LEVEL="WARNING",
    )


def collectstatic(env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
        env=env,
        cwd=PROJECT,
        check=True,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(workdir: Path, env: dict[str, str], workers: int, threads: int) -> Server:
    port = free_port()
    log = workdir / "gunicorn.log"
    gunicorn = Path(sys.executable).with_name("gunicorn")
    command = [
        str(gunicorn),
        "eventviewer.wsgi",
        "--workers",
        str(workers),
        "--threads",
        str(threads),
        "--bind",
        f"127.0.0.1:{port}",
        "--timeout",
        "120",
        "--error-logfile",
        str(log),
    ]
    process = subprocess.Popen(command, env=env, cwd=PROJECT, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    server = Server(process, port, log, env)
    wait_ready(server)
    return server


def wait_ready(server: Server) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {server.process.returncode}:\n{tail(server.log)}")
        try:
            with socket.create_connection(("127.0.0.1", server.port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"gunicorn did not listen within {READY_TIMEOUT:.0f} s:\n{tail(server.log)}")


def stop_server(server: Server) -> int:
    """Graceful stop (SIGTERM lets workers finish their requests); returns the exit code."""
    server.process.send_signal(signal.SIGTERM)
    try:
        return server.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.process.kill()
        return server.process.wait()


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


# -- load -----------------------------------------------------------------------


def reader(port: int, urls: list[str], offset: int, deadline: float, samples: list[Sample]) -> None:
    """One client: requests the URLs in turn until the deadline, reusing its
    connection when the server keeps it open."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT)
    i = offset
    while time.monotonic() < deadline:
        url = urls[i % len(urls)]
        i += 1
        started = time.perf_counter()
        try:
            connection.request("GET", url)
            response = connection.getresponse()
            response.read()
            error = "" if response.status == 200 else f"HTTP {response.status}"
        except (OSError, http.client.HTTPException) as e:
            error = f"{type(e).__name__}: {e}"
            connection.close()
        samples.append(Sample(url, time.perf_counter() - started, error))
    connection.close()


def slow_client(port: int, deadline: float) -> None:
    """A client on a bad link: it sends its request a byte at a time, each second,
    holding whatever serves it (a sync worker, a thread) for as long as it can."""
    request = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + b"x" * 4096 + b"\r\n\r\n"
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=REQUEST_TIMEOUT) as s:
                for byte in request:
                    if time.monotonic() >= deadline:
                        return
                    s.sendall(bytes([byte]))
                    time.sleep(1.0)
        except OSError:
            time.sleep(0.1)  # the server closed it: come back, as a slow client would


def hammer(port: int, urls: list[str], seconds: float, concurrency: int, slow: int = 0) -> list[Sample]:
    samples: list[Sample] = []  # list.append is atomic under the GIL
    deadline = time.monotonic() + seconds
    threads = [
        threading.Thread(target=reader, args=(port, urls, n, deadline, samples), daemon=True)
        for n in range(concurrency)
    ]
    threads += [threading.Thread(target=slow_client, args=(port, deadline), daemon=True) for _ in range(slow)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return samples


def summarize(samples: list[Sample], urls: list[str], seconds: float) -> list[dict[str, Any]]:
    rows = []
    for url in urls:
        mine = [s for s in samples if s.url == url]
        times = sorted(s.seconds * 1000 for s in mine)
        errors = [s.error for s in mine if s.error]
        rows.append(
            {
                "url": url,
                "requests": len(mine),
                "requests_per_s": len(mine) / seconds,
                "p50_ms": statistics.median(times) if times else None,
                "p95_ms": statistics.quantiles(times, n=20)[-1] if len(times) > 1 else (times[0] if times else None),
                "errors": len(errors),
                "error_examples": sorted(set(errors))[:5],
            }
        )
    return rows


def print_table(rows: list[dict[str, Any]]) -> None:
    header = ("url", "req/s", "p50 ms", "p95 ms", "errors")
    cells = [
        (r["url"], f"{r['requests_per_s']:.1f}", _ms(r["p50_ms"]), _ms(r["p95_ms"]), str(r["errors"])) for r in rows
    ]
    widths = [max(len(line[i]) for line in [header, *cells]) for i in range(len(header))]
    for line in [header, tuple("-" * w for w in widths), *cells]:
        first, *numbers = zip(line, widths, strict=True)
        print("  ".join([first[0].ljust(first[1]), *(cell.rjust(width) for cell, width in numbers)]))
    for r in rows:
        for example in r["error_examples"]:
            print(f"  {r['url']}: {example}")


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=10, help="seconds of measured load")
    parser.add_argument("--concurrency", type=int, default=8, help="reader threads")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn worker processes")
    parser.add_argument("--events", type=int, default=10_000, help="events in the conversation")
    parser.add_argument("--warmup", type=float, default=2, help="seconds of unmeasured load first")
    parser.add_argument("--threads", type=int, default=8, help="threads per gunicorn worker (gthread)")
    parser.add_argument("--slow-clients", type=int, default=3, help="clients sending a byte a second alongside")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="eventviewer-load-"))
    server = None
    try:
        database_url, settings_module, urls = prepare(workdir, args.events)
        env = server_environment(workdir, database_url, settings_module)
        collectstatic(env)
        server = start_server(workdir, env, args.workers, args.threads)
        hammer(server.port, urls, args.warmup, args.concurrency)
        samples = hammer(server.port, urls, args.duration, args.concurrency, args.slow_clients)
        exit_code = stop_server(server)
        server = None
        if exit_code != 0:
            print(f"gunicorn exited with {exit_code}", file=sys.stderr)
    finally:
        if server is not None:
            stop_server(server)
        log = tail(workdir / "gunicorn.log")
        shutil.rmtree(workdir, ignore_errors=True)

    rows = summarize(samples, urls, args.duration)
    errors = sum(r["errors"] for r in rows)
    write_json(
        RESULTS,
        {
            "machine": machine_info(),
            "settings": vars(args),
            "urls": rows,
            "errors": errors,
            "gunicorn_exit_code": exit_code,
        },
    )
    print(
        f"{args.concurrency} readers and {args.slow_clients} slow clients, {args.workers} gunicorn workers "
        f"x {args.threads} threads, {args.duration:.0f} s, {args.events:,}-event conversation"
    )
    print_table(rows)
    if errors:
        print(f"gunicorn log (last lines):\n{log}")
    print(f"errors: {errors}")
    return 1 if errors or exit_code != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
