"""A branch too long to read whole: the anchors that find any depth of it in few steps,
and the window a page shows from a stretch of it, which must be the window the whole
branch gives."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from eventviewer.trajectory import tree
from eventviewer.trajectory.projection import messages_starting, project, sent, to_messages
from eventviewer.trajectory.tree import anchor_depth, anchors
from eventviewer.trajectory.window import NotOnBranch, part_window, stretch_for, window

from .events import act, msg, obs, other


def random_tree(size: int, seed: int) -> dict[int, int | None]:
    """key -> parent key: mostly long chains, with forks."""
    rng = random.Random(seed)
    parent: dict[int, int | None] = {0: None}
    for key in range(1, size):
        parent[key] = key - 1 if rng.random() < 0.9 else rng.randrange(key)
    return parent


@pytest.mark.parametrize("spacing", [1, 2, 4, 1024])
def test_an_anchor_is_the_ancestor_at_the_multiple_of_the_spacing_below(monkeypatch, spacing):
    monkeypatch.setattr(tree, "ANCHOR_SPACING", spacing)
    parent = random_tree(3000, seed=spacing)
    depth: dict[int, int] = {}
    for key, up in parent.items():
        depth[key] = 0 if up is None else depth[up] + 1
    shuffled = list(parent.items())
    random.Random(1).shuffle(shuffled)  # parents need not come first
    found = anchors((key, up, depth[key]) for key, up in shuffled)
    for key in parent:
        target = anchor_depth(depth[key])
        if target is None:
            assert found[key] is None
            continue
        assert target % spacing == 0 and depth[key] - spacing <= target < depth[key]
        ancestor = key
        while depth[ancestor] > target:
            ancestor = parent[ancestor]  # type: ignore[assignment]
        assert found[key] == ancestor
    # From anchor to anchor, the root is as many hops away as the depth holds spacings.
    deepest = max(parent, key=depth.__getitem__)
    hops, current = 0, deepest
    while found[current] is not None:
        current, hops = found[current], hops + 1  # type: ignore[assignment]
    assert depth[current] == 0 and hops == -(-depth[deepest] // spacing)


def test_an_event_whose_parent_has_no_anchor_gets_none_unless_its_parent_is_one(monkeypatch):
    monkeypatch.setattr(tree, "ANCHOR_SPACING", 4)
    assert tree.anchor_from_parent(7, 8, None) == 7  # the parent sits at a multiple
    assert tree.anchor_from_parent(7, 9, None) is None  # unknown: readers walk parents
    assert tree.anchor_from_parent(7, 9, 3) == 3


def long_path(blocks: int) -> list:
    """Batches of one to three calls with their results, a message between, and an event
    the model never sees inside some batches; each event's depth is its place."""
    events = [msg("m")]
    for k in range(blocks):
        calls = [f"c{k}-{n}" for n in range(k % 3 + 1)]
        events += [act(f"a{k}-{n}", call, response=f"r{k}") for n, call in enumerate(calls)]
        if k % 4 == 1:
            events.append(other(f"s{k}", "ConversationStateUpdateEvent"))
            events.append(act(f"a{k}-late", f"c{k}-late", response=f"r{k}"))
        events += [obs(f"o{k}-{n}", f"a{k}-{n}", call) for n, call in enumerate(calls)]
        events.append(msg(f"m{k}", role="assistant"))
    return [replace(e, depth=i) for i, e in enumerate(events)]


def shown(turns, start: int, end: int) -> list[list[str]]:
    return [t.event_ids for t in turns[start:end]]


@pytest.mark.parametrize("reach", [40, 97, 400])
@pytest.mark.parametrize("mode", ["", "at", "before", "after"])
def test_a_stretch_shows_the_window_the_whole_branch_shows(mode, reach):
    path = long_path(300)
    whole = project(path)
    leaf = len(path) - 1
    anchors_ = [t.events[0] for t in whole][::7] if mode else [None]
    for anchor in anchors_:
        at = anchor.event_id if anchor else ""
        given = {mode: at} if mode else {}
        try:
            span = window(whole, 10, **given)
        except NotOnBranch:
            continue
        start, stop = stretch_for(leaf, anchor.depth if anchor else None, mode, reach)
        turns, part = part_window(path[start:stop], leaf, 10, **given)
        assert shown(turns, part.start, part.end) == shown(whole, span.start, span.end), (mode, at)
        ids = [e for t in whole[span.start : span.end] for e in t.events]
        if ids:
            assert part.earlier == min(e.depth for e in ids) and part.later == leaf - max(e.depth for e in ids)
        assert part.has_earlier == (span.start > 0 or (not ids and mode == "after"))
        assert part.has_later == (span.end < span.total)


@pytest.mark.parametrize("mode", ["", "at", "before", "after"])
def test_a_branch_read_whole_is_one_stretch(mode):
    """A stretch that holds the whole branch is cut nowhere: its turns and window are the
    whole read's, and what it says lies beyond the window too."""
    path = long_path(60)
    tail = [act("t1", "ct1", response="rt"), act("t2", "ct2", response="rt")]  # a batch at the leaf
    path += [replace(e, depth=len(path) + i) for i, e in enumerate(tail)]
    whole = project(path)
    for anchor in [t.events[-1] for t in whole][::3] if mode else [None]:
        given = {mode: anchor.event_id} if mode else {}
        span = window(whole, 10, **given)
        turns, part = part_window(path, len(path) - 1, 10, **given)
        assert turns == whole and part[:3] == span[:3], (mode, anchor)
        assert (part.has_earlier, part.has_later) == (span.has_earlier, span.has_later), (mode, anchor)


def test_a_stretch_without_the_anchor_says_so():
    path = long_path(10)
    with pytest.raises(NotOnBranch):
        part_window(path[:5], len(path) - 1, 10, at="m9")


def test_the_messages_that_start_in_a_stretch_are_the_whole_branchs():
    path = long_path(40)
    path += [replace(msg(f"u{i}"), depth=len(path) + i) for i in range(12)]  # adjacent user messages: one
    whole = to_messages(path)
    for start in range(0, len(path), 5):
        for size in (1, 4, 9):
            stretch = path[start : start + size]
            previous = next((e for e in reversed(path[:start]) if sent(e)), None)
            for ahead in (path[start + size :], path[start + size : start + size + 3]):
                ended = start + size + len(ahead) >= len(path)
                found = messages_starting(previous, stretch, ahead, ended)
                ids = {e.event_id for e in stretch}
                expected = [m for m in whole if m.event_ids[0] in ids]
                assert [m.event_ids[0] for m in found.messages] == [m.event_ids[0] for m in expected]
                if not found.open_end:
                    assert found.messages == expected, (start, size)
                else:  # its last message may run past what was read; the others are whole
                    assert found.messages[:-1] == expected[:-1] and not ended
                    last, full = found.messages[-1], expected[-1]
                    assert full.event_ids[: len(last.event_ids)] == last.event_ids
