"""Two branches side by side: the events they share, then their continuations aligned
step by step.

A *step* is what a reader compares: an assistant response with its tool calls and their
results, a message, or any other event the branch holds. Each step has a *key* (its tool
calls with their arguments, a message's text) on which the two continuations are
aligned, so that one extra step on one side does not shift everything after it; and a
*fingerprint* (the key and the results) that says whether two aligned steps did the same.

The alignment anchors on the steps both sides share, in order (difflib's matching
blocks), then aligns what lies between anchors by Needleman-Wunsch: two steps pair up
when they call the same tools (or are messages of the same role), best when their
arguments or texts are alike; unlike steps stay apart, one side only each.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from . import kinds
from .cards import result_text, texts, tool_arguments
from .events import Light
from .projection import project

T = TypeVar("T")
GAP = -1.0  # the score of a step on one side only
MAX_CELLS = 10_000  # cells of one block aligned by Needleman-Wunsch (a bigger gap is cut into blocks)
MAX_GAP_CELLS = 100_000  # cells aligned in one gap between anchors, at most
MAX_TEXT = 4_000  # characters of a step's text compared for likeness
# Steps of each side aligned: the alignment holds each one's key (its text cut to MAX_TEXT)
# and fingerprint, so a page's memory stays bounded however long the branches.
MAX_STEPS = 2_000
MAX_STEP_EVENTS = 10 * MAX_STEPS  # events of a continuation cut into steps, for the first MAX_STEPS
# Arguments the model writes about a call rather than for it: two calls that differ only
# in these did the same thing.
REMARKS = ("summary", "security_risk", "kind")


class Key(NamedTuple):
    """What a step is aligned on."""

    kind: str  # "calls", "message", or an event kind
    labels: tuple[str, ...]  # the tools called, a message's role, an event's kind
    text: str  # the calls' arguments, a message's text, an event's summary


@dataclass
class Step:
    events: list[Light]  # root first: an assistant batch's actions and then their results, or one event
    key: Key = Key("", (), "")
    fingerprint: Hashable = None
    output: str = ""  # what its calls' results said, one after the other

    @property
    def first(self) -> Light:
        return self.events[0]

    @property
    def calls(self) -> list[Light]:
        return [e for e in self.events if e.kind == kinds.ACTION]

    @property
    def results(self) -> list[Light]:
        return [e for e in self.events if e.kind != kinds.ACTION] if self.first.kind == kinds.ACTION else []


def common_prefix(a: Sequence[T], b: Sequence[T], same: Callable[[T, T], bool]) -> int:
    """How many leading items the two sequences share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if not same(x, y):
            break
        n += 1
    return n


def steps(tail: Sequence[Light], result_for: Mapping[str, str]) -> list[Step]:
    """The steps of a branch's continuation (``tail``, root first): each assistant
    response with the results (``result_for``: action id -> result id) of its calls that
    are in the tail; every other event on its own, except side events."""
    index = {e.event_id: e for e in tail}
    absorbed: set[str] = set()
    found: list[Step] = []
    for turn in project(tail):
        if turn.is_batch:
            results = [index[r] for a in turn.events if (r := result_for.get(a.event_id, "")) in index]
            absorbed.update(r.event_id for r in results)
            found.append(Step([*turn.events, *sorted(results, key=lambda e: e.seq)]))
        elif turn.events[0].event_id not in absorbed and turn.kind not in kinds.SIDE_KINDS:
            found.append(Step(list(turn.events)))
    return found


