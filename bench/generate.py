"""Synthetic OpenHands conversations, written the way the SDK persists them.

A conversation folder is ``<32-hex-id>/base_state.json`` plus one
``events/event-NNNNN-<event-id>.json`` per event, with the fields and key order of
the SDK 1.58 fixtures in ``tests/fixtures/openhands-sdk``. The system prompt event
and ``base_state.json`` are copied from the ``simple`` fixture.

The log: a system prompt and a user message, then model turns. Each turn is one LLM
response with 1-4 parallel tool calls (ActionEvents sharing an ``llm_response_id``,
only the first carrying a thought), an AgentErrorEvent right after any invalid call,
then the observations in shuffled order. Now and then a user message. Side branches
start with a user message whose ``parent_id`` is an earlier turn boundary, as when a
user moves HEAD back and types something else; HEAD is the end of the main line.

Usage: python bench/generate.py --events 10000 --out /tmp/x [--active-path 1000]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import sys
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "openhands-sdk" / "simple"
MODEL = "openai/bench-model"
TOOLS_AVAILABLE = "['terminal', 'file_editor', 'finish', 'think']"
START = datetime(2026, 1, 5, 9, 0, 0)

INVALID_CALL_RATE = 0.03
USER_MESSAGE_RATE = 0.03
REASONING_RATE = 0.2
BOUNDARIES_KEPT = 12  # how far back (in turns) a branch may start


@dataclass
class Plan:
    main: int  # events on the main line, system prompt included
    branches: list[int]  # events in each side branch, in the order they are written


@dataclass
class Line:
    """One branch being written: its tip and its recent turn boundaries."""

    tip: str
    boundaries: deque[str] = field(default_factory=lambda: deque(maxlen=BOUNDARIES_KEPT))
    last_user_message: str = ""


@dataclass
class Call:
    """One tool call: the ActionEvent's fields and the observation it will get."""

    tool_name: str
    action: dict[str, Any] | None
    arguments: dict[str, Any]
    summary: str
    observation: dict[str, Any] | None = None
    error: str = ""


def plan(events: int, active_path: int | None, branch_every: int, rng: random.Random) -> Plan:
    """Split ``events`` into the main line and side branches."""
    if events < 4:
        raise ValueError("a conversation needs at least 4 events")
    count = events // branch_every if branch_every > 0 else 0
    if active_path is None:
        branches = [rng.randint(10, 60) for _ in range(count)]
        while sum(branches) > events // 2:
            branches.pop()
        return Plan(events - sum(branches), branches)
    if not 4 <= active_path <= events:
        raise ValueError(f"active_path must be between 4 and {events}")
    side = events - active_path
    if side == 0:
        return Plan(active_path, [])
    # Heavy-tailed sizes: mostly a few hundred events, a few thousands long.
    weights = [rng.lognormvariate(0, 1.2) for _ in range(max(count, 1))]
    return Plan(active_path, _split(side, weights))


def _split(total: int, weights: list[float]) -> list[int]:
    scale = total / sum(weights)
    sizes = [int(w * scale) for w in weights]
    for i in range(total - sum(sizes)):
        sizes[i % len(sizes)] += 1
    return [s for s in sizes if s > 0]


