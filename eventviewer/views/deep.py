"""A branch too long to read whole (over EVENTVIEWER_FULL_READ_MAX events): its page shows a
window read from a stretch of the branch around it (``EventQuerySet.on_branch``), paired
exactly for what it shows (``Conversation.pairing_of``). What would need the whole branch
is left out and the page says so: its turn and tool-call counts, the model's view, its
timeline, usage, failure summary and workspace drift, and its problem counts unless
they were counted at import (HEAD's branch)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import Http404

from eventviewer.models import Conversation, Event
from eventviewer.scope import PageScope
from eventviewer.trajectory.failures import Failures, failures
from eventviewer.trajectory.pairing import LeafProblems
from eventviewer.trajectory.reading import PartReading
from eventviewer.trajectory.window import NotOnBranch, part_window, problems_near, stretch_for
from eventviewer.views import HtmxHttpRequest, branches, is_partial
from eventviewer.views import turns as branch_turns
from eventviewer.views.problems import Reasons, problem_lines


class Stretch:
    """What a page of a long branch read: the events, the window over their turns, and
    their pairing."""

    def __init__(self, conversation: Conversation, leaf: Event, params: dict[str, Any]):
        depth = leaf.depth or 0
        mode = next((k for k in ("at", "before", "after") if params.get(k)), "")
        anchor = params[mode] if mode else ""
        anchor_depth = None
        event = None
        if anchor:
            event = conversation.events.filter(event_id=anchor).values_list("pk", "depth", "parent_id").first()
            if event is None or event[1] is None or event[1] > depth:
                raise Http404(f"Event {anchor!r} is not on this branch.")
            anchor_depth = event[1]
        start, stop = stretch_for(depth, anchor_depth, mode)
        events = Event.objects.on_branch(leaf, start, stop)
        if event is not None and anchor_depth is not None:
            pk, _, parent = event
            if not 0 <= anchor_depth - start < len(events):  # (the branch is shorter than its depth says)
                raise Http404(f"Event {anchor!r} is not on this branch.")
            if events[anchor_depth - start].pk != pk:
                # An event beside the branch (a side event: a hook) is shown after the event it ran beside.
                above = anchor_depth - 1 - start
                if mode != "at" or above < 0 or events[above].pk != parent:
                    raise Http404(f"Event {anchor!r} is not on this branch.")
                anchor = events[above].event_id
        anchors = {k: anchor if k == mode else "" for k in ("at", "before", "after")}
        try:
            self.turns, self.part = part_window(events, depth, settings.EVENTVIEWER_PAGE_SIZE, **anchors)
        except NotOnBranch:
            raise Http404(f"Event {anchor!r} is not on this branch.") from None
        pairing, read = conversation.pairing_of(leaf, events, known=events)
        self.reading = PartReading(path=events, turns=self.turns, pairing=pairing)
        self.on_path = read | {e.event_id for e in events}


def figures(conversation: Conversation, leaf: Event) -> dict[str, Any]:
    """What the page says of the whole branch: its length, and its problem counts when
    they were counted at import (HEAD's branch); None: not counted."""
    counted = leaf.pk == conversation.head_id
    return {
        "events": (leaf.depth or 0) + 1,
        "limit": settings.EVENTVIEWER_FULL_READ_MAX,
        "pending": conversation.pending_count if counted else None,
        "mismatched": conversation.mismatch_count if counted else None,
        "root": Event.objects.on_branch(leaf, 0, 1)[0].event_id,
    }


def leaf_problems(conversation: Conversation) -> dict[str, LeafProblems]:
    """The branch list's problem counts that need no walk of the tree: HEAD's, counted at import."""
    head = conversation.skeleton.get("head")
    return {head: LeafProblems(conversation.pending_count, conversation.mismatch_count)} if head else {}


def page_context(request: HtmxHttpRequest, scope: PageScope, leaf: Event, params: dict[str, Any]) -> dict[str, Any]:
    """The branch part of a long branch's page: its window's rows and problems, and the figures it can give."""
    conversation = scope.conversation
    stretch = Stretch(conversation, leaf, params)
    reading, part = stretch.reading, stretch.part
    reasons = Reasons(scope, leaf, reading.pairing, stretch.on_path)
    side = conversation.side_failures_beside(reading.path)
    found: Failures = failures(reading, side)
    rows = branch_turns.build_rows(conversation, reading, stretch.turns, part, leaf, reasons, found)
    index = 0
    for row in rows:  # numbered by depth: a window's turns are not counted from the root
        if not row.side:
            index = row.turn.events[0].depth or 0
        row.index = index
    context: dict[str, Any] = {
        "deep": figures(conversation, leaf),
        "reading": reading,
        "window": part,
        "rows": rows,
        "at": params["at"],
        "view": branch_turns.FULL,
    }
    if not (is_partial(request) and (params["before"] or params["after"])):
        near = problems_near(reading, part, found=found, only=params.get("problem") or "")
        context["problems"] = problem_lines(conversation, near, reading, reasons, side)
        context["problem_filter"] = params.get("problem") or ""
        context["problem_total"] = len(found.kinds)
    return context


def branch_list(request: HtmxHttpRequest, scope: PageScope, leaf: Event) -> dict[str, Any]:
    """The branch list against a long branch: told apart by its kept events (from the
    skeleton), with the problem counts known without walking the tree."""
    conversation = scope.conversation
    return branches.branch_list(
        request,
        scope,
        None,
        leaf=leaf,
        selected=lambda: conversation.kept_on_branch(leaf),
        problems=leaf_problems(conversation),
    )
