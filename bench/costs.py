"""The cost inputs of issue 22 (items 1-3), each imported once, then the requests that
were slow or big on them timed (and Compare's memory measured in a fresh process).
Run by ``bench/run.py --hostile`` after the hostile inputs (``--only costs`` for these alone).

- a conversation of random words (149 MB of JSONL) and an unrelated 6-event one shared
  by a link: searches ``w*`` from the list, in the conversation, through the link, and
  16 x ``w*`` through the link; target <= 2 s each (a 400 naming the limit counts).
- two branches of 30 file_editor edits each of 19,999-line files: Files and Compare;
  target <= 2 s each.
- two branches of the random-words conversation compared: target < 300 MB peak.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from common import BENCH, PROJECT, django_environment, setup_django

TARGET_S = 2.0
TARGET_MB = 300
WORDS_MB = 149
FILE_LINES = 19_999
EDITS = 30


def _write(path: Path, events: Iterator[dict[str, Any]]) -> Path:
    with open(path, "w") as f:
        for event in events:
            f.write(json.dumps(event) + "\n")
    return path


def _message(n: int, parent: str | None, text: str, source: str = "user") -> dict[str, Any]:
    event: dict[str, Any] = {
        "id": f"e{n}",
        "kind": "MessageEvent",
        "source": source,
        "timestamp": f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}",
        "llm_message": {
            "role": source if source == "user" else "assistant",
            "content": [{"type": "text", "text": text}],
        },
    }
    if parent is not None:
        event["parent_id"] = parent
    return event


def random_words(root: Path, megabytes: int = WORDS_MB, seed: int = 22) -> Path:
    """Messages of random lowercase words (a vocabulary of millions), ``megabytes`` of
    JSONL: two branches that fork after the first event, half the events each."""
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    path = root / "words.jsonl"

    def events() -> Iterator[dict[str, Any]]:
        written, n = 0, 0
        parents = {0: None, 1: None}
        while written < megabytes * 1_000_000:
            words = ["".join(rng.choices(letters, k=rng.randint(3, 9))) for _ in range(300)]
            side = n % 2 if n else 0
            parent = parents[side] if n else None
            event = _message(n, parent, " ".join(words), "user" if n % 4 < 2 else "agent")
            if n == 0:
                parents = {0: "e0", 1: "e0"}
            else:
                parents[side] = f"e{n}"
            written += len(json.dumps(event)) + 1
            n += 1
            yield event

    return _write(path, events())


def small(root: Path) -> Path:
    return _write(root / "small.jsonl", (_message(n, f"e{n - 1}" if n else None, f"hello world {n}") for n in range(6)))


def big_edits(root: Path, lines: int = FILE_LINES, edits: int = EDITS, seed: int = 23) -> Path:
    """Two branches after one message, each ``edits`` file_editor edits of a ``lines``-line
    file whose lines repeat (few distinct lines: difflib's hard case)."""
    rng = random.Random(seed)
    path = root / "edits.jsonl"

    def events() -> Iterator[dict[str, Any]]:
        yield _message(0, None, "edit the big file")
        n = 1
        for branch in range(2):
            parent = "e0"
            content = [f"value = {rng.randrange(300)}" for _ in range(lines)]
            for edit in range(edits):
                new = list(content)
                for _ in range(20):
                    new[rng.randrange(lines)] = f"changed {branch} {edit} {rng.randrange(10**6)}"
                old_text, new_text = "\n".join(content) + "\n", "\n".join(new) + "\n"
                call = f"call-{branch}-{edit}"
                action = {
                    "id": f"e{n}",
                    "kind": "ActionEvent",
                    "source": "agent",
                    "timestamp": "2026-01-01T00:00:01",
                    "parent_id": parent,
                    "thought": [{"type": "text", "text": "edit"}],
                    "tool_name": "file_editor",
                    "tool_call_id": call,
                    "llm_response_id": f"r-{branch}-{edit}",
                    "action": {"kind": "FileEditorAction", "command": "str_replace", "path": "/w/big.py"},
                }
                result = {
                    "id": f"e{n + 1}",
                    "kind": "ObservationEvent",
                    "source": "environment",
                    "timestamp": "2026-01-01T00:00:02",
                    "parent_id": f"e{n}",
                    "tool_name": "file_editor",
                    "tool_call_id": call,
                    "action_id": f"e{n}",
                    "observation": {
                        "kind": "FileEditorObservation",
                        "command": "str_replace",
                        "path": "/w/big.py",
                        "prev_exist": True,
                        "old_content": old_text,
                        "new_content": new_text,
                        "content": [{"type": "text", "text": "edited"}],
                    },
                }
                yield action
                yield result
                parent = f"e{n + 1}"
                n += 2
                content = new

    return _write(path, events())


def _leaves(conversation_id: str) -> list[str]:
    from eventviewer.models import Conversation

    conversation = Conversation.objects.get(conversation_id=conversation_id)
    return sorted((n["id"] for n in conversation.skeleton["nodes"] if n["leaf"]), key=lambda i: int(i[1:]))


def _share(conversation_id: str) -> str:
    from eventviewer.models import Conversation, ShareLink

    return ShareLink.objects.create(conversation=Conversation.objects.get(conversation_id=conversation_id)).token


def peak_in_child(database_url: str, url: str) -> dict[str, Any]:
    """``url`` requested once in a fresh process: its status and the growth of its peak memory."""
    env = dict(os.environ, **django_environment(database_url))
    done = subprocess.run(
        [sys.executable, str(BENCH / "costs.py"), url], env=env, cwd=PROJECT, capture_output=True, text=True
    )
    if done.returncode != 0:
        return {"status": 500, "seconds": 0.0, "peak_mb": 0.0, "base_mb": 0.0, "error": done.stderr[-300:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(
    report: Any, database_url: str, measure: Callable[[str], dict[str, Any]], root: Path, imported: list[str]
) -> None:
    from hostile import import_child

    print("... costs: generating", file=sys.stderr)
    paths = {"words": random_words(root), "small": small(root), "edits": big_edits(root)}
    ids: dict[str, str] = {}
    for name, path in paths.items():
        print(f"... costs: importing {name} ({path.stat().st_size / 1e6:.0f} MB)", file=sys.stderr)
        result = import_child(path, database_url, {})
        if not result["imported"]:
            report.add(f"costs: import {name}", f"refused: {result['line']}", "imports", False)
            return
        (ids[name],) = result["conversation_ids"]
        imported.append(ids[name])

    def timed(label: str, url: str, target: str = f"<= {TARGET_S:.0f} s (a 400 naming the limit counts)") -> None:
        got = measure(url)
        seconds = got["cold_ms"] / 1000
        ok = got["status"] in (200, 400) and seconds <= TARGET_S
        report.add(label, f"HTTP {got['status']}, {seconds:.2f} s, {got['bytes'] / 1e6:.2f} MB", target, ok, seconds)

    words, small_id, edits = ids["words"], ids["small"], ids["edits"]
    token = _share(small_id)
    mb = paths["words"].stat().st_size / 1e6
    many = " ".join(["w*"] * 16)
    for label, url in [
        ("list ?q=w*", "/?" + urlencode({"q": "w*"})),
        ("list ?q=wor*", "/?" + urlencode({"q": "wor*"})),
        ("list ?q=abc* wor* xyz* qua*", "/?" + urlencode({"q": "abc* wor* xyz* qua*"})),
        ("its search ?q=wor*", f"/c/{words}/search/?" + urlencode({"q": "wor*"})),
        ("share link of a 6-event conversation ?q=w*", f"/s/{token}/search/?" + urlencode({"q": "w*"})),
        ("share link of a 6-event conversation ?q=16 x w*", f"/s/{token}/search/?" + urlencode({"q": many})),
        ("share link of a 6-event conversation ?q=wor*", f"/s/{token}/search/?" + urlencode({"q": "wor*"})),
        (
            "search API ?q=abc* wor* xyz* qua*",
            f"/api/conversations/{words}/search/?" + urlencode({"q": "abc* wor* xyz* qua*"}),
        ),
    ]:
        timed(f"22.1 search after {mb:.0f} MB of random words: {label}", url)
    first, second = _leaves(edits)
    size = paths["edits"].stat().st_size / 1e6
    for label, url in [
        ("Files, branch A", f"/c/{edits}/files/?leaf={first}"),
        ("Files, branch B", f"/c/{edits}/files/?leaf={second}"),
        ("Compare A with B", f"/c/{edits}/compare/?a={first}&b={second}"),
        ("the whole diff of the last edit (download)", f"/c/{edits}/files/diff/?event={first}&file=/w/big.py"),
    ]:
        timed(
            f"22.2 {EDITS} edits of {FILE_LINES:,}-line files per branch ({size:.0f} MB): {label}",
            url,
            f"<= {TARGET_S:.0f} s",
        )
    a, b = _leaves(words)
    got = peak_in_child(database_url, f"/c/{words}/compare/?a={a}&b={b}")
    grown = got["peak_mb"]
    report.add(
        f"22.3 Compare of the two branches of the {mb:.0f} MB conversation (fresh process)",
        f"HTTP {got['status']}, {got['seconds']:.1f} s, {grown:.0f} MB peak ({got['base_mb']:.0f} MB before it)",
        f"< {TARGET_MB} MB",
        got["status"] == 200 and grown < TARGET_MB,
        grown,
    )


def _child(url: str) -> None:
    setup_django(os.environ["DATABASE_URL"])
    import time

    from django.test import Client

    def vm(field: str) -> float:
        return int(re.search(field + r":\s+(\d+)", Path("/proc/self/status").read_text()).group(1)) / 1024

    client = Client()
    client.get("/")  # templates and URL resolvers loaded
    base = vm("VmRSS")
    started = time.perf_counter()
    response = client.get(url)
    seconds = time.perf_counter() - started
    print(json.dumps({"status": response.status_code, "seconds": seconds, "peak_mb": vm("VmHWM"), "base_mb": base}))


if __name__ == "__main__":
    _child(sys.argv[1])