class Writer:
    """Writes the events of one conversation in append order."""

    def __init__(self, folder: Path, rng: random.Random, payload_kb: tuple[float, float]):
        self.events_dir = folder / "events"
        self.events_dir.mkdir(parents=True)
        self.conversation_hex = folder.name
        self.rng = rng
        self.low, self.high = math.log(payload_kb[0] * 1024), math.log(payload_kb[1] * 1024)
        self.seq = 0
        self.clock = START
        self.output_text = _corpus(rng, _output_line)
        self.code_text = _corpus(rng, _code_line)

    # -- ids, time and filler ------------------------------------------------

    def uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def hex24(self) -> str:
        return f"{self.rng.getrandbits(96):024x}"

    def tick(self, low: float, high: float) -> str:
        self.clock += timedelta(seconds=self.rng.uniform(low, high))
        return self.clock.isoformat(timespec="microseconds")

    def size(self) -> int:
        """A payload size in bytes, log-uniform: most events small, some large."""
        return int(math.exp(self.rng.uniform(self.low, self.high)))

    def filler(self, corpus: str, length: int) -> str:
        if length <= 0:
            return ""
        length = min(length, len(corpus) // 2)
        start = corpus.find("\n", self.rng.randrange(len(corpus) - length)) + 1
        end = corpus.rfind("\n", start, start + length) + 1
        return corpus[start : end if end > start else start + length]

    # -- events -------------------------------------------------------------

    def write(self, event: dict[str, Any]) -> str:
        name = f"event-{self.seq:05d}-{event['id']}.json"
        (self.events_dir / name).write_bytes(orjson.dumps(event))
        self.seq += 1
        return event["id"]

    def system_prompt(self, template: dict[str, Any]) -> Line:
        event = dict(template, id=self.uid(), timestamp=self.tick(0, 0))
        return Line(tip=self.write(event))

    def user_message(self, line: Line, parent: str | None = None) -> None:
        task = self.rng.choice(USER_TASKS).format(m=self.rng.randrange(100))
        log = self.filler(self.output_text, self.size() - 400)
        text = f"{task}\n\nHere is what I see:\n```\n{log}```" if log else task
        event = {
            "id": self.uid(),
            "timestamp": self.tick(5, 120),
            "source": "user",
            "parent_id": parent or line.tip,
            "llm_message": {
                "role": "user",
                "content": [{"cache_prompt": False, "type": "text", "text": text}],
                "thinking_blocks": [],
            },
            "activated_skills": [],
            "extended_content": [],
            "kind": "MessageEvent",
        }
        line.tip = self.write(event)
        line.last_user_message = line.tip
        line.boundaries.append(line.tip)

    def turn(self, line: Line, calls: list[Call]) -> None:
        """One LLM response: its actions (errors right after invalid ones), then
        the observations in the order the tools happened to finish."""
        response_id = f"chatcmpl-{self.hex24()}"
        finished: list[tuple[str, str, Call]] = []
        for i, call in enumerate(calls):
            call_id = f"call_{self.hex24()}"
            action_id = self.action(line, call, call_id, response_id, first=i == 0)
            if call.action is None:
                self.agent_error(line, call, call_id)
            else:
                finished.append((action_id, call_id, call))
        self.rng.shuffle(finished)
        for action_id, call_id, call in finished:
            self.observation(line, call, call_id, action_id)
        line.boundaries.append(line.tip)

    def action(self, line: Line, call: Call, call_id: str, response_id: str, first: bool) -> str:
        event: dict[str, Any] = {
            "id": self.uid(),
            "timestamp": self.tick(2, 30) if first else self.tick(0.001, 0.05),
            "source": "agent",
            "parent_id": line.tip,
            "thought": [{"cache_prompt": False, "type": "text", "text": self.thought(call)}] if first else [],
        }
        if first and self.rng.random() < REASONING_RATE:
            event["reasoning_content"] = f"The user wants progress on this; {call.summary} is the next useful step."
        event["thinking_blocks"] = []
        if call.action is not None:
            event["action"] = call.action
        event["tool_name"] = call.tool_name
        event["tool_call_id"] = call_id
        event["tool_call"] = {
            "id": call_id,
            "name": call.tool_name,
            "arguments": json.dumps(call.arguments),
            "origin": "completion",
        }
        event["llm_response_id"] = response_id
        event["security_risk"] = "UNKNOWN"
        if call.action is not None:
            event["summary"] = call.summary
        event["kind"] = "ActionEvent"
        line.tip = self.write(event)
        return line.tip

    def agent_error(self, line: Line, call: Call, call_id: str) -> None:
        event = {
            "id": self.uid(),
            "timestamp": self.tick(0.001, 0.01),
            "source": "agent",
            "parent_id": line.tip,
            "tool_name": call.tool_name,
            "tool_call_id": call_id,
            "error": call.error,
            "classification": {"kind": "agent_action", "retryable": True, "user_action": "retry"},
            "kind": "AgentErrorEvent",
        }
        line.tip = self.write(event)

    def observation(self, line: Line, call: Call, call_id: str, action_id: str) -> None:
        event = {
            "id": self.uid(),
            "timestamp": self.tick(0.01, 8),
            "source": "environment",
            "parent_id": line.tip,
            "tool_name": call.tool_name,
            "tool_call_id": call_id,
            "observation": call.observation,
            "action_id": action_id,
            "extended_content": [],
            "kind": "ObservationEvent",
        }
        line.tip = self.write(event)

    def thought(self, call: Call) -> str:
        return self.rng.choice(THOUGHTS).format(summary=call.summary)

    # -- tool calls ---------------------------------------------------------

    def call(self) -> Call:
        if self.rng.random() < INVALID_CALL_RATE:
            return self.invalid_call()
        pick = self.rng.random()
        if pick < 0.55:
            return self.terminal_call()
        if pick < 0.75:
            return self.view_call()
        if pick < 0.85:
            return self.create_call()
        return self.str_replace_call()

    def terminal_call(self) -> Call:
        module = f"module_{self.rng.randrange(200)}"
        command = self.rng.choice(COMMANDS).format(m=module)
        exit_code = 1 if self.rng.random() < 0.15 else 0
        output = self.filler(self.output_text, self.size() - 700)
        return Call(
            tool_name="terminal",
            action={"command": command, "is_input": False, "reset": False, "kind": "TerminalAction"},
            arguments={"command": command, "summary": f"run {command.split()[0]}", "security_risk": "LOW"},
            summary=f"run {command.split()[0]}",
            observation={
                "content": [{"cache_prompt": False, "type": "text", "text": output}],
                "is_error": False,
                "command": command,
                "exit_code": exit_code,
                "timeout": False,
                "metadata": {
                    "exit_code": exit_code,
                    "pid": -1,
                    "username": "root",
                    "hostname": "vm",
                    "working_dir": "/workspace",
                    "py_interpreter_path": "/usr/bin/python",
                    "prefix": "",
                    "suffix": f"\n[The command completed with exit code {exit_code}.]",
                },
                "full_output_save_dir": f"/persistence/{self.conversation_hex}/observations",
                "kind": "TerminalObservation",
            },
        )

    def view_call(self) -> Call:
        path = self.source_path()
        contents = _numbered(self.filler(self.code_text, self.size() - 600))
        return Call(
            tool_name="file_editor",
            action={"command": "view", "path": path, "kind": "FileEditorAction"},
            arguments={"command": "view", "path": path, "summary": f"view {Path(path).name}", "security_risk": "LOW"},
            summary=f"view {Path(path).name}",
            observation={
                "content": [
                    {
                        "cache_prompt": False,
                        "type": "text",
                        "text": f"Here's the result of running `cat -n` on {path}:\n{contents}",
                    }
                ],
                "is_error": False,
                "command": "view",
                "path": path,
                "prev_exist": True,
                "kind": "FileEditorObservation",
            },
        )

    def create_call(self) -> Call:
        path = self.source_path()
        text = self.filler(self.code_text, self.size() // 3)  # in the action, its arguments and new_content
        summary = f"create {Path(path).name}"
        return Call(
            tool_name="file_editor",
            action={"command": "create", "path": path, "file_text": text, "kind": "FileEditorAction"},
            arguments={
                "command": "create",
                "path": path,
                "file_text": text,
                "summary": summary,
                "security_risk": "LOW",
            },
            summary=summary,
            observation={
                "content": [{"cache_prompt": False, "type": "text", "text": f"File created successfully at: {path}"}],
                "is_error": False,
                "command": "create",
                "path": path,
                "prev_exist": False,
                "new_content": text,
                "kind": "FileEditorObservation",
            },
        )

    def str_replace_call(self) -> Call:
        path = self.source_path()
        old_content = self.filler(self.code_text, self.size() // 2)
        lines = old_content.splitlines(keepends=True) or ["pass\n"]
        at = self.rng.randrange(len(lines))
        old_str = lines[at].rstrip("\n")
        new_str = old_str + "  # checked"
        new_content = "".join(lines[:at]) + new_str + "\n" + "".join(lines[at + 1 :])
        around = lines[max(0, at - 4) : at] + [new_str + "\n"] + lines[at + 1 : at + 5]
        snippet = _numbered("".join(around), max(1, at - 3))
        summary = f"str_replace {Path(path).name}"
        return Call(
            tool_name="file_editor",
            action={
                "command": "str_replace",
                "path": path,
                "old_str": old_str,
                "new_str": new_str,
                "kind": "FileEditorAction",
            },
            arguments={
                "command": "str_replace",
                "path": path,
                "old_str": old_str,
                "new_str": new_str,
                "summary": summary,
                "security_risk": "LOW",
            },
            summary=summary,
            observation={
                "content": [
                    {
                        "cache_prompt": False,
                        "type": "text",
                        "text": (
                            f"The file {path} has been edited. Here's the result of running `cat -n` on a snippet of "
                            f"{path}:\n{snippet}Review the changes and make sure they are as expected. "
                            "Edit the file again if necessary."
                        ),
                    }
                ],
                "is_error": False,
                "command": "str_replace",
                "path": path,
                "prev_exist": True,
                "old_content": old_content,
                "new_content": new_content,
                "kind": "FileEditorObservation",
            },
        )

    def invalid_call(self) -> Call:
        tool = self.rng.choice(["web_search", "search_files", "browser"])
        return Call(
            tool_name=tool,
            action=None,
            arguments={"query": f"module_{self.rng.randrange(200)} usage", "summary": "search", "security_risk": "LOW"},
            summary="search",
            error=f"Tool '{tool}' not found. Available: {TOOLS_AVAILABLE}",
        )

    def finish_call(self) -> Call:
        message = "Done: the changes are in place and the tests pass."
        return Call(
            tool_name="finish",
            action={"message": message, "kind": "FinishAction"},
            arguments={"message": message, "summary": "finish the task"},
            summary="finish the task",
            observation={
                "content": [{"cache_prompt": False, "type": "text", "text": message}],
                "is_error": False,
                "kind": "FinishObservation",
            },
        )

    def source_path(self) -> str:
        return f"/workspace/src/{self.rng.choice(PACKAGES)}/module_{self.rng.randrange(200)}.py"

    # -- lines --------------------------------------------------------------

    def segment(self, line: Line, budget: int, finish: bool) -> None:
        """Exactly ``budget`` events on ``line``, ending at a turn boundary."""
        if finish and budget >= 2:
            budget -= 2
        else:
            finish = False
        while budget > 0:
            if budget == 1 or self.rng.random() < USER_MESSAGE_RATE:
                self.user_message(line)
                budget -= 1
                continue
            calls = [self.call() for _ in range(self.rng.randint(1, min(4, budget // 2)))]
            self.turn(line, calls)
            budget -= 2 * len(calls)
        if finish:
            self.turn(line, [self.finish_call()])

    def branch(self, main: Line, budget: int) -> None:
        """A side branch: a user message hung off a recent turn boundary of ``main``."""
        back = self.rng.randint(1, len(main.boundaries))
        side = Line(tip=main.boundaries[-back])
        self.user_message(side, parent=side.tip)
        self.segment(side, budget - 1, finish=True)


def generate(
    root: Path,
    events: int,
    *,
    seed: int = 0,
    payload_kb: tuple[float, float] = (0.5, 20),
    branch_every: int = 300,
    active_path: int | None = None,
) -> Path:
    """Write one conversation of exactly ``events`` events under ``root``; return its folder."""
    rng = _rng(events, seed, payload_kb, branch_every, active_path)
    split = plan(events, active_path, branch_every, rng)
    conversation_id = uuid.UUID(int=rng.getrandbits(128), version=4)
    folder = Path(root) / conversation_id.hex
    if folder.exists():
        shutil.rmtree(folder)
    template_state, template_prompt = _templates()

    writer = Writer(folder, rng, payload_kb)
    main = writer.system_prompt(template_prompt)
    writer.user_message(main)
    # The branches leave the main line at evenly spread points; the main line then
    # goes on from its own tip, so HEAD stays at the end of the main line.
    body = split.main - 2
    done = 0
    for i, size in enumerate(split.branches, start=1):
        upto = body * i // (len(split.branches) + 1)
        writer.segment(main, upto - done, finish=False)
        done = upto
        writer.branch(main, size)
    writer.segment(main, body - done, finish=True)

    (folder / "events" / ".eventlog.lock").touch()
    (folder / "events" / f".eventlog-len-{writer.seq}.marker").touch()
    state = _base_state(template_state, conversation_id, main)
    (folder / "base_state.json").write_bytes(orjson.dumps(state))
    return folder


def layout(
    events: int,
    *,
    seed: int = 0,
    payload_kb: tuple[float, float] = (0.5, 20),
    branch_every: int = 300,
    active_path: int | None = None,
) -> Plan:
    """The main line and branch sizes ``generate`` uses for the same arguments."""
    return plan(events, active_path, branch_every, _rng(events, seed, payload_kb, branch_every, active_path))


def _rng(
    events: int, seed: int, payload_kb: tuple[float, float], branch_every: int, active_path: int | None
) -> random.Random:
    payload = tuple(float(x) for x in payload_kb)
    return random.Random(f"eventviewer-bench:{seed}:{events}:{active_path}:{branch_every}:{payload}")


def _base_state(template: dict[str, Any], conversation_id: uuid.UUID, main: Line) -> dict[str, Any]:
    state = dict(template)
    state["id"] = str(conversation_id)
    state["agent"] = dict(template["agent"], llm=dict(template["agent"]["llm"], model=MODEL))
    state["persistence_dir"] = f"/persistence/{conversation_id.hex}"
    state["execution_status"] = "finished"
    state["last_user_message_id"] = main.last_user_message
    state["leaf_event_id"] = main.tip
    state["head_is_empty"] = False
    return state


def _templates() -> tuple[dict[str, Any], dict[str, Any]]:
    """base_state.json and the SystemPromptEvent of the ``simple`` fixture."""
    (folder,) = [p for p in FIXTURE.iterdir() if p.is_dir()]
    state = orjson.loads((folder / "base_state.json").read_bytes())
    (prompt_file,) = (folder / "events").glob("event-00000-*.json")
    return state, orjson.loads(prompt_file.read_bytes())


def _numbered(text: str, start: int = 1) -> str:
    return "".join(f"{n:6}\t{line}\n" for n, line in enumerate(text.splitlines(), start=start))


def _corpus(rng: random.Random, make_line: Any, size: int = 256 * 1024) -> str:
    lines: list[str] = []
    total = 0
    while total < size:
        line = make_line(rng)
        lines.append(line)
        total += len(line) + 1
    return "\n".join(lines) + "\n"


def _output_line(rng: random.Random) -> str:
    n = rng.randrange(1000)
    return rng.choice(
        [
            f"tests/test_module_{n % 200}.py::test_case_{n} PASSED{' ' * (n % 7)}[{n % 100:3d}%]",
            f"2026-01-05 09:{n % 60:02d}:{(n * 7) % 60:02d},{n:03d} INFO worker[{n % 8}] "
            f"processed batch {n} in {n / 37:.1f}ms",
            f"src/pkg_{n % 9}/module_{n % 200}.py:{n}: warning: unused variable 'tmp_{n % 13}'",
            f"-rw-r--r-- 1 root root {n * 37:>7} Jan  5 09:{n % 60:02d} module_{n % 200}.py",
            f'  File "/workspace/src/pkg_{n % 9}/module_{n % 200}.py", line {n}, in handle_{n % 31}',
            f"Collecting package-{n % 50}>=1.{n % 10} (from -r requirements.txt (line {n % 40}))",
        ]
    )


def _code_line(rng: random.Random) -> str:
    n = rng.randrange(1000)
    return rng.choice(
        [
            f"def handle_{n}(request, value: int = {n % 10}) -> dict:",
            f"    result = compute_{n % 50}(value, limit={n})",
            f"    if result.status != {n % 5}:",
            f'        raise ValueError(f"unexpected status {{result.status}} for item {n}")',
            f'    return {{"id": {n}, "items": [x for x in result.items if x.weight > {n % 17}]}}',
            f"class Model{n % 40}(Base):",
            f'    """Stores the state of job {n} between retries."""',
            f"from pkg_{n % 9}.module_{n % 200} import helper_{n % 23}",
            "",
        ]
    )


USER_TASKS = [
    "Please fix the failing tests in src/pkg_1/module_{m}.py.",
    "The build breaks on module_{m}; find out why and fix it.",
    "Add type hints to module_{m} and make sure mypy passes.",
    "Refactor module_{m} so the retry logic lives in one place.",
    "Actually, let's try a different approach for module_{m}.",
]
THOUGHTS = [
    "Let me look at this first: {summary}.",
    "Next step: {summary}, and check the output.",
    "I'll {summary} and look at several files in parallel.",
    "The previous output suggests the problem is elsewhere; {summary}.",
]
COMMANDS = [
    "pytest -q tests/test_{m}.py",
    "ls -la src/{m}",
    "grep -rn 'def handle_' src/ | head -n 400",
    "python -m {m} --verbose",
    "git diff --stat",
    "tail -n 300 logs/{m}.log",
    "pip install -r requirements.txt",
]
PACKAGES = [f"pkg_{i}" for i in range(9)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a synthetic OpenHands conversation folder.")
    parser.add_argument("--events", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True, help="the folder to write the conversation into")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--active-path", type=int, default=None, help="events on the main line (HEAD depth + 1)")
    parser.add_argument("--branch-every", type=int, default=300)
    parser.add_argument("--payload-kb", type=float, nargs=2, default=(0.5, 20), metavar=("MIN", "MAX"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    folder = generate(
        args.out,
        args.events,
        seed=args.seed,
        payload_kb=tuple(args.payload_kb),
        branch_every=args.branch_every,
        active_path=args.active_path,
    )
    seconds = time.perf_counter() - started
    size = sum(f.stat().st_size for f in (folder / "events").iterdir())
    print(f"{folder}: {args.events:,} events, {size / 2**20:.1f} MiB, {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
