"""The cost items of issue 22 (4-7), each in a fresh process (``hostile_cost_child.py``,
which reports its own peak memory): a messages export of a 75 MB branch of user messages,
the run page and the admin's of a 10,000-instance run, the same run refused for a repeated
instance on its last row, and 40,000 events in the app server's layout imported, then
watched while an agent adds a file a second. Run by ``bench/run.py --hostile``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
from common import BENCH, PROJECT, django_environment
from generate import generate

EXPORT_MESSAGES, EXPORT_TEXT = 15_000, 5_000  # 75 MB of user messages on one branch
EXPORT_GROWTH_MB = 30  # it grew by 240 MB
RUN_ROWS = 10_000
PAGE_S, PAGE_BYTES = 1.0, 2_000_000  # the hostile bench's page target
REFUSAL_S = 10.0  # it took 124 s
APP_EVENTS = 40_000
APP_IMPORT_MB = 200  # 553 MB; the same events as an SDK folder: 117 MB
WATCH_LOOKS = 10
WATCH_CPU_S = 0.5  # a look with a new file (it spent 35 CPU-seconds in 52 s)
WATCH_MB = 300  # it reached 850 MB


def child(*args: str, database_url: str) -> dict[str, Any]:
    env = dict(os.environ, **django_environment(database_url))
    done = subprocess.run(
        [sys.executable, str(BENCH / "hostile_cost_child.py"), *args],
        env=env,
        cwd=PROJECT,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["crashed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _message(i: int, text: str) -> dict[str, Any]:
    return {
        "id": f"m{i}",
        "kind": "MessageEvent",
        "source": "user",
        "timestamp": f"2026-01-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}",
        **({"parent_id": f"m{i - 1}"} if i else {}),
        "llm_message": {"role": "user", "content": [{"type": "text", "text": text}]},
    }


def user_messages(root: Path) -> Path:
    path = root / "user-messages.jsonl"
    word = "words of a message " * (EXPORT_TEXT // 19)
    with path.open("wb") as out:
        for i in range(EXPORT_MESSAGES):
            out.write(orjson.dumps(_message(i, f"{i} {word}")) + b"\n")
    return path


def evaluation_run(root: Path, repeat_last: bool) -> Path:
    path = root / ("repeated" if repeat_last else "run") / "output.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        for i in range(RUN_ROWS):
            row = {
                "instance_id": f"bench__run-{i:05d}",
                "test_result": {"resolved": i % 3 == 0},
                "metadata": {"llm": {"model": "openai/bench-model"}},
                "history": [_message(0, f"Solve instance {i}.")],
            }
            out.write(orjson.dumps(row) + b"\n")
        if repeat_last:
            out.write(orjson.dumps(dict(row, instance_id="bench__run-00007")) + b"\n")
    return path


def app_server_layout(root: Path) -> Path:
    """A generated conversation's events written as the app server writes them: a file per
    event named by its id's hex under v1_conversations/<conversation-hex>/."""
    sdk = generate(root / "sdk", APP_EVENTS, seed=22)
    folder = root / "home" / "v1_conversations" / sdk.name
    folder.mkdir(parents=True)
    for name in os.listdir(sdk / "events"):
        if name.startswith("event-"):
            event = orjson.loads((sdk / "events" / name).read_bytes())
            text = orjson.dumps(event, option=orjson.OPT_INDENT_2)
            (folder / f"{event['id'].replace('-', '')}.json").write_bytes(text)
    return root / "home"


def run(report: Any, database_url: str, root: Path, only: str = "") -> list[str]:
    """The four cost rows; the conversation ids imported (for cleaning a given database up)."""
    imported: list[str] = []

    def wanted(label: str) -> bool:
        return not only or any(text in label for text in only.split(","))

    label = "messages export, 75 MB branch of user messages"
    if wanted(label):
        print(f"... {label}", file=sys.stderr)
        got = child("export", str(user_messages(root)), database_url=database_url)
        imported += got.get("conversation_ids", [])
        ok = "error" not in got and got["streaming"] and got["growth_mb"] < EXPORT_GROWTH_MB
        figure = got.get("error") or f"+{got['growth_mb']:.0f} MB, {got['seconds']:.1f} s, {got['mb']:.0f} MB written"
        report.add(label, figure, f"streams, < +{EXPORT_GROWTH_MB} MB", ok, got.get("growth_mb"))

    label = "run page, 10,000 instances"
    if wanted(label):
        print(f"... {label}", file=sys.stderr)
        got = child("run", str(evaluation_run(root, False)), database_url=database_url)
        imported += got.get("conversation_ids", [])
        for page in ("run page", "admin run page", "admin instance list"):
            if "error" in got:
                report.add(f"{label}: {page}", got["error"], "", False)
                continue
            seconds, size = got[page]
            ok = seconds < PAGE_S and size < PAGE_BYTES
            report.add(
                f"{label}: {page}",
                f"{seconds:.2f} s, {size / 1e6:.2f} MB",
                f"< {PAGE_S:.0f} s, < 2 MB",
                ok,
                seconds,
            )

    label = "10,000-row run, its last row repeating an instance"
    if wanted(label):
        print(f"... {label}", file=sys.stderr)
        got = child("refuse", str(evaluation_run(root, True)), database_url=database_url)
        ok = "error" not in got and not got["imported"] and got["seconds"] < REFUSAL_S
        figure = got.get("error") or f"refused in {got['seconds']:.1f} s: {got['line'][-70:]}"
        report.add(label, figure, f"refused < {REFUSAL_S:.0f} s, naming row and id", ok, got.get("seconds"))

    label = "app server layout, 40,000 events"
    if wanted(label):
        print(f"... {label}", file=sys.stderr)
        home = app_server_layout(root)
        got = child("app-import", str(home), database_url=database_url)
        imported += got.get("conversation_ids", [])
        if "error" not in got:
            got.update(child("app-watch", str(home), str(WATCH_LOOKS), database_url=database_url))
        if "error" in got:
            report.add(label, got["error"], "", False)
        else:
            report.add(
                f"{label}: import",
                f"{got['import_seconds']:.1f} s, {got['import_mb']:.0f} MB peak",
                f"< {APP_IMPORT_MB} MB",
                got["import_mb"] < APP_IMPORT_MB,
                got["import_mb"],
            )
            report.add(
                f"{label}: watch, a new file a look ({WATCH_LOOKS} looks)",
                f"{got['look_cpu']:.2f} CPU-s a look (median), {got['watch_mb']:.0f} MB peak",
                f"< {WATCH_CPU_S} CPU-s, < {WATCH_MB} MB",
                got["look_cpu"] < WATCH_CPU_S and got["watch_mb"] < WATCH_MB,
                got["look_cpu"],
            )
    return imported
