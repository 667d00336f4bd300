"""The runs bench (``run.py --runs``): RUNS evaluation outputs of INSTANCES instances x
EVENTS events over the same instance ids, imported, then the pages that read them: a run's
page, two runs compared, several runs compared, the list filtered by run, and the list's
summary export (first byte, and its peak memory). Also what signing failure patterns adds
to the import (the time ``Instance.sign`` takes over every instance, against the import's).

The histories are the generator's conversations (bench/generate.py), HISTORIES of them
reused round the instances, so the outputs are written quickly; every row is imported."""

from __future__ import annotations

import os
import time
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
from common import import_in_child
from generate import generate

RUNS, INSTANCES, EVENTS = 10, 1_000, 100
HISTORIES = 25
PAYLOAD_KB = (0.3, 2.0)
TARGET_MS = 300
TARGET_PATTERNS = 0.10  # signing patterns adds under 10% to the import


def histories(root: Path, events: int) -> list[list[dict[str, Any]]]:
    found = []
    for seed in range(HISTORIES):
        folder = generate(root / "folders", events, seed=seed, payload_kb=PAYLOAD_KB)
        names = sorted(n for n in os.listdir(folder / "events") if n.startswith("event-"))
        found.append([orjson.loads((folder / "events" / n).read_bytes()) for n in names])
    return found


def write_output(path: Path, run: int, instances: int, pool: list[list[dict[str, Any]]]) -> Path:
    """A run's output.jsonl: run ``run`` resolves a different, overlapping share of instances."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        for i in range(instances):
            row = {
                "instance_id": f"bench__instance-{i:04d}",
                "test_result": {"git_patch": "", "resolved": (i * 7 + run * 3) % 10 < 3 + run % 4},
                "instruction": "Solve the bench instance.",
                "metadata": {"llm": {"model": f"bench-model-{run}"}},
                "history": pool[(i + run) % len(pool)],
                "error": "RuntimeError: bench" if (i + run) % 50 == 7 else None,
            }
            out.write(orjson.dumps(row) + b"\n")
    return path


def bench_runs(root: Path, database_url: str, report: Any, runs: int, instances: int, events: int) -> None:
    from eventviewer.models import Instance, Run

    label = f"{runs} x {instances} x {events}"
    started = time.perf_counter()
    pool = histories(root, events)
    outputs = [write_output(root / f"run-{r}" / "output.jsonl", r, instances, pool) for r in range(runs)]
    report.add(f"generate {label}", f"{time.perf_counter() - started:.1f} s")
    seconds = 0.0
    for r, output in enumerate(outputs):
        print(f"... import run {r + 1} of {runs}", flush=True, file=__import__("sys").stderr)
        seconds += import_in_child(output, database_url).seconds
    total_events = runs * instances * events
    report.add(f"import {label}", f"{seconds:.1f} s, {total_events / seconds:,.0f} events/s", value=seconds)
    started = time.perf_counter()
    for instance in Instance.objects.filter(run__in=Run.objects.all()).iterator(chunk_size=500):
        instance.sign()
    signing = time.perf_counter() - started
    share = signing / max(seconds - signing, 1e-9)
    report.add(
        f"import without patterns {label}",
        f"{seconds - signing:.1f} s; patterns add {signing:.1f} s ({share:.1%})",
        f"< {TARGET_PATTERNS:.0%} added",
        share < TARGET_PATTERNS,
        share,
    )
    slugs = list(Run.objects.order_by("slug").values_list("slug", flat=True))
    a, b = slugs[0], slugs[1]
    pages = [
        (f"run page {instances}", f"/runs/{a}/"),
        (f"run compare 2 x {instances}", f"/runs/compare/?a={a}&b={b}"),
        (f"run compare 2 x {instances}, fixed only", f"/runs/compare/?a={a}&b={b}&change=fixed"),
        (f"runs compared {len(slugs)} x {instances}", "/runs/compare/?runs=" + ",".join(slugs)),
        ("list filtered by one run", f"/?run={a}"),
        ("list filtered by two runs, sorted by run", f"/?run={a}&run={b}&sort=run"),
    ]
    measure_pages(report, pages)
    measure_export(report, f"/export.jsonl?format=summary&run={a}&run={b}", 2 * instances)


def client() -> Any:
    from django.contrib.auth.models import User
    from django.test import Client

    user, _ = User.objects.get_or_create(username="bench-runs")
    found = Client()
    found.force_login(user)
    return found


def measure_pages(report: Any, pages: list[tuple[str, str]]) -> None:
    from run import measure_url

    browser = client()
    for measure, url in pages:
        result = measure_url(browser, url)
        report.requests.append({"measure": measure, **result})
        if result["status"] != 200:
            report.add(measure, f"HTTP {result['status']} {result['error']}", f"< {TARGET_MS} ms", False)
            continue
        report.add(
            measure,
            f"{result['median_ms']:.0f} ms (cold {result['cold_ms']:.0f} ms), {result['bytes'] / 1e6:.2f} MB",
            f"< {TARGET_MS} ms",
            result["median_ms"] < TARGET_MS,
            result["median_ms"],
        )


def measure_export(report: Any, url: str, lines: int) -> None:
    browser = client()
    tracemalloc.start()
    try:
        started = time.perf_counter()
        response = browser.get(url)
        chunks = iter(response.streaming_content)
        first = next(chunks)
        first_ms = (time.perf_counter() - started) * 1000
        count = first.count(b"\n") + sum(c.count(b"\n") for c in chunks)
        whole_ms = (time.perf_counter() - started) * 1000
        peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    report.add(
        f"summary export of {lines:,} lines: first byte",
        f"{first_ms:.0f} ms (whole {whole_ms:.0f} ms, {count:,} lines)",
        f"< {TARGET_MS} ms",
        first_ms < TARGET_MS and count == lines,
        first_ms,
    )
    report.add(f"summary export of {lines:,} lines: peak memory", f"{peak:.1f} MiB (tracemalloc)", value=peak)