def describe(step: Step, data: Mapping[str, Mapping[str, Any]], limit: int | None = None) -> Step:
    """Fill in a step's key and fingerprint from its events' JSON (by event id). With a
    ``limit``, the key's text and the output keep that many characters; the fingerprint
    is the same either way (it holds the whole texts' hashes)."""
    first = step.first
    if first.kind == kinds.ACTION:
        labels = tuple(e.tool_name for e in step.calls)
        key = Key("calls", labels, "\n".join(arguments(data.get(e.event_id, {})) for e in step.calls))
        outputs = [(e.kind, e.failure, result_text(data.get(e.event_id, {}))) for e in step.results]
        step.key, step.fingerprint = key, (_hashed(key), tuple((k, f, hash(t)) for k, f, t in outputs))
        step.output = "\n".join(text for _, _, text in outputs)
    else:
        if first.kind == kinds.MESSAGE:
            step.key = Key("message", (first.role or first.source,), message_text(data.get(first.event_id, {})))
        else:
            event = data.get(first.event_id, {})
            text = (
                result_text(event)
                if first.kind in kinds.ACTION_RESULTS
                else kinds.kind_of(first.kind).summarize(dict(event))
            )
            step.key = Key(first.kind, (first.tool_name,), text)
        step.fingerprint = (_hashed(step.key), first.failure)
    if limit is not None:
        step.key, step.output = step.key._replace(text=step.key.text[:limit]), step.output[:limit]
    return step


def _hashed(key: Key) -> Hashable:
    return (key.kind, key.labels, hash(key.text))


def described(
    found: Sequence[Step], read: Callable[[list[Light]], Mapping[str, Mapping[str, Any]]], per: int = 500
) -> list[Step]:
    """The first MAX_STEPS steps, each described with its text cut to MAX_TEXT; their JSON
    is read (``read``: events -> JSON by event id) about ``per`` events at a time, and
    let go before the next."""
    kept = list(found[:MAX_STEPS])
    start = 0
    while start < len(kept):
        end, events = start, 0
        while end < len(kept) and (events < per or end == start):
            events += len(kept[end].events)
            end += 1
        data = read([e for step in kept[start:end] for e in step.events])
        for step in kept[start:end]:
            describe(step, data, MAX_TEXT)
        start = end
    return kept


def arguments(data: Mapping[str, Any]) -> str:
    """A call's arguments as a canonical text: what ran (the ``action``) when there is
    one, else what the model wrote; without the model's remarks about the call."""
    action = data.get("action")
    if isinstance(action, dict):
        value = {k: v for k, v in action.items() if k not in REMARKS}
        return json.dumps(value, sort_keys=True, indent=1, ensure_ascii=False, default=str)
    call = data.get("tool_call")
    raw = call.get("arguments") if isinstance(call, dict) else None
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            return raw
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if k not in REMARKS}
        return json.dumps(value, sort_keys=True, indent=1, ensure_ascii=False, default=str)
    return tool_arguments(dict(data))


def message_text(data: Mapping[str, Any]) -> str:
    message = data.get("llm_message")
    return texts(message.get("content")) if isinstance(message, dict) else ""


class Pair(NamedTuple):
    a: int | None  # a step's index on side a, or None: the step is on side b only
    b: int | None


def align(a: Sequence[Key], b: Sequence[Key]) -> list[Pair]:
    """The two sequences aligned: equal keys anchor, the gaps between are aligned by
    Needleman-Wunsch, pairing steps of one kind that share a tool (or role), best when alike."""
    pairs: list[Pair] = []
    features: dict[Key, _Features] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b).get_opcodes():
        if tag == "equal":
            pairs.extend(Pair(i, j) for i, j in zip(range(i1, i2), range(j1, j2), strict=True))
            continue
        # A gap too big to align cell by cell is cut into blocks along its diagonal.
        n, m = i2 - i1, j2 - j1
        blocks = max(1, math.ceil((n * m / MAX_CELLS) ** 0.5), math.ceil(n * m / MAX_GAP_CELLS))
        blocks = min(blocks, max(n, m, 1))
        for t in range(blocks):
            ia, ib = i1 + n * t // blocks, i1 + n * (t + 1) // blocks
            ja, jb = j1 + m * t // blocks, j1 + m * (t + 1) // blocks
            pairs.extend(_gap(a, b, ia, ib, ja, jb, features))
    return pairs


