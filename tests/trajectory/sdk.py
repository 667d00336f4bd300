"""Reading the SDK fixtures with the pure trajectory code only (no Django)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from eventviewer.trajectory import kinds
from eventviewer.trajectory.events import describe
from eventviewer.trajectory.skeleton import Node, build_skeleton
from eventviewer.trajectory.tree import Entry, Tree, build_tree

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "openhands-sdk"
# Set A (one conversation each). Set A2 (sub-agents, several conversations, side events) is read
# by the tests of those features.
SET_A2 = {"condense-head-before", "hooks", "pause-interrupt", "tokens-and-logs", "subagent", "multimodal"}
SCENARIOS = sorted(
    p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name != "sdk-answers" and p.name not in SET_A2
)


@dataclass
class Ev:
    """An event as the pure code sees it (the same attributes as the Event model)."""

    event_id: str
    kind: str
    source: str = ""
    role: str = ""
    tool_name: str = ""
    tool_call_id: str = ""
    action_id: str = ""
    llm_response_id: str = ""
    executable: bool = False
    carries_text: bool = False
    parent_ref: str | None = None
    depth: int = 0
    payload_kind: str = ""
    is_error: bool = False
    summary: str = ""
    timestamp: str = ""
    seq: int = 0
    failure: str = ""
    thinking: bool = False
    effect: str = ""


@dataclass
class Loaded:
    folder: Path
    events: dict[str, Ev]
    entries: list[Entry]
    tree: Tree
    base_state: dict
    answers: dict
    data: dict = field(default_factory=dict)  # each event's JSON

    @property
    def head(self) -> str | None:
        return self.tree.head(self.base_state.get("leaf_event_id"), bool(self.base_state.get("head_is_empty")))

    def path(self, leaf: str | None = None) -> list[Ev]:
        for event_id, depth in self.tree.depth.items():
            self.events[event_id].depth = depth
        return [self.events[i] for i in self.tree.path(leaf or self.head)]

    def skeleton(self, head: str | None = None) -> dict:
        return build_skeleton(nodes(self.events.values(), self.tree), head or self.head)


def event_from(data: dict, seq: int = 0) -> Ev:
    light = describe(data)
    return Ev(
        event_id=light.event_id,
        kind=light.kind,
        source=light.source,
        role=light.role,
        tool_name=light.tool_name,
        tool_call_id=light.tool_call_id,
        action_id=light.action_id,
        llm_response_id=light.llm_response_id,
        executable=light.executable,
        carries_text=light.carries_text,
        parent_ref=light.parent_ref,
        payload_kind=light.payload_kind,
        is_error=light.is_error,
        summary=light.summary,
        timestamp=light.timestamp,
        seq=seq,
        failure=light.failure,
        thinking=light.thinking,
        effect=light.effect,
    )


def nodes(events, tree: Tree) -> list[Node]:
    return [
        Node(
            e.event_id,
            tree.parent[e.event_id],
            e.seq,
            tree.depth[e.event_id],
            e.kind,
            kinds.outcome(e),
            e.timestamp,
            e.summary,
        )
        for e in events
        if e.event_id in tree.parent
    ]


def load(scenario: str) -> Loaded:
    (folder,) = [p for p in (FIXTURES / scenario).iterdir() if p.is_dir()]
    return load_folder(folder)


# Every conversation the SDK answered for, sets A and A2, sub-agents included: "scenario/hex[/subagents/hex]".
CONVERSATIONS = sorted(
    json.loads(p.read_text())["conversation_relpath"] for p in (FIXTURES / "sdk-answers").glob("*.json")
)


def load_folder(folder: Path) -> Loaded:
    events: dict[str, Ev] = {}
    data: dict[str, dict] = {}
    entries = []
    for file in (folder / "events").glob("event-*.json"):
        seq = int(file.name.split("-")[1])
        raw = json.loads(file.read_text())
        ev = event_from(raw, seq)
        events[ev.event_id], data[ev.event_id] = ev, raw
        entries.append(Entry(seq, ev.event_id, ev.kind, ev.parent_ref, file.name))
    answers = json.loads((FIXTURES / "sdk-answers" / f"{folder.name}.json").read_text())
    base_state = json.loads((folder / "base_state.json").read_text())
    return Loaded(folder, events, entries, build_tree(entries), base_state, answers, data)


def event_json(conversation: str, seq: int) -> dict:
    """One event's JSON: the file ``event-<seq>-*.json`` of a scenario's conversation
    ("simple", or "multimodal/<hex>" where a scenario has several)."""
    (file,) = (FIXTURES / conversation).glob(f"{'' if '/' in conversation else '*/'}events/event-{seq:05d}-*.json")
    return json.loads(file.read_text())
