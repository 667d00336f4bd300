"""eventviewer benchmarks: generation, read ceiling, import, memory and page times.

    python bench/run.py [--quick] [--database-url URL] [--keep] [--evaluation]

Without --database-url a throwaway SQLite database is made in a temporary folder.
Prints a table (measure, figure, target, met) ending with ``targets: N/M met`` and
writes it, with the machine's details, to bench/results.json. See bench/README.md.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import orjson
from common import (
    BENCH,
    database_version,
    event_at_depth,
    forget,
    import_in_child,
    machine_info,
    setup_django,
    write_json,
)
from generate import generate, layout

RESULTS = BENCH / "results.json"
EVALUATION_RESULTS = BENCH / "evaluation-results.json"
RUNS_RESULTS = BENCH / "runs-results.json"
DEEP_DEPTH = 9000  # the ?leaf= page shows the branch ending this deep in the main line
REPEATS = 7
URL_TIME_BUDGET = 20.0  # seconds per URL; a slow view gets fewer (at least 3) timed requests

# Import speed: floors against regressions (import/ceiling), by database.
FLOOR_RATIO = {"sqlite": 0.24, "postgresql": 0.12}
TARGET_RSS_MB = 200
TARGET_PAGE_MS = 100
TARGET_PAGE_BYTES = 2_000_000
TARGET_API_MS = 100
TARGET_PARTIAL_MS = 100
TARGET_DIAGRAM_MS = 300
TARGET_SEARCH_MS = 200
# Searches inside the biggest conversation: a rare identifier, a phrase, a prefix, a common word.
SEARCHES = ["module_17", '"unexpected status"', "handl*", "pytest"]
HTMX = {"HTTP_HX_REQUEST": "true"}


@dataclass(frozen=True)
class Size:
    label: str
    events: int
    active_path: int | None = None


FULL = [Size("1k", 1_000), Size("10k", 10_000), Size("100k/10k path", 100_000, 10_000)]
QUICK = [Size("1k", 1_000), Size("5k/1k path", 5_000, 1_000)]


def runs_for(size: Size) -> int:
    """How many (read ceiling, import) pairs are measured. Short runs are noisier,
    and cheap to repeat."""
    return 7 if size.events <= 10_000 else 3


@dataclass
class Row:
    measure: str
    figure: str
    target: str = ""
    met: bool | None = None  # None: no target for this row
    value: float | None = None


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    conversations: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def add(
        self, measure: str, figure: str, target: str = "", met: bool | None = None, value: float | None = None
    ) -> None:
        self.rows.append(Row(measure, figure, target, met, value))


# -- measurements ---------------------------------------------------------------


def read_ceiling(folder: Path) -> float:
    """Seconds to list, read and parse every event file: what any importer must do."""
    started = time.perf_counter()
    events = folder / "events"
    for name in sorted(os.listdir(events)):
        if name.startswith("event-"):
            orjson.loads((events / name).read_bytes())
    return time.perf_counter() - started


def timed_get(client: Any, url: str, headers: dict[str, str] | None = None) -> tuple[float, int, int, str]:
    """(seconds, status, body bytes, error); a view that raises counts as status 500.
    The request's CPU time (this process's: the view runs here) goes in LAST_CPU."""
    started, cpu = time.perf_counter(), time.process_time()
    try:
        response = client.get(url, **(headers or {}))
        body = b"".join(response.streaming_content) if response.streaming else response.content
        status, error = response.status_code, ""
    except Exception as e:  # a view under construction: report it, keep going
        body, status, error = b"", 500, f"{type(e).__name__}: {e}"
    LAST_CPU[0] = time.process_time() - cpu
    return time.perf_counter() - started, status, len(body), error


LAST_CPU = [0.0]


def measure_url(client: Any, url: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """The first (cold) request, which also warms up, then the median of up to REPEATS."""
    cold, status, size, error = timed_get(client, url, headers)
    result: dict[str, Any] = {"url": url, "status": status, "error": error, "cold_ms": cold * 1000, "bytes": size}
    if status != 200:
        return result
    times: list[float] = []
    cpus: list[float] = []
    spent = 0.0
    while len(times) < REPEATS and (len(times) < 3 or spent < URL_TIME_BUDGET):
        seconds, status, size, error = timed_get(client, url, headers)
        if status != 200:
            result.update(status=status, error=error)
            return result
        times.append(seconds)
        cpus.append(LAST_CPU[0])
        spent += seconds
    result.update(
        median_ms=statistics.median(times) * 1000,
        median_cpu_ms=statistics.median(cpus) * 1000,
        runs=len(times),
        bytes=size,
    )
    return result


# -- the run --------------------------------------------------------------------


def bench_size(size: Size, root: Path, database_url: str, targeted: bool, report: Report) -> None:
    label = size.label
    started = time.perf_counter()
    folder = generate(root, size.events, active_path=size.active_path)
    generate_s = time.perf_counter() - started
    mib = sum(f.stat().st_size for f in (folder / "events").iterdir()) / 2**20
    report.add(f"generate {label}", f"{generate_s:.1f} s, {mib:.0f} MiB", value=generate_s)
    # Let the kernel finish writing the generated files first: otherwise that
    # write-back competes with (and is billed to) the import measured next.
    os.sync()

    # Each import is paired with a read ceiling measured just before it, and the ratio
    # is the median of the pairs' ratios: a machine that speeds up or slows down during
    # the run (a shared host does) then moves both sides of a pair alike.
    ceilings, runs = [], []
    for _ in range(runs_for(size)):
        os.sync()  # both sides of a pair start with nothing left to write back
        ceilings.append(read_ceiling(folder))
        forget([folder.name])
        os.sync()
        runs.append(import_in_child(folder, database_url))
    ceiling_s = statistics.median(ceilings)
    ceiling_eps = size.events / ceiling_s
    report.add(f"read+parse ceiling {label}", f"{ceiling_eps:,.0f} events/s", value=ceiling_eps)
    seconds = statistics.median(r.seconds for r in runs)
    peak_rss_mb = max(r.peak_rss_mb for r in runs)
    import_eps = runs[0].added / seconds
    ratio = statistics.median(c / r.seconds for c, r in zip(ceilings, runs, strict=True))
    report.add(f"import {label}", f"{import_eps:,.0f} events/s ({seconds:.2f} s)", value=import_eps)
    floor = FLOOR_RATIO.get(vendor(), 0.0)
    floored = size.events >= 10_000  # 1,000 events: fixed costs dominate, no floor
    report.add(
        f"import/ceiling {label}",
        f"{ratio:.2f}",
        f">= {floor:.2f}" if floored else "",
        ratio >= floor if floored else None,
        ratio,
    )
    rss_met = peak_rss_mb < TARGET_RSS_MB if targeted else None
    report.add(
        f"peak RSS import {label}",
        f"{peak_rss_mb:.0f} MB",
        f"< {TARGET_RSS_MB} MB" if targeted else "",
        rss_met,
        peak_rss_mb,
    )

    conversation = check_import(size, folder.name)
    if targeted:
        seconds_to_page = first_page_after_import(folder, database_url)
        report.add(f"import start to first page {label}", f"{seconds_to_page:.1f} s", value=seconds_to_page)
    report.conversations.append(
        {
            "label": label,
            "events": size.events,
            "active_path": size.active_path,
            "conversation_id": folder.name,
            "event_bytes": int(mib * 2**20),
            "generate_s": generate_s,
            "ceiling_s": ceiling_s,
            "ceiling_events_per_s": ceiling_eps,
            "import_s": seconds,
            "import_runs_s": [r.seconds for r in runs],
            "ceiling_runs_s": ceilings,
            "import_events_per_s": import_eps,
            "import_ratio": ratio,
            "peak_rss_mb": peak_rss_mb,
            **conversation,
        }
    )
    bench_pages(size, folder.name, conversation["head_path_length"], targeted, report)


def vendor() -> str:
    from django.db import connection

    return connection.vendor


def first_page_after_import(folder: Path, database_url: str) -> float:
    """Seconds from starting an import (``manage.py import_conversation`` in a process of its
    own, as a server's worker runs one) to the conversation's page answering 200 with its events."""
    import subprocess

    from common import PROJECT, django_environment
    from django.test import Client

    forget([folder.name])
    client = Client()
    url = f"/c/{folder.name}/"
    env = dict(os.environ, **django_environment(database_url))
    command = [sys.executable, "manage.py", "import_conversation", str(folder)]
    started = time.perf_counter()
    proc = subprocess.Popen(command, env=env, cwd=PROJECT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                response = client.get(url)
                if response.status_code == 200 and b'id="event-' in response.content:
                    return time.perf_counter() - started
            except Exception:  # the database busy with the import: ask again
                pass
            if proc.poll() not in (None, 0):
                raise RuntimeError(f"import of {folder} failed ({proc.returncode})")
            time.sleep(0.1)
    finally:
        proc.wait()


def check_import(size: Size, conversation_id: str) -> dict[str, Any]:
    """The imported figures, and a warning when they differ from what was generated."""
    from eventviewer.models import Conversation

    conversation = Conversation.objects.get(conversation_id=conversation_id)
    expected = layout(size.events, active_path=size.active_path)
    got = (conversation.event_count, conversation.head_path_length, conversation.leaf_count)
    want = (size.events, expected.main, len(expected.branches) + 1)
    if got != want:
        print(
            f"warning: {size.label}: imported (events, HEAD depth, leaves) = {got}, generated {want}", file=sys.stderr
        )
    return {"event_count": got[0], "head_path_length": got[1], "leaf_count": got[2]}


def bench_pages(size: Size, conversation_id: str, head_depth: int, targeted: bool, report: Report) -> None:
    from django.test import Client

    client = Client()
    depth = min(DEEP_DEPTH, head_depth * 9 // 10)
    leaf = event_at_depth(conversation_id, depth)
    base = f"/c/{conversation_id}/"
    # The partials htmx asks for when a reader switches branch (the workspace: branch
    # bar, turns, problems, diagram, branch list) and loads earlier turns.
    switch = {**HTMX, "HTTP_HX_TARGET": "workspace"}
    earlier = {**HTMX, "HTTP_HX_TARGET": "more"}
    first_shown = first_turn_shown(client, f"{base}?leaf={leaf}")
    pages = [
        (f"page HEAD {size.label}", base, TARGET_PAGE_MS, True, None),
        (f"page ?leaf= depth {depth} {size.label}", f"{base}?leaf={leaf}", TARGET_PAGE_MS, True, None),
        (f"partial: switch to HEAD {size.label}", base, TARGET_PARTIAL_MS, False, switch),
        (f"partial: switch to depth {depth} {size.label}", f"{base}?leaf={leaf}", TARGET_PARTIAL_MS, False, switch),
        (
            f"partial: earlier turns at depth {depth} {size.label}",
            f"{base}?leaf={leaf}&before={first_shown}",
            TARGET_PARTIAL_MS,
            False,
            earlier,
        ),
        (f"path API {size.label}", f"/api/conversations/{conversation_id}/path/", TARGET_API_MS, False, None),
        (f"diagram {size.label}", f"{base}diagram.svg", TARGET_DIAGRAM_MS, False, None),
        *(
            (f"search {q} {size.label}", f"{base}search/?{urlencode({'q': q})}", TARGET_SEARCH_MS, False, None)
            for q in SEARCHES
        ),
    ]
    for measure, url, target_ms, is_html, headers in pages:
        result = measure_url(client, url, headers)
        report.requests.append({"measure": measure, "label": size.label, **result})
        ok = result["status"] == 200
        failed = f"HTTP {result['status']}" + (f" ({result['error'].split(':')[0]})" if result["error"] else "")
        time_target = f"<= {target_ms} ms" if targeted else ""
        if ok:
            figure = (
                f"{result['median_ms']:.0f} ms (cold {result['cold_ms']:.0f} ms, CPU {result['median_cpu_ms']:.0f} ms)"
            )
            met = result["median_ms"] <= target_ms if targeted else None
            report.add(measure, figure, time_target, met, result["median_ms"])
        else:
            report.add(measure, failed, time_target, False if targeted else None)
        if is_html:
            size_target = f"< {TARGET_PAGE_BYTES / 1e6:.0f} MB" if targeted else ""
            met = ok and result["bytes"] < TARGET_PAGE_BYTES if targeted else None
            figure = f"{result['bytes'] / 1e6:.2f} MB" if ok else failed
            report.add(f"{measure} size", figure, size_target, met, result["bytes"])


def first_turn_shown(client: Any, url: str) -> str:
    """The event id the page's "Load earlier turns" link starts before."""
    import re

    html = client.get(url).content.decode()
    found = re.search(r'before=([^"&]+)', html)
    return found.group(1) if found else ""


def print_table(rows: list[Row]) -> None:
    header = ("measure", "figure", "target", "met")
    cells = [(r.measure, r.figure, r.target, "" if r.met is None else ("yes" if r.met else "no")) for r in rows]
    widths = [max(len(str(line[i])) for line in [header, *cells]) for i in range(4)]
    for line in [header, tuple("-" * w for w in widths), *cells]:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="1k and 5k events (1k path) instead of up to 100k")
    parser.add_argument("--database-url", help="use this database instead of a throwaway SQLite file")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (conversations, database)")
    parser.add_argument("--hostile", action="store_true", help="the hostile inputs of issue 10 (bench/hostile.py)")
    parser.add_argument(
        "--evaluation",
        action="store_true",
        help="an evaluation output of 500 instances x 100 events against the same as folders, and its run page",
    )
    parser.add_argument(
        "--runs",
        nargs="?",
        const="10x1000x100",
        metavar="RxIxE",
        help="R evaluation runs of I instances x E events (default 10x1000x100), pages, export (bench/runs.py)",
    )
    parser.add_argument(
        "--only", default="", help="with --hostile: only inputs whose label holds one of these texts (comma-separated)"
    )
    parser.add_argument(
        "--search-corpus",
        type=int,
        metavar="N",
        help="only the search corpus: N conversations of 1,000 events, searched from the list (bench/search.py)",
    )
    args = parser.parse_args()
    if args.hostile:
        return run_hostile(args)
    if args.search_corpus:
        return run_search_corpus(args)

    workdir = Path(tempfile.mkdtemp(prefix="eventviewer-bench-"))
    database_url = args.database_url or f"sqlite:///{workdir}/bench.sqlite3"
    sizes = QUICK if args.quick else FULL
    report = Report()
    try:
        setup_django(database_url, migrate=True)
        # A view that fails shows in the table (and its error in results.json), not as a traceback.
        logging.getLogger("django.request").setLevel(logging.CRITICAL)
        if args.runs:
            from runs import bench_runs

            runs, instances, events = (int(n) for n in args.runs.split("x"))
            bench_runs(workdir / "runs", database_url, report, runs, instances, events)
        if args.evaluation:
            from evaluation import bench_evaluation

            print("... evaluation run", file=sys.stderr)
            bench_evaluation(workdir / "evaluation", database_url, args.quick, report)
        for size in [] if args.evaluation or args.runs else sizes:
            print(f"... {size.label}", file=sys.stderr)
            bench_size(size, workdir / "conversations", database_url, size == sizes[-1], report)
        machine = {**machine_info(), "database": database_version()}
    finally:
        if args.keep:
            print(f"kept {workdir}", file=sys.stderr)
        else:
            if args.database_url and report.conversations:  # leave the given database as it was
                forget([c["conversation_id"] for c in report.conversations])
            shutil.rmtree(workdir, ignore_errors=True)

    met = sum(1 for r in report.rows if r.met)
    total = sum(1 for r in report.rows if r.met is not None)
    write_json(
        RUNS_RESULTS if args.runs else EVALUATION_RESULTS if args.evaluation else RESULTS,
        {
            "mode": "quick" if args.quick else "full",
            "machine": machine,
            "conversations": report.conversations,
            "requests": report.requests,
            "rows": [asdict(r) for r in report.rows],
            "targets": {"met": met, "total": total},
        },
    )
    print(f"machine: {machine['cpu_count']} CPUs, Python {machine['python']}, {machine['database']}, {machine['date']}")
    print_table(report.rows)
    print(f"targets: {met}/{total} met")
    return 0 if met == total else 1


