"""Which actions still wait for a result, and which results do not fit.

On the active path, an executable action (one with an ``action``) is answered by an
ObservationEvent or UserRejectObservation whose action_id, tool_call_id and
tool_name all match it, or by an AgentErrorEvent with its tool_call_id; results may
come in any order. An action without a valid result is pending; an invalid call (no
``action``) never is. A mismatched result does not answer its action.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from .events import Light
from .kinds import ACTION, ACTION_RESULTS, AGENT_ERROR


class Mismatch(NamedTuple):
    code: str
    reason: str
    refs: tuple[str, ...] = ()  # ids in the reason of events that exist (on this branch or another)
    action: str = ""  # the action on this branch it was meant to answer, when there is one


@dataclass
class Pairing:
    result_for: dict[str, str] = field(default_factory=dict)  # action id -> its result's id
    answers: dict[str, str] = field(default_factory=dict)  # result id -> the action it answers
    pending: list[str] = field(default_factory=list)  # action ids, path order
    mismatched: dict[str, Mismatch] = field(default_factory=dict)  # result id -> why, path order

    @property
    def unmatched_for(self) -> dict[str, list[str]]:
        """Action id -> the mismatched results meant for it, in path order."""
        found: dict[str, list[str]] = {}
        for result_id, mismatch in self.mismatched.items():
            if mismatch.action:
                found.setdefault(mismatch.action, []).append(result_id)
        return found

    @property
    def problem_count(self) -> int:
        return len(self.pending) + len(self.mismatched)


def referenced_actions(path: Sequence[Light]) -> set[str]:
    """Action ids that results on the path name but that are not on the path: the
    caller looks these up to tell "on another branch" from "unknown"."""
    on_path = {e.event_id for e in path}
    return {e.action_id for e in path if e.kind in ACTION_RESULTS and e.action_id and e.action_id not in on_path}


class Focus(NamedTuple):
    """What decides how some events of a branch pair: the events whose id, action or tool
    call is one of these (see ``focus``)."""

    ids: frozenset[str]
    calls: frozenset[str]

    def __bool__(self) -> bool:
        return bool(self.ids)

    def decides(self, event: Light) -> bool:
        return event.event_id in self.ids or event.action_id in self.ids or event.tool_call_id in self.calls


def pairs(event: Light) -> bool:
    """Whether pairing says anything about ``event``: an action, or a result."""
    return (
        event.kind == ACTION or event.kind in ACTION_RESULTS or (event.kind == AGENT_ERROR and bool(event.tool_call_id))
    )


def focus(events: Iterable[Light]) -> Focus:
    """How ``events`` pair on a branch depends only on the branch's events that ``focus``
    ``decides``: their actions (by id or by tool call), those actions' other results, and
    any event a result names. ``pair`` over just those, in branch order, says exactly what
    ``pair`` over the whole branch says about ``events`` (their pending and mismatched
    state, reasons and answers): a page pairs the events it shows without the branch."""
    events = [e for e in events if pairs(e)]  # nothing decides anything about the others
    ids = {e.event_id for e in events} | {e.action_id for e in events if e.action_id}
    return Focus(frozenset(ids), frozenset(e.tool_call_id for e in events if e.tool_call_id))


def pair(path: Sequence[Light], elsewhere: Container[str] = frozenset()) -> Pairing:
    """Pair results with actions along ``path`` (root first). ``elsewhere`` holds the
    ids of actions that exist in the conversation but not on this path."""
    result = Pairing()
    kind_on_path = {e.event_id: e.kind for e in path}
    seen_actions: dict[str, Light] = {}
    by_call: dict[str, Light] = {}  # tool_call_id -> the latest action that made it
    later_calls = {e.tool_call_id for e in path if e.kind == ACTION and e.tool_call_id}

    def settle(res: Light, action: Light) -> None:
        earlier = result.result_for.get(action.event_id)
        if earlier is not None:
            result.mismatched[res.event_id] = Mismatch(
                "duplicate",
                f"second result for action {action.event_id}, already answered by {earlier}",
                (action.event_id, earlier),
                action.event_id,
            )
            return
        result.result_for[action.event_id] = res.event_id
        result.answers[res.event_id] = action.event_id

    for event in path:
        if event.kind == ACTION:
            seen_actions[event.event_id] = event
            if event.tool_call_id:
                by_call[event.tool_call_id] = event
        elif event.kind in ACTION_RESULTS:
            mismatch = _check_result(event, seen_actions, kind_on_path, elsewhere)
            if mismatch is not None:
                result.mismatched[event.event_id] = mismatch
            else:
                settle(event, seen_actions[event.action_id])
        elif event.kind == AGENT_ERROR and event.tool_call_id:
            action = by_call.get(event.tool_call_id)
            if action is None:
                if event.tool_call_id in later_calls:
                    later = next(e.event_id for e in path if e.kind == ACTION and e.tool_call_id == event.tool_call_id)
                    reason = Mismatch(
                        "before_action",
                        f"comes before the action that made tool call {event.tool_call_id}",
                        (),
                        later,
                    )
                else:
                    reason = Mismatch(
                        "unknown_tool_call",
                        f"answers tool call {event.tool_call_id}, which no action on this branch made",
                    )
                result.mismatched[event.event_id] = reason
            elif event.tool_name and action.tool_name and event.tool_name != action.tool_name:
                result.mismatched[event.event_id] = Mismatch(
                    "tool_name",
                    f"tool_name {event.tool_name!r} does not match the action's {action.tool_name!r}",
                    (),
                    action.event_id,
                )
            else:
                settle(event, action)

    result.pending = [
        e.event_id for e in path if e.kind == ACTION and e.executable and e.event_id not in result.result_for
    ]
    return result


def _check_result(
    event: Light,
    seen_actions: dict[str, Light],
    kind_on_path: dict[str, str],
    elsewhere: Container[str],
) -> Mismatch | None:
    action_id = event.action_id
    if not action_id:
        return Mismatch("no_action_id", "names no action (action_id is empty)")
    action = seen_actions.get(action_id)
    if action is None:
        kind = kind_on_path.get(action_id)
        if kind == ACTION:
            return Mismatch("before_action", f"comes before its action {action_id}", (action_id,), action_id)
        if kind is not None:
            return Mismatch(
                "unknown_action", f"answers event {action_id}, which is a {kind}, not an action", (action_id,)
            )
        if action_id in elsewhere:
            return Mismatch("other_branch", f"answers action {action_id}, which is on another branch", (action_id,))
        return Mismatch("unknown_action", f"answers action {action_id}, which does not exist in this conversation")
    if event.tool_call_id != action.tool_call_id:
        return Mismatch(
            "tool_call_id",
            f"tool_call_id {event.tool_call_id!r} does not match the action's {action.tool_call_id!r}",
            (),
            action_id,
        )
    if event.tool_name != action.tool_name:
        return Mismatch(
            "tool_name",
            f"tool_name {event.tool_name!r} does not match the action's {action.tool_name!r}",
            (),
            action_id,
        )
    return None


class Identity(NamedTuple):
    """What ``problems_per_leaf`` reads of a tree event: its place and its identity triple."""

    pk: int
    parent_pk: int | None
    event_id: str
    kind: str
    tool_name: str
    tool_call_id: str
    action_id: str
    executable: bool


class LeafProblems(NamedTuple):
    pending: int
    mismatched: int

    @property
    def total(self) -> int:
        return self.pending + self.mismatched


def problems_per_leaf(events: Iterable[Identity]) -> dict[str, LeafProblems]:
    """``pair``'s counts for the branch of every leaf of a tree at once, in one walk.

    ``events`` are the tree's events (a stored row of each: ``Identity``). A
    result's fate depends only on the events above it, so a depth-first walk that undoes
    each event's effect on the way back up gives every branch the counts ``pair`` gives
    it, without reading each branch on its own (a branch list of 300 branches of 10,000
    events would be 3 million steps)."""
    by_pk: dict[int, Identity] = {}
    children: dict[int | None, list[int]] = {}
    for event in events:
        by_pk[event.pk] = event
        children.setdefault(event.parent_pk, []).append(event.pk)
    seen: dict[str, Identity] = {}  # action id -> action, on the way down
    by_call: dict[str, list[Identity]] = {}  # tool_call_id -> the actions that made it, latest last
    answered: set[str] = set()
    counts = [0, 0, 0]  # executable actions, of which answered, mismatched results
    found: dict[str, LeafProblems] = {}

    def enter(event: Identity) -> tuple[str, ...]:
        """Apply ``event``; return what undoes it."""
        if event.kind == ACTION:
            seen[event.event_id] = event
            if event.tool_call_id:
                by_call.setdefault(event.tool_call_id, []).append(event)
            counts[0] += event.executable
            return ("action",)
        action: Identity | None = None
        if event.kind in ACTION_RESULTS:
            action = seen.get(event.action_id) if event.action_id else None
            if action is not None and (event.tool_call_id, event.tool_name) != (action.tool_call_id, action.tool_name):
                action = None
        elif event.kind == AGENT_ERROR and event.tool_call_id:
            made = by_call.get(event.tool_call_id)
            action = made[-1] if made else None
            if action is not None and event.tool_name and action.tool_name and event.tool_name != action.tool_name:
                action = None
        else:
            return ()
        if action is None or action.event_id in answered:  # no fitting action, or a second result
            counts[2] += 1
            return ("mismatched",)
        answered.add(action.event_id)
        counts[1] += action.executable
        return ("answered", action.event_id, "1" if action.executable else "")

    def leave(event: Identity, undo: tuple[str, ...]) -> None:
        if not undo:
            return
        if undo[0] == "action":
            del seen[event.event_id]
            if event.tool_call_id:
                by_call[event.tool_call_id].pop()
            counts[0] -= event.executable
        elif undo[0] == "mismatched":
            counts[2] -= 1
        else:
            answered.discard(undo[1])
            counts[1] -= bool(undo[2])

    # Iterative, so that a branch a million events deep needs no recursion.
    stack: list[tuple[int, tuple[str, ...] | None]] = [(pk, None) for pk in reversed(children.get(None, []))]
    while stack:
        pk, undo = stack.pop()
        event = by_pk[pk]
        if undo is not None:  # on the way back up
            leave(event, undo)
            continue
        applied = enter(event)
        below = children.get(pk)
        if not below:
            found[event.event_id] = LeafProblems(counts[0] - counts[1], counts[2])
            leave(event, applied)
            continue
        stack.append((pk, applied))
        stack.extend((child, None) for child in reversed(below))
    return found
