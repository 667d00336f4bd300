"""The branch list beside the diagram: every branch told apart from the selected one,
filtered, sorted and paged by its own query parameters."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django.core.paginator import Paginator

from eventviewer import caches, cardhtml
from eventviewer.forms import BranchListForm
from eventviewer.lookups import checked
from eventviewer.models import Event
from eventviewer.scope import PageScope
from eventviewer.trajectory.pairing import LeafProblems
from eventviewer.trajectory.reading import Reading
from eventviewer.trajectory.skeleton import Branch, describe_branches
from eventviewer.views import HtmxHttpRequest

BRANCHES_LISTED = 40  # rows a page


BRANCH_COLUMNS = [  # key, heading, natural direction
    ("label", "Branch", "asc"),
    ("fork", "Forks at", "asc"),
    ("length", "Events", "desc"),
    ("outcome", "Outcome", "asc"),
    ("problems", "Problems", "desc"),
    ("recent", "Last activity", "desc"),
]
BRANCH_SORTS: dict[str, Callable[[Branch], Any]] = {
    "label": lambda b: (b.first_label or b.label).casefold(),  # what the row's name starts with
    "fork": lambda b: -1 if b.fork_depth is None else b.fork_depth,
    "length": lambda b: b.depth,
    "outcome": lambda b: b.outcome,
    "problems": lambda b: -1 if b.problems is None else b.problems,
    "recent": lambda b: b.seq,
}


def branch_list(
    request: HtmxHttpRequest,
    scope: PageScope,
    reading: Reading | None,
    leaf: Event | None = None,
    selected: Callable[[], list[str]] | None = None,
    problems: Mapping[str, LeafProblems] | None = None,
) -> dict[str, Any]:
    """The branch list's context: every branch described against the selected one, filtered
    (``bq``), sorted (``bsort``, ``bdir``) and paged (``bpage``), with the links that change it.
    A branch too long to read whole gives its ``leaf``, its kept events (``selected``) and
    the ``problems`` counted without walking the tree instead of a reading."""
    form = checked(BranchListForm(request.GET))
    data = form.cleaned_data
    q, sort = data["bq"].strip(), data["bsort"] or "recent"
    natural = {key: natural for key, _, natural in BRANCH_COLUMNS}
    direction = data["bdir"] or natural[sort]
    conversation = scope.conversation
    # Described once per branch (see caches.branch_memo), then filtered and sorted per request.
    end = reading.path[-1] if reading else leaf.as_light() if leaf else None
    leaf_pk, leaf_id = (end.pk, end.event_id) if end else (0, "")

    def described() -> list[Branch]:
        counted = dict(conversation.leaf_problems() if problems is None else problems)
        if reading:
            counted[leaf_id] = LeafProblems(len(reading.pairing.pending), len(reading.pairing.mismatched))
        chosen = [e.event_id for e in reading.path] if reading else selected() if selected else []
        return describe_branches(conversation.skeleton, chosen, counted, end)

    branches = list(caches.branch_memo(conversation, leaf_pk, "branches", described))
    total = len(branches)
    if q:
        needle = q.casefold()
        branches = [
            b
            for b in branches
            if any(
                needle in text.casefold()
                for text in (conversation.branch_name(b.leaf), b.label, b.first_label, b.leaf, b.outcome, b.first or "")
            )
        ]
    branches.sort(key=lambda b: (BRANCH_SORTS[sort](b), b.seq), reverse=direction == "desc")
    page = Paginator(branches, BRANCHES_LISTED).get_page(data["bpage"] or 1)
    keep = {"leaf": leaf_id, "bq": q, "bsort": data["bsort"], "bdir": data["bdir"]}
    columns = []
    for key, label, first_direction in BRANCH_COLUMNS:
        next_direction = {"asc": "desc", "desc": "asc"}[direction] if key == sort else first_direction
        columns.append((key, label, scope.url(**{**keep, "bsort": key, "bdir": next_direction})))
    return {
        "branches": page,
        "branch_total": total,
        "bq": q,
        "bsort": sort,
        "bdir": direction,
        "branch_columns": columns,
        "branch_keep": keep,  # a branch switch keeps the list as it is
        "branches_key": cardhtml.fragment_key("branches", scope, keep, sort, direction, page.number),
        "branch_pages": {
            "previous": scope.url(**keep, bpage=str(page.previous_page_number())) if page.has_previous() else "",
            "next": scope.url(**keep, bpage=str(page.next_page_number())) if page.has_next() else "",
        },
    }
