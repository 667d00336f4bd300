"""One cost case of ``hostile_costs.py`` in this fresh process; prints one JSON line with
its figures and this process's peak memory (VmHWM)."""

from __future__ import annotations

import json
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import orjson
from common import setup_django


def memory(field: str) -> float:
    status = Path("/proc/self/status").read_text()
    return int(re.search(rf"{field}:\s+(\d+)", status).group(1)) / 1024


def imported(path: str) -> tuple[list[str], float, bool, str]:
    from eventviewer.imports.importer import ImportFailed, import_paths

    started = time.perf_counter()
    try:
        results = import_paths([(Path(path), path)])
    except ImportFailed as e:
        return [], time.perf_counter() - started, False, e.problems[0]
    return [r.conversation.conversation_id for r in results], time.perf_counter() - started, True, ""


def export(path: str) -> dict[str, Any]:
    from django.test import Client

    (cid,), _, _, _ = imported(path)
    client = Client()
    before = memory("VmRSS")
    # What the import left in the peak is not the export's: the growth is measured against
    # the resident size before it, the peak read after (reset first, where Linux allows).
    Path("/proc/self/clear_refs").write_text("5")
    started = time.perf_counter()
    response = client.get(f"/c/{cid}/export/", {"format": "messages"})
    written = sum(len(chunk) for chunk in response.streaming_content) if response.streaming else len(response.content)
    return {
        "conversation_ids": [cid],
        "streaming": response.streaming,
        "seconds": time.perf_counter() - started,
        "mb": written / 1e6,
        "growth_mb": memory("VmHWM") - before,
    }


def timed(client: Any, url: str) -> tuple[float, int]:
    started = time.perf_counter()
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return time.perf_counter() - started, len(response.content)


def run_pages(path: str) -> dict[str, Any]:
    from django.contrib.auth.models import User
    from django.test import Client

    from eventviewer.models import Run

    ids, seconds, _, _ = imported(path)
    run = Run.objects.get(slug="run")
    client = Client()
    client.force_login(User.objects.create_superuser("bench-admin", password="bench-password-long"))
    timed(client, run.get_absolute_url())  # the first request of the process sets things up
    return {
        "conversation_ids": ids,
        "import_seconds": seconds,
        "run page": timed(client, f"{run.get_absolute_url()}?sort=tokens&dir=desc"),
        "admin run page": timed(client, f"/admin/eventviewer/run/{run.pk}/change/"),
        "admin instance list": timed(client, f"/admin/eventviewer/instance/?run__id__exact={run.pk}"),
    }


def refuse(path: str) -> dict[str, Any]:
    _, seconds, done, line = imported(path)
    return {"imported": done, "seconds": seconds, "line": line}


def app_import(path: str) -> dict[str, Any]:
    ids, seconds, _, line = imported(path)
    return {"conversation_ids": ids, "import_seconds": seconds, "import_mb": memory("VmHWM"), "line": line}


def app_watch(path: str, looks: int) -> dict[str, Any]:
    from eventviewer.imports.watch import FolderWatch
    from eventviewer.models import Conversation

    said: list[str] = []
    watch = FolderWatch(Path(path), said.append)
    watch.look()  # a watch started on a folder already imported: it reads it once
    conversation = Conversation.objects.get()
    folder = Path(path) / "v1_conversations" / conversation.conversation_id
    parent = conversation.head.event_id
    cpu: list[float] = []
    for n in range(looks):
        event_id = f"{n + 1:032x}"
        event = {
            "id": event_id,
            "kind": "MessageEvent",
            "source": "user",
            "timestamp": f"2099-01-01T00:00:{n:02d}",
            "parent_id": parent,
            "llm_message": {"role": "user", "content": [{"type": "text", "text": f"one more {n}"}]},
        }
        (folder / f"{event_id}.json").write_bytes(orjson.dumps(event, option=orjson.OPT_INDENT_2))
        parent = event_id
        started = time.process_time()
        (result,) = watch.look()
        cpu.append(time.process_time() - started)
        assert result.added == 1, result
    return {"look_cpu": statistics.median(cpu), "watch_mb": memory("VmHWM"), "said": said}


def main() -> None:
    setup_django(os.environ["DATABASE_URL"])
    case, *args = sys.argv[1:]
    cases = {
        "export": lambda: export(args[0]),
        "run": lambda: run_pages(args[0]),
        "refuse": lambda: refuse(args[0]),
        "app-import": lambda: app_import(args[0]),
        "app-watch": lambda: app_watch(args[0], int(args[1])),
    }
    print(json.dumps(cases[case]()))


if __name__ == "__main__":
    main()
