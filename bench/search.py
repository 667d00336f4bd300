"""Search benchmarks (``run.py --search-corpus N``): N conversations of 1,000 events each
(1,000 of them: 1,000,000 events), searched from the list page.

The conversations are copies of a few generated ones under new ids (their event files
hard-linked, so the corpus costs no disk): the words differ little between them, which
is the hard case for an index (a common word matches in every conversation).
"""

from __future__ import annotations

import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from generate import generate

EVENTS = 1_000  # per conversation
DISTINCT = 20  # conversations generated; the others are copies under new ids
TARGET_LIST_MS = 500
# Queries a reader types: a rare identifier, a phrase, an error word, a prefix, a common word.
LIST_QUERIES = ["module_17", '"unexpected status"', "ValueError", "handl*", "pytest"]
CONVERSATION_QUERIES = ["module_17", '"unexpected status"', "handl*", "pytest"]


def corpus(root: Path, count: int) -> list[Path]:
    """``count`` conversation folders under ``root`` (``DISTINCT`` generated, the rest
    hard-linked copies of them under new ids)."""
    bases = [generate(root / "bases", EVENTS, seed=seed) for seed in range(min(DISTINCT, count))]
    folders = []
    for n in range(count):
        base = bases[n % len(bases)]
        folder = root / "corpus" / uuid.UUID(int=n + 1, version=4).hex
        (folder / "events").mkdir(parents=True, exist_ok=True)
        for name in os.listdir(base / "events"):
            if not (folder / "events" / name).exists():
                os.link(base / "events" / name, folder / "events" / name)
        folders.append(folder)
    return folders


def run(report: Any, root: Path, count: int, measure_url: Any, vendor: str) -> list[str]:
    """Import the corpus, then time the list's search and a conversation's; returns the
    conversation ids imported (for clean-up)."""
    from django.test import Client

    from eventviewer.imports.importer import import_paths, tuned_for_bulk_import

    started = time.perf_counter()
    folders = corpus(root, count)
    report.add(f"search corpus: generate {count} x {EVENTS:,}", f"{time.perf_counter() - started:.1f} s")
    started = time.perf_counter()
    ids = []
    with tuned_for_bulk_import():
        for n, folder in enumerate(folders):
            (result,) = import_paths([(folder, str(folder))])
            ids.append(result.conversation.conversation_id)
            if n % 100 == 99:
                print(f"... imported {n + 1} conversations", file=sys.stderr)
    seconds = time.perf_counter() - started
    report.add(
        f"search corpus: import {count * EVENTS:,} events",
        f"{count * EVENTS / seconds:,.0f} events/s ({seconds:.0f} s)",
        value=seconds,
    )
    client = Client()
    targeted = vendor == "postgresql"
    for q in LIST_QUERIES:
        result = measure_url(client, "/?" + _query(q))
        _add(report, f"list search {q} ({count:,} conversations)", result, TARGET_LIST_MS if targeted else None)
    for q in CONVERSATION_QUERIES:
        result = measure_url(client, f"/api/conversations/{ids[0]}/search/?" + _query(q))
        _add(report, f"search API {q} (one of {count:,})", result, None)
    return ids


def _query(q: str) -> str:
    from urllib.parse import urlencode

    return urlencode({"q": q})


def _add(report: Any, measure: str, result: dict[str, Any], target_ms: int | None) -> None:
    if result["status"] != 200:
        report.add(measure, f"HTTP {result['status']} {result['error']}", "", False if target_ms else None)
        return
    figure = f"{result['median_ms']:.0f} ms (cold {result['cold_ms']:.0f} ms)"
    met = result["median_ms"] < target_ms if target_ms else None
    report.add(measure, figure, f"< {target_ms} ms" if target_ms else "", met, result["median_ms"])
