"""OpenHands before the SDK ("V0"): its events turned into the SDK's shapes, so they
import, pair and render like any other conversation.

A V0 event has an integer ``id``, a ``source``, and either an ``action`` or an
``observation`` (a short name: ``run``, ``edit``, ``message`` …) with ``args`` or
``content`` + ``extras``. An observation names the action it answers by ``cause``; a
tool call's ``tool_call_metadata`` holds the call id and the model response it came
from, so calls of one response (same ``model_response.id``) become one assistant turn.
V0 has no tree: every event follows the one before it (no ``parent_id``), nothing more
is invented. The V0 event itself is kept whole under ``"v0"`` in the converted event.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

V0_KEY = "v0"  # the V0 event as it was, inside its converted event

# V0 action -> (SDK action kind, tool name when the event names none)
_ACTIONS: dict[str, tuple[str, str]] = {
    "run": ("ExecuteBashAction", "execute_bash"),
    "run_ipython": ("IPythonRunCellAction", "execute_ipython_cell"),
    "edit": ("FileEditorAction", "str_replace_editor"),
    "read": ("FileEditorAction", "str_replace_editor"),
    "write": ("FileEditorAction", "str_replace_editor"),
    "browse": ("BrowseURLAction", "browser"),
    "browse_interactive": ("BrowseInteractiveAction", "browser"),
    "think": ("ThinkAction", "think"),
    "finish": ("FinishAction", "finish"),
    "recall": ("RecallAction", "recall"),
    "delegate": ("AgentDelegateAction", "delegate"),
    "call_tool_mcp": ("MCPAction", "mcp"),
    "task_tracking": ("TaskTrackerAction", "task_tracker"),
}
_OBSERVATIONS: dict[str, str] = {
    "run": "ExecuteBashObservation",
    "run_ipython": "IPythonRunCellObservation",
    "edit": "FileEditorObservation",
    "read": "FileEditorObservation",
    "write": "FileEditorObservation",
    "browse": "BrowserObservation",
    "think": "ThinkObservation",
    "recall": "RecallObservation",
    "delegate": "AgentDelegateObservation",
    "mcp": "MCPObservation",
    "task_tracking": "TaskTrackerObservation",
}
# The file_editor command a V0 read or write stands for.
_EDITOR_COMMANDS = {"read": "view", "write": "create"}


def is_v0_event(data: Any) -> bool:
    """Whether ``data`` looks like a V0 event (an integer id and an action or observation name)."""
    return (
        isinstance(data, dict)
        and isinstance(data.get("id"), int)
        and not isinstance(data.get("id"), bool)
        and (isinstance(data.get("action"), str) or isinstance(data.get("observation"), str))
    )


def is_v0_history(history: Any) -> bool:
    return isinstance(history, list) and bool(history) and is_v0_event(history[0])


class Converter:
    """Converts one conversation's V0 events in order: an observation takes its tool
    call id and tool name from the action its ``cause`` names."""

    def __init__(self) -> None:
        self.calls: dict[str, tuple[str, str]] = {}  # action id -> (tool_call_id, tool_name)
        self.editor_commands: dict[str, str] = {}  # edit action id -> the file_editor command it ran

    def convert(self, data: Any) -> Any:
        """The event in the SDK's shape; anything that is not a V0 event comes back as
        it was (the importer then says what is wrong with it)."""
        if not isinstance(data, dict) or not is_v0_event(data):
            return data
        event_id = str(data["id"])
        base: dict[str, Any] = {
            "id": event_id,
            "timestamp": data.get("timestamp") if isinstance(data.get("timestamp"), str) else "",
            "source": data.get("source") if isinstance(data.get("source"), str) else "",
        }
        if isinstance(data.get("action"), str):
            converted = self._action(data, base)
        else:
            converted = self._observation(data, base)
        converted[V0_KEY] = data
        return converted

    def _action(self, data: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
        name = data["action"]
        args = _mapping(data.get("args"))
        meta = _mapping(data.get("tool_call_metadata"))
        if name in ("message", "system"):
            return self._message(data, base, name, args)
        if name == "condensation":
            return {**base, **_condensation(args)}
        if name == "condensation_request":
            return {**base, "kind": "CondensationRequest"}
        if name not in _ACTIONS and not meta:
            # Not a tool call (the agent's state changing, a pause): shown as the V0 event it is.
            return {**base, "kind": f"V0Action.{name}"[:100], "summary": _text(data.get("message"))}
        kind, default_tool = _ACTIONS.get(name, ("V0Action", name))
        tool_name = _text(meta.get("function_name")) or default_tool
        call_id = _text(meta.get("tool_call_id")) or f"v0-{base['id']}"
        response = _mapping(meta.get("model_response"))
        action = {k: v for k, v in args.items() if k != "thought"}
        action["kind"] = kind
        if name in _EDITOR_COMMANDS:
            action.setdefault("command", _EDITOR_COMMANDS[name])
        elif name == "edit" and not isinstance(action.get("command"), str):
            # Older V0 edits keep the command only in the model's call (``create``, ``str_replace`` …).
            command = _call_command(_arguments(response, call_id))
            if command:
                action["command"] = command
        if name == "edit" and isinstance(action.get("command"), str):
            self.editor_commands[base["id"]] = action["command"]
        if name == "think":
            action["thought"] = args.get("thought")
        if name == "finish":
            action.setdefault("message", args.get("final_thought") or data.get("message"))
        self.calls[base["id"]] = (call_id, tool_name)
        thought = args.get("thought")
        return {
            **base,
            "kind": "ActionEvent",
            "thought": [{"type": "text", "text": thought}] if isinstance(thought, str) and thought else [],
            "action": action,
            "tool_name": tool_name,
            "tool_call_id": call_id,
            "tool_call": {"id": call_id, "name": tool_name, "arguments": _arguments(response, call_id)},
            "llm_response_id": _text(response.get("id")),
            "summary": _text(data.get("message"))[:300],
        }

    def _message(self, data: dict[str, Any], base: dict[str, Any], name: str, args: dict[str, Any]) -> dict[str, Any]:
        text = args.get("content")
        if not isinstance(text, str):
            text = _text(data.get("message"))
        if name == "system":
            return {**base, "kind": "SystemPromptEvent", "system_prompt": {"type": "text", "text": text}, "tools": []}
        role = "user" if base["source"] == "user" else "assistant"
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        for url in args.get("image_urls") or []:
            if isinstance(url, str):
                content.append({"type": "image", "image_urls": [url]})
        return {**base, "kind": "MessageEvent", "llm_message": {"role": role, "content": content}}

    def _observation(self, data: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
        name = data["observation"]
        extras = _mapping(data.get("extras"))
        content = data.get("content")
        text = content if isinstance(content, str) else _text(data.get("message"))
        cause = data.get("cause")
        action_id = str(cause) if isinstance(cause, int) and not isinstance(cause, bool) else ""
        meta = _mapping(data.get("tool_call_metadata"))
        call_id, tool_name = self.calls.get(action_id, ("", ""))
        call_id = call_id or _text(meta.get("tool_call_id"))
        tool_name = tool_name or _text(meta.get("function_name"))
        if name == "error":
            return {**base, "kind": "AgentErrorEvent", "error": text, "tool_call_id": call_id, "tool_name": tool_name}
        if name == "condense":
            return {**base, "kind": "Condensation", "summary": text, "forgotten_event_ids": []}
        if name == "user_rejected" and action_id:
            return {
                **base,
                "kind": "UserRejectObservation",
                "rejection_reason": text,
                "action_id": action_id,
                "tool_call_id": call_id,
                "tool_name": tool_name,
            }
        if not action_id or (name == "null" and action_id not in self.calls):
            # Not an answer to a tool call (the agent's state changing; the "no observation"
            # V0 writes after a message or a state change it ran nothing for): shown as the
            # V0 event it is.
            return {**base, "kind": f"V0Observation.{name}"[:100], "summary": _text(data.get("message"))}
        observation: dict[str, Any] = {
            "kind": _OBSERVATIONS.get(name, "V0Observation"),
            "content": [{"type": "text", "text": text}],
        }
        metadata = _mapping(extras.get("metadata"))
        exit_code = metadata.get("exit_code", extras.get("exit_code"))
        if isinstance(exit_code, int) and not isinstance(exit_code, bool):
            observation["exit_code"] = exit_code
        for key in ("command", "path", "url"):
            if isinstance(extras.get(key), str):
                observation[key] = extras[key]
        if name == "edit" and isinstance(extras.get("path"), str):
            # An edit's result says which file changed; the command is its action's, or
            # what ``prev_exist`` implies (a file that was not there was created).
            prev_exist = bool(extras.get("prev_exist"))
            observation["command"] = self.editor_commands.get(action_id) or ("str_replace" if prev_exist else "create")
            observation["prev_exist"] = prev_exist
            for key in ("old_content", "new_content"):
                if isinstance(extras.get(key), str):
                    observation[key] = extras[key]
        if text.startswith("ERROR:") or data.get("success") is False:
            observation["is_error"] = True
        return {
            **base,
            "kind": "ObservationEvent",
            "observation": observation,
            "action_id": action_id,
            "tool_call_id": call_id,
            "tool_name": tool_name,
        }


def convert_all(events: Iterable[Any]) -> Iterator[Any]:
    converter = Converter()
    return (converter.convert(event) for event in events)


def metrics_of(events: Iterable[Any]) -> dict[str, Any] | None:
    """The run's metrics as the last event that carries ``llm_metrics`` holds them
    (V0 accumulates them), for a trajectory file that has no metrics of its own."""
    found = None
    for event in events:
        if isinstance(event, dict) and isinstance(event.get("llm_metrics"), dict):
            found = event["llm_metrics"]
    return found


def _condensation(args: dict[str, Any]) -> dict[str, Any]:
    """A V0 condensation forgets listed ids, or every id from a start to an end."""
    listed = args.get("forgotten_event_ids")
    start, end = args.get("forgotten_events_start_id"), args.get("forgotten_events_end_id")
    if isinstance(listed, list):
        forgotten = [str(i) for i in listed if isinstance(i, int) and not isinstance(i, bool)]
    elif isinstance(start, int) and isinstance(end, int) and 0 <= end - start < 1_000_000:
        forgotten = [str(i) for i in range(start, end + 1)]
    else:
        forgotten = []
    return {
        "kind": "Condensation",
        "forgotten_event_ids": forgotten,
        "summary": args.get("summary") if isinstance(args.get("summary"), str) else None,
        "summary_offset": args.get("summary_offset") if isinstance(args.get("summary_offset"), int) else None,
    }


def _arguments(response: dict[str, Any], call_id: str) -> str:
    for choice in response.get("choices") or []:
        message = _mapping(_mapping(choice).get("message"))
        for call in message.get("tool_calls") or []:
            call = _mapping(call)
            if call.get("id") == call_id:
                arguments = _mapping(call.get("function")).get("arguments")
                return arguments if isinstance(arguments, str) else ""
    return ""


def _call_command(arguments: str) -> str:
    try:
        parsed = json.loads(arguments) if arguments else None
    except ValueError:
        return ""
    return _text(parsed.get("command")) if isinstance(parsed, dict) else ""


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def is_legacy_history(history: Any) -> bool:
    """Whether ``history`` holds V0 events as the first OpenHands versions saved them
    (the resolver's output among them): no ``id``, an action's or observation's fields
    flat beside its name instead of under ``args`` / ``extras``."""
    if not isinstance(history, list) or not history or not isinstance(history[0], dict):
        return False
    first = history[0]
    return "id" not in first and (isinstance(first.get("action"), str) or isinstance(first.get("observation"), str))


def from_legacy(history: list[Any]) -> list[Any]:
    """The events in the later V0 shape: the position as ``id``, the flat fields as
    ``args`` / ``extras``, and as an observation's ``cause`` the action of the same name
    just before it (these versions ran one action at a time). The first message is the
    user's (the task); an action is otherwise the agent's."""
    out: list[Any] = []
    previous: dict[str, Any] = {}
    for index, event in enumerate(history):
        if not isinstance(event, dict):
            out.append(event)
            continue
        fields = {k: v for k, v in event.items() if k not in ("action", "observation", "content", "source", "message")}
        base: dict[str, Any] = {"id": index, "message": _text(event.get("message"))}
        if isinstance(event.get("action"), str):
            source = "user" if event["action"] == "message" and index == 0 else "agent"
            args = {**fields, **({"content": event["content"]} if "content" in event else {})}
            converted = {
                **base,
                "source": _text(event.get("source")) or source,
                "action": event["action"],
                "args": args,
            }
        else:
            converted = {
                **base,
                "source": _text(event.get("source")) or "agent",
                "observation": _text(event.get("observation")),
                "content": event.get("content"),
                "extras": fields,
            }
            if previous.get("action") == converted["observation"]:
                converted["cause"] = previous["id"]
        out.append(converted)
        previous = converted
    return out


def convert_legacy(history: list[Any]) -> Iterator[Any]:
    """A legacy history converted (``from_legacy``, then as any V0 history), each event
    keeping the event as it was saved under ``"v0"``."""
    for original, event in zip(history, convert_all(from_legacy(history)), strict=True):
        if isinstance(event, dict) and isinstance(original, dict):
            event[V0_KEY] = original
        yield event