def write_and_print(report: Report, path: Path, machine: dict[str, Any]) -> int:
    """A partial run's rows (--hostile, --search-corpus) to ``path`` and the terminal."""
    met = sum(1 for r in report.rows if r.met)
    total = sum(1 for r in report.rows if r.met is not None)
    write_json(
        path, {"machine": machine, "rows": [asdict(r) for r in report.rows], "targets": {"met": met, "total": total}}
    )
    print(f"machine: {machine['cpu_count']} CPUs, Python {machine['python']}, {machine['database']}, {machine['date']}")
    print_table(report.rows)
    print(f"targets: {met}/{total} met")
    return 0


def run_hostile(args: argparse.Namespace) -> int:
    import hostile
    import sync_hostile

    workdir = Path(tempfile.mkdtemp(prefix="eventviewer-bench-"))
    database_url = args.database_url or f"sqlite:///{workdir}/bench.sqlite3"
    report = Report()
    try:
        setup_django(database_url, migrate=True)
        logging.getLogger("django.request").setLevel(logging.CRITICAL)
        from django.test import Client

        client = Client()

        def measure(url: str) -> dict[str, Any]:
            seconds, status, size, error = timed_get(client, url)
            report.requests.append({"url": url, "status": status, "bytes": size, "cold_ms": seconds * 1000})
            return {"url": url, "status": status, "error": error, "cold_ms": seconds * 1000, "bytes": size}

        hostile.run(report, database_url, measure, args.only)
        sync_hostile.run(report, database_url, args.only)
        machine = {**machine_info(), "database": database_version()}
    finally:
        if args.database_url:
            from eventviewer.models import Conversation

            for conversation in Conversation.objects.filter(conversation_id__in=hostile.conversation_ids()):
                conversation.delete_in_batches()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return write_and_print(report, BENCH / "hostile-results.json", machine)


def run_search_corpus(args: argparse.Namespace) -> int:
    import search

    workdir = Path(tempfile.mkdtemp(prefix="eventviewer-bench-"))
    database_url = args.database_url or f"sqlite:///{workdir}/bench.sqlite3"
    report = Report()
    ids: list[str] = []
    try:
        setup_django(database_url, migrate=True)
        logging.getLogger("django.request").setLevel(logging.CRITICAL)
        from django.db import connection

        ids = search.run(report, workdir, args.search_corpus, measure_url, connection.vendor)
        machine = {**machine_info(), "database": database_version()}
    finally:
        if args.database_url and ids and not args.keep:
            from eventviewer.models import Conversation

            for conversation in Conversation.objects.filter(conversation_id__in=ids):
                conversation.delete_in_batches()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            print(f"kept {workdir}", file=sys.stderr)
    return write_and_print(report, BENCH / "search-results.json", machine)


if __name__ == "__main__":
    sys.exit(main())
