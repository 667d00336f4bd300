"""Sub-agents: which ``task`` call of a parent conversation started which child.

The SDK's TaskToolSet runs each task as a conversation of its own, persisted inside the
parent's folder at ``subagents/<child-id>/``, and sends it the task's ``prompt`` as its
first user message. Nothing else names the child: a call is matched to the child whose
first message is its prompt, and calls and children left over are paired in order (a
call that resumed an earlier task started no child)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from .events import one_line

PROMPT_CHARS = 300  # as much of a prompt as a conversation's title holds


class TaskCall(NamedTuple):
    event_id: str
    prompt: str
    resumes: bool  # it continued an earlier task's child rather than starting one


def task_call(event_id: str, action: Any) -> TaskCall | None:
    """The task call in an ActionEvent's ``action``, if it is one."""
    if not isinstance(action, dict) or action.get("kind") != "TaskAction":
        return None
    prompt = action.get("prompt")
    return TaskCall(event_id, prompt if isinstance(prompt, str) else "", bool(action.get("resume")))


def match(calls: Sequence[TaskCall], children: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Child key -> the event id of the call that started it. ``calls`` in the parent's
    order; ``children`` as (key, title: its first user message as one line) in the order
    they started."""
    starters = [c for c in calls if not c.resumes]
    matched: dict[str, str] = {}
    used: set[str] = set()
    for key, title in children:
        for call in starters:
            if call.event_id not in used and one_line(call.prompt, PROMPT_CHARS) == title:
                matched[key] = call.event_id
                used.add(call.event_id)
                break
    rest = [c for c in starters if c.event_id not in used]
    for (key, _), call in zip([c for c in children if c[0] not in matched], rest, strict=False):
        matched[key] = call.event_id
    return matched
