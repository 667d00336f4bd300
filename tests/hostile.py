"""A conversation built from a real SDK fixture with a hostile payload in every field."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import fixture_folder

MARK = "window.__pwned=1"
PAYLOADS = [
    f"<script>{MARK}</script>",
    f'"><img src=x onerror="{MARK}">',
    f'<svg onload="{MARK}"><script>{MARK}</script></svg>',
    f'[click me](javascript:{MARK}) and <a href="javascript:{MARK}">link</a>',
    f"</text></a><script>{MARK}</script>",
    f']; n9 [label="pwn" URL="javascript:{MARK}"]; x -> y [',
    f'<iframe srcdoc="<script>{MARK}</script>"></iframe>',
    "{{ request }} {% debug %}",
]
HOSTILE_ID = f'ev-"><img src=x onerror="{MARK}">'


def _payload(i: int) -> str:
    return PAYLOADS[i % len(PAYLOADS)] + f" #{i}"


def hostile_events() -> list[dict]:
    """parallel-with-invalid-call (batches, an invalid call, errors) with every string a payload."""
    folder = fixture_folder("parallel-with-invalid-call")
    events = [json.loads(p.read_text()) for p in sorted((folder / "events").glob("event-*.json"))]
    counter = iter(range(10_000))
    renamed = {events[3]["id"]: HOSTILE_ID}

    def poison(value, key=""):
        if isinstance(value, dict):
            return {k: poison(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [poison(v, key) for v in value]
        if isinstance(value, str):
            if value in renamed:
                return renamed[value]
            if key in (
                "id",
                "parent_id",
                "action_id",
                "kind",
                "timestamp",
                "source",
                "type",
                "tool_call_id",
                "role",
                "llm_response_id",
                "cache_prompt",
            ):
                return value
            if key == "arguments":
                return json.dumps({"command": _payload(next(counter))})
            return _payload(next(counter))
        return value

    hostile = [poison(e) for e in events]
    # The identity triple must still pair up, so every tool gets the same hostile name.
    for original, event in zip(events, hostile, strict=True):
        if "tool_name" in original:
            event["tool_name"] = PAYLOADS[1]
            if isinstance(event.get("tool_call"), dict):
                event["tool_call"]["name"] = PAYLOADS[1]
    hostile.append(
        {
            "id": "weird-kind",
            "parent_id": hostile[-1]["id"],
            "kind": f"<script>{MARK}</script>",
            "source": "environment",
            "timestamp": "2026-01-01T00:00:00",
            "detail": PAYLOADS[2],
        }
    )
    return hostile


def write_hostile(root: Path) -> Path:
    target = root / "hostile.jsonl"
    target.write_text("\n".join(json.dumps(e) for e in hostile_events()) + "\n")
    return target
