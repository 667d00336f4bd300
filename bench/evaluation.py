"""The evaluation-run bench (``run.py --evaluation``): an evaluation output of 500
instances x 100 events imports at the rate of the same events as 500 conversation
folders, and the run page of 500 instances renders in time.

The rows' histories are the generator's conversations (bench/generate.py), read back
from their folders, so both imports store the same events."""

from __future__ import annotations

import os
import statistics
from pathlib import Path
from typing import Any

import orjson
from common import forget, import_in_child
from generate import generate

INSTANCES = 500
EVENTS = 100
QUICK_INSTANCES = 50
PAYLOAD_KB = (0.5, 4.0)  # smaller events than the main bench: 50,000 of them are written twice
RUNS = 3
TARGET_RATE = 0.25  # the evaluation output's events/s within 25% of the folders'
TARGET_RUN_PAGE_MS = 300


def write_run(root: Path, instances: int) -> tuple[Path, Path]:
    """(a root of ``instances`` conversation folders, an output.jsonl of the same events)."""
    folders = root / "folders"
    output = root / "bench-run" / "output.jsonl"
    output.parent.mkdir(parents=True, exist_ok=True)
    with output.open("wb") as out:
        for i in range(instances):
            folder = generate(folders, EVENTS, seed=i, payload_kb=PAYLOAD_KB)
            names = sorted(n for n in os.listdir(folder / "events") if n.startswith("event-"))
            history = [orjson.loads((folder / "events" / n).read_bytes()) for n in names]
            state = orjson.loads((folder / "base_state.json").read_bytes())
            row = {
                "instance_id": f"bench__instance-{i:04d}",
                "attempt": 1,
                "test_result": {"git_patch": "", "resolved": i % 3 == 0},
                "instruction": "Solve the bench instance.",
                "metadata": {"llm": {"model": state["agent"]["llm"]["model"], "api_key": "sk-bench"}},
                "history": history,
                "metrics": (state.get("stats") or {}).get("usage_to_metrics", {}).get("agent"),
                "error": "RuntimeError: bench" if i % 50 == 7 else None,
            }
            out.write(orjson.dumps(row) + b"\n")
    return folders, output


def conversation_ids(folders: Path, output: Path) -> tuple[list[str], list[str]]:
    from eventviewer.imports.formats import evaluation_sources
    from eventviewer.imports.sources import DirectoryFiles

    derived = [
        s.conversation_id for s in evaluation_sources(DirectoryFiles(output.parent), output.name, str(output), None)
    ]
    return sorted(os.listdir(folders)), derived


def bench_evaluation(root: Path, database_url: str, quick: bool, report: Any) -> None:
    instances = QUICK_INSTANCES if quick else INSTANCES
    folders, output = write_run(root, instances)
    folder_ids, row_ids = conversation_ids(folders, output)
    events = instances * EVENTS
    os.sync()
    folder_runs, row_runs = [], []
    for _ in range(RUNS):  # alternated, so a machine that drifts moves both alike
        forget(folder_ids)
        folder_runs.append(import_in_child(folders, database_url))
        forget(row_ids)
        row_runs.append(import_in_child(output, database_url))
    folder_eps = events / statistics.median(r.seconds for r in folder_runs)
    row_eps = events / statistics.median(r.seconds for r in row_runs)
    label = f"{instances} x {EVENTS}"
    report.add(f"import folders {label}", f"{folder_eps:,.0f} events/s", value=folder_eps)
    ratio = row_eps / folder_eps
    report.add(
        f"import evaluation output {label}",
        f"{row_eps:,.0f} events/s ({ratio:.2f} of folders)",
        f">= {1 - TARGET_RATE:.2f} of folders",
        ratio >= 1 - TARGET_RATE,
        row_eps,
    )
    peak = max(r.peak_rss_mb for r in row_runs)
    report.add(f"peak RSS evaluation import {label}", f"{peak:.0f} MB", value=peak)
    forget(folder_ids)
    bench_run_page(report, label, quick)


def bench_run_page(report: Any, label: str, quick: bool) -> None:
    from django.test import Client
    from run import measure_url

    from eventviewer.models import Run

    client = Client()
    run = Run.objects.get()
    for measure, url in [
        (f"run page {label}", run.get_absolute_url()),
        (f"run page sorted by tokens {label}", run.get_absolute_url() + "?sort=tokens"),
        (f"run page failed only {label}", run.get_absolute_url() + "?outcome=failed"),
    ]:
        result = measure_url(client, url)
        report.requests.append({"measure": measure, **result})
        if result["status"] != 200:
            report.add(measure, f"HTTP {result['status']} {result['error']}", f"< {TARGET_RUN_PAGE_MS} ms", False)
            continue
        met = result["median_ms"] < TARGET_RUN_PAGE_MS if not quick else None
        report.add(
            measure,
            f"{result['median_ms']:.0f} ms (cold {result['cold_ms']:.0f} ms), {result['bytes'] / 1e6:.2f} MB",
            f"< {TARGET_RUN_PAGE_MS} ms" if not quick else "",
            met,
            result["median_ms"],
        )