class _Features(NamedTuple):
    kind: str
    labels: frozenset[str]
    words: frozenset[str]


def _features(key: Key, cache: dict[Key, _Features]) -> _Features:
    found = cache.get(key)
    if found is None:
        found = cache[key] = _Features(key.kind, frozenset(key.labels), frozenset(key.text[:MAX_TEXT].split()))
    return found


def _likeness(x: _Features, y: _Features) -> float:
    """Of two unequal steps of one kind that share a tool: between 0 and 1 (excluded)."""
    tools = _jaccard(x.labels, y.labels)
    words = _jaccard(x.words, y.words) if x.words or y.words else 1.0
    return min(0.99, max(0.01, 0.5 * tools + 0.5 * words))


def _jaccard(x: frozenset[str], y: frozenset[str]) -> float:
    common = len(x & y) if len(x) <= len(y) else len(y & x)
    return common / (len(x) + len(y) - common)


def _gap(a: Sequence[Key], b: Sequence[Key], i1: int, i2: int, j1: int, j2: int, cache: dict[Any, Any]) -> list[Pair]:
    n, m = i2 - i1, j2 - j1
    if not n or not m:
        return [Pair(i, None) for i in range(i1, i2)] + [Pair(None, j) for j in range(j1, j2)]
    # score[i][j]: the best alignment of a[i1:i1+i] with b[j1:j1+j]; a pair scores 2 * similarity.
    score = [[0.0] * (m + 1) for _ in range(n + 1)]
    move = [[""] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        score[i][0], move[i][0] = i * GAP, "a"
    for j in range(1, m + 1):
        score[0][j], move[0][j] = j * GAP, "b"
    fa = [_features(a[i], cache) for i in range(i1, i2)]
    fb = [_features(b[j], cache) for j in range(j1, j2)]
    for i in range(1, n + 1):
        row, above, x = score[i], score[i - 1], fa[i - 1]
        for j in range(1, m + 1):
            # On a tie, b's step alone is taken last going back: a's step alone shows first.
            best, how = row[j - 1] + GAP, "b"
            if above[j] + GAP > best:
                best, how = above[j] + GAP, "a"
            y = fb[j - 1]
            if x is y or (x.kind == y.kind and not x.labels.isdisjoint(y.labels)):
                s = 1.0 if x is y else _likeness(x, y)
                if above[j - 1] + 2 * s >= best:
                    best, how = above[j - 1] + 2 * s, "pair"
            row[j], move[i][j] = best, how
    pairs: list[Pair] = []
    i, j = n, m
    while i or j:
        how = move[i][j]
        if how == "pair":
            pairs.append(Pair(i1 + i - 1, j1 + j - 1))
            i, j = i - 1, j - 1
        elif how == "a":
            pairs.append(Pair(i1 + i - 1, None))
            i -= 1
        else:
            pairs.append(Pair(None, j1 + j - 1))
            j -= 1
    pairs.reverse()
    return pairs


SAME, CHANGED, ONLY_A, ONLY_B = "same", "changed", "only_a", "only_b"


@dataclass
class AlignedRow:
    """One line of the comparison: a run of steps both sides did alike, two aligned steps
    that differ, or a step on one side only."""

    kind: str  # SAME, CHANGED, ONLY_A or ONLY_B
    pairs: list[Pair] = field(default_factory=list)


def rows(pairs: Sequence[Pair], a: Sequence[Step], b: Sequence[Step]) -> list[AlignedRow]:
    """The aligned pairs as rows, each run of steps alike on both sides folded into one."""
    found: list[AlignedRow] = []
    for pair in pairs:
        if pair.a is None:
            kind = ONLY_B
        elif pair.b is None:
            kind = ONLY_A
        else:
            kind = SAME if a[pair.a].fingerprint == b[pair.b].fingerprint else CHANGED
        if kind == SAME and found and found[-1].kind == SAME:
            found[-1].pairs.append(pair)
        else:
            found.append(AlignedRow(kind, [pair]))
    return found
