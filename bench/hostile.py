"""The hostile inputs of issue 10, each imported (or refused) in a fresh process, then
every page of what imported requested once. Run by ``bench/run.py --hostile``.

Targets: each import or refusal within 500 MB peak and 10 s; each page of what
imported under 1 s and 2 MB."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hostile_costs
from common import BENCH, PROJECT, django_environment

TARGET_MB = 500
TARGET_S = 10.0
TARGET_PAGE_S = 1.0
TARGET_PAGE_BYTES = 2_000_000
MILLION = 1_000_000


def _event(i: int, parent: str | None, **fields: Any) -> dict[str, Any]:
    event = {"id": f"e{i}", "kind": "MessageEvent", "source": "user", "timestamp": "2026-01-01T00:00:00"}
    if parent is not None:
        event["parent_id"] = parent
    event.update(fields)
    return event


def _message(i: int, parent: str | None, text: str = "hi") -> dict[str, Any]:
    return _event(i, parent, llm_message={"role": "user", "content": [{"type": "text", "text": text}]})


def _lines(count: int) -> bytes:
    return b"".join(json.dumps(_message(i, f"e{i - 1}" if i else None)).encode() + b"\n" for i in range(count))


def three_huge_states(root: Path) -> Path:
    path = root / "states.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for n in range(3):
            cid = f"{n + 1:032x}"
            with z.open(f"{cid}/base_state.json", "w", force_zip64=True) as f:
                f.write(b'{"id": "' + cid.encode() + b'", "padding": "')
                block = b"x" * (1024 * 1024)
                for _ in range(400):
                    f.write(block)
                f.write(b'"}')
            z.writestr(f"{cid}/events/event-00000-e0.json", json.dumps(_message(0, None)))
    return path


def million_array_zip(root: Path) -> Path:
    path = root / "array.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open("events.json", "w", force_zip64=True) as f:
            f.write(b"[")
            for i in range(MILLION):
                f.write((b"," if i else b"") + json.dumps(_message(i, f"e{i - 1}" if i else None)).encode())
            f.write(b"]")
    return path


def million_jsonl_zip(root: Path) -> Path:
    path = root / "lines.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open("events.jsonl", "w", force_zip64=True) as f:
            for start in range(0, MILLION, 100_000):
                f.write(
                    b"".join(
                        json.dumps(_message(i, f"e{i - 1}" if i else None)).encode() + b"\n"
                        for i in range(start, start + 100_000)
                    )
                )
    return path


def one_event(root: Path, name: str, event: dict[str, Any]) -> Path:
    path = root / f"{name}.jsonl"
    path.write_bytes(json.dumps(_message(0, None)).encode() + b"\n" + json.dumps(event).encode() + b"\n")
    return path


def million_tools(root: Path) -> Path:
    tools = [{"name": f"t{i}"} for i in range(MILLION)]
    return one_event(root, "tools", _event(1, "e0", kind="SystemPromptEvent", source="agent", tools=tools))


def million_thoughts(root: Path) -> Path:
    thought = [{"type": "text", "text": "x"}] * MILLION
    return one_event(
        root,
        "thoughts",
        _event(
            1,
            "e0",
            kind="ActionEvent",
            source="agent",
            thought=thought,
            tool_name="t",
            tool_call_id="c",
            llm_response_id="r",
            action={"kind": "TerminalAction", "command": "ls"},
        ),
    )


def million_keys(root: Path) -> Path:
    return one_event(root, "keys", _event(1, "e0", kind="SomethingNew", **{f"k{i}": i for i in range(MILLION)}))


def pathological_markdown(root: Path) -> Path:
    text = ("[a](" * 100_000 + "*_" * 200_000 + "[" * 500_000 + "|a" * 250_000)[:1_800_000]
    return one_event(root, "markdown", _message(1, "e0", text))


def million_deep(root: Path) -> Path:
    path = root / "deep.jsonl"
    with open(path, "wb") as f:
        for start in range(0, MILLION, 100_000):
            f.write(
                b"".join(
                    json.dumps(_message(i, f"e{i - 1}" if i else None)).encode() + b"\n"
                    for i in range(start, start + 100_000)
                )
            )
    return path


RAISED_EVENT_CAP = {"EVENTVIEWER_MAX_EVENT_BYTES": str(64 * 1024 * 1024)}
INPUTS: list[tuple[str, Callable[[Path], Path], dict[str, str]]] = [
    ("zip of three 400 MiB base_state.json", three_huge_states, {}),
    ("1M-event JSON array in a zip", million_array_zip, {}),
    ("1M-event JSONL in a zip", million_jsonl_zip, {}),
    ("SystemPromptEvent with 1M tools", million_tools, {}),
    ("ActionEvent with 1M thought items", million_thoughts, {}),
    ("unknown kind with 1M keys", million_keys, {}),
    # The same three over the default event cap (16 MiB): the cards of huge events.
    ("SystemPromptEvent with 1M tools, EVENTVIEWER_MAX_EVENT_BYTES raised", million_tools, RAISED_EVENT_CAP),
    ("ActionEvent with 1M thought items, EVENTVIEWER_MAX_EVENT_BYTES raised", million_thoughts, RAISED_EVENT_CAP),
    ("unknown kind with 1M keys, EVENTVIEWER_MAX_EVENT_BYTES raised", million_keys, RAISED_EVENT_CAP),
    ("1.8 MB of pathological markdown", pathological_markdown, {}),
    ("a branch 1M events deep", million_deep, {}),
    ("a branch 1M events deep, EVENTVIEWER_MAX_EVENTS raised", million_deep, {"EVENTVIEWER_MAX_EVENTS": "1000000"}),
]


def import_child(path: Path, database_url: str, extra: dict[str, str]) -> dict[str, Any]:
    env = dict(os.environ, **django_environment(database_url), **extra)
    done = subprocess.run(
        [sys.executable, str(BENCH / "hostile_child.py"), str(path)],
        env=env,
        cwd=PROJECT,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        return {
            "imported": False,
            "line": done.stderr.strip().splitlines()[-1:],
            "seconds": 0,
            "peak_mb": 0,
            "conversation_ids": [],
            "crashed": True,
        }
    return json.loads(done.stdout.strip().splitlines()[-1])


def pages(conversation_id: str, measure: Callable[[str], dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    from eventviewer.models import Conversation

    conversation = Conversation.objects.get(conversation_id=conversation_id)
    base = conversation.get_absolute_url()
    urls = [
        ("page", base),
        ("diagram", f"{base}diagram.svg"),
        ("path API", f"/api/conversations/{conversation_id}/path/"),
    ]
    last = conversation.events.order_by("-seq").values_list("event_id", "depth").first()
    if last is not None:
        urls.append(("event page", f"{base}events/{last[0]}/"))
        if conversation.head_path_length > 1000:
            deep = (
                conversation.events.filter(depth=conversation.head_path_length * 9 // 10)
                .values_list("event_id", flat=True)
                .first()
            )
            urls.append(("page ?leaf= 90% deep", f"{base}?leaf={deep}"))
    return [(label, measure(url)) for label, url in urls]


IMPORTED: list[str] = []


def conversation_ids() -> list[str]:
    """What this run imported (for cleaning a given database up)."""
    return IMPORTED


def run(report: Any, database_url: str, measure: Callable[[str], dict[str, Any]], only: str = "") -> None:
    """Each hostile input (those whose label holds one of ``only``'s comma-separated texts, when given)."""
    with tempfile.TemporaryDirectory(prefix="eventviewer-hostile-") as tmp:
        root = Path(tmp)
        if not only or "costs" in only.split(","):
            import costs

            costs.run(report, database_url, measure, root, IMPORTED)
        IMPORTED.extend(hostile_costs.run(report, database_url, root, only))
        made: dict[Callable, Path] = {}
        for label, make, extra in INPUTS:
            if only and not any(text in label for text in only.split(",")):
                continue
            print(f"... {label}", file=sys.stderr)
            if make not in made:
                made[make] = make(root)
            path = made[make]
            result = import_child(path, database_url, extra)
            outcome = "imported" if result["imported"] else f"refused: {str(result['line'])[-90:]}"
            met = result["peak_mb"] < TARGET_MB and result["seconds"] < TARGET_S and not result.get("crashed")
            report.add(
                f"{label} ({path.stat().st_size / 1e6:.1f} MB file)",
                f"{outcome}; {result['seconds']:.1f} s, {result['peak_mb']:.0f} MB peak",
                f"< {TARGET_S:.0f} s, < {TARGET_MB} MB",
                met,
                result["seconds"],
            )
            IMPORTED.extend(result["conversation_ids"] if result["imported"] else [])
            for cid in result["conversation_ids"] if result["imported"] else []:
                for page, got in pages(cid, measure):
                    ok = got["status"] == 200
                    seconds = got["cold_ms"] / 1000
                    figure = f"{seconds:.2f} s, {got['bytes'] / 1e6:.2f} MB" if ok else f"HTTP {got['status']}"
                    met = ok and seconds < TARGET_PAGE_S and got["bytes"] < TARGET_PAGE_BYTES
                    report.add(f"  {page}", figure, f"< {TARGET_PAGE_S:.0f} s, < 2 MB", met, seconds)
