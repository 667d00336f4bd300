"""HookExecutionEvent: a configured hook ran (SessionStart, UserPromptSubmit, PreToolUse,
PostToolUse, Stop, SessionEnd). A hook that blocks or denies is a failure, like a
rejection. Hooks that guard an event share its parent, so in the tree they are dead-end
leaves beside it: side events, shown with that event rather than as branches."""

from __future__ import annotations

from typing import Any

from ..cards import Card, output, text_of
from .base import HOOK, HOOK_BLOCKED_FAILURE, Kind, register


def _title(data: dict[str, Any]) -> str:
    event_type = text_of(data.get("hook_event_type")) or "hook"
    tool = text_of(data.get("tool_name"))
    return f"{event_type} hook" + (f" on {tool}" if tool else "")


def summarize(data: dict[str, Any]) -> str:
    verdict = "blocked" if data.get("blocked") is True else "failed" if data.get("success") is False else "ran"
    reason = text_of(data.get("reason"))
    return f"{_title(data)} {verdict}" + (f": {reason}" if reason else "")


def failure(data: dict[str, Any]) -> str:
    return HOOK_BLOCKED_FAILURE if data.get("blocked") is True else ""


def card(data: dict[str, Any], full: bool) -> Card:
    blocked = data.get("blocked") is True
    failed = data.get("success") is False
    result = Card(kind=HOOK, label=_title(data), tool_name=text_of(data.get("tool_name")))
    result.title = "blocked" if blocked else ("failed" if failed else "allowed")
    result.tone = "error" if blocked else ("warn" if failed else "")
    result.folded = not (blocked or failed)
    result.command = text_of(data.get("hook_command"))
    if data.get("exit_code") is not None:
        result.exit_code = data.get("exit_code")
    result.error = text_of(data.get("reason")) if blocked else text_of(data.get("error"))
    if data.get("additional_context"):
        result.facts.append(("added context", text_of(data.get("additional_context"))))
    streams = [text_of(data.get(k)) for k in ("stdout", "stderr")]
    if any(streams):
        result.output = output("\n".join(s for s in streams if s).rstrip("\n"), full)
    return result


register(Kind(HOOK, "Hook", "kinds/hook.html", card, summarize=summarize, failure=failure, side=True, folded=False))
