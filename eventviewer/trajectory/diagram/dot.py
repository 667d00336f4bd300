"""The branch diagram as DOT: labels, tooltips and styles of the planned nodes.

Every string taken from events (ids, kinds, summaries, timestamps) is untrusted model
or tool output: it only ever reaches DOT as an escaped quoted string, never as an id
or a URL."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .plan import PROBLEM_KINDS, DiagramNode, PathEvent, diagram_nodes
from .style import (
    BORDER,
    EDGE_COLOUR,
    FOLD_FILL,
    FONT,
    FONT_SIZE,
    OUTCOME_FILL,
    PATH_COLOUR,
    PROBLEM_BORDER,
    PROBLEM_FILL,
)

LABEL_CHARS = 28  # a label line: what happened, in a few words
TOOLTIP_CHARS = 200
COMMENT_MARK = "\u270e"  # ✎ (in DejaVu Sans, which lays the diagram out): an event with comments


def _clean(text: Any, limit: int) -> str:
    """One line of at most ``limit`` characters with no control, format or unassigned
    characters (they are invalid XML or can reorder the text)."""
    text = str(text)[: limit * 2]
    if not text.isprintable():
        text = text.encode("utf-8", "replace").decode("utf-8")
        text = "".join(" " if ch.isspace() else ch for ch in text if ch.isspace() or unicodedata.category(ch)[0] != "C")
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


def _dot_string(text: str, backslashes: int = 2) -> str:
    """A quoted DOT string showing ``text`` literally. Graphviz unescapes backslashes once
    in labels and URLs and twice in tooltips, and decodes entities, so ``&`` is escaped too."""
    text = text.replace("\\", "\\" * backslashes).replace('"', '\\"').replace("&", "&amp;")
    return '"' + text + '"'


def _lines(*lines: str) -> str:
    """Label lines joined with DOT's centred line break (after escaping each line)."""
    return '"' + "\\n".join(_dot_string(line)[1:-1] for line in lines if line) + '"'


def _short(kind: str | None) -> str:
    kind = _clean(kind or "", LABEL_CHARS * 2)
    return _clean(kind.removesuffix("Event") or kind, LABEL_CHARS)


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "es" if word.endswith("ch") else "s")


def _contains(box: DiagramNode) -> str:
    found = [f"{box.contains[p]:,} {p}" for p in PROBLEM_KINDS if box.contains.get(p)]
    return "contains " + ", ".join(found) if found else ""


def _side(box: DiagramNode) -> str:
    return f"+ {_plural(box.side, 'side event')}" if box.side else ""


def _commented(comments: int) -> str:
    return f"{COMMENT_MARK} {comments:,}" if comments else ""


def _label(box: DiagramNode, comments: int = 0) -> str:
    if box.role == "fold":
        return _lines(f"{_plural(box.branches, 'branch')} · {_plural(box.count, 'event')}")
    if box.role == "merged":
        side = f"+ {_plural(box.branches, 'side branch')} ({_plural(box.side_events, 'event')})" if box.branches else ""
        return _lines(_plural(box.count, "event"), side, _contains(box))
    if box.role == "run":
        if box.count == 1:  # a single folded event reads as itself
            what = box.first_label or box.last_label or _short(box.first_kind or box.last_kind)
            return _lines(_clean(what, LABEL_CHARS), f"depth {box.depth:,}", _contains(box), _side(box))
        first = _clean(box.first_label, LABEL_CHARS - 2)
        first = first if not first or first.endswith("…") else first + " …"  # then more events
        span = f"{_plural(box.count, 'event')} · depth {box.depth:,}–{box.bottom:,}"
        return _lines(span, first, _contains(box), _side(box))
    detail = ["HEAD"] if box.head else []
    detail.append(f"depth {box.depth:,}")
    node = box.node
    if node is not None and node["leaf"]:
        outcome = _clean(node["outcome"] or "open", 12)
        if outcome != box.problem:
            detail.append(outcome)
    elif node is not None and node["branch"]:
        detail.append(_plural(node["children"], "branch"))
    if box.problem:
        detail.append(box.problem)
    return _lines(
        _clean(box.label or _short(box.kind), LABEL_CHARS), " · ".join(detail), _side(box), _commented(comments)
    )


GO_TO = "Click to go to this event on the branch shown."
GO_TO_FIRST = "Click to go to its first event on the branch shown."
SWITCH = "Click to switch to the most recent branch below."


def _tooltip(box: DiagramNode, on_branch: bool, comments: int = 0) -> str:
    if box.role == "fold":
        text = f"{_plural(box.branches, 'branch')} folded here ({_plural(box.count, 'event')})"
        return _dot_string(text + ". Click to switch to the most recent of them.", 4)
    if box.role in ("run", "merged"):
        what = "folded events"
        if box.role == "merged":
            what = f"a stretch with {_plural(box.branches, 'side branch')} of {_plural(box.side_events, 'event')}"
        if box.count == 1 and box.role == "run":
            text = f"1 folded event at depth {box.depth:,}"
            ends = _clean(box.first_label or box.last_label, 120)
        else:
            text = f"{_plural(box.count, 'event')} at depths {box.depth:,}–{box.bottom:,} ({what})"
            ends = " … ".join(_clean(label, 60) for label in (box.first_label, box.last_label) if label)
        found = _contains(box)
        click = GO_TO_FIRST if on_branch else SWITCH
        return _dot_string(text + (f", {found}" if found else "") + (f": {ends}" if ends else "") + ". " + click, 4)
    facts = [_clean(box.kind, 60), f"depth {box.depth:,}"]
    if box.node is not None and box.node["leaf"]:
        facts.append(_clean(box.node["outcome"] or "open", 12))
    facts += [word for word, on in (("HEAD", box.head), ("selected", box.selected)) if on]
    if box.problem:
        facts.append(box.problem)
    if box.timestamp:
        facts.append(_clean(box.timestamp, 40))
    head = " · ".join(facts)
    click = GO_TO if on_branch else SWITCH if not box.selected else ""
    summary = _clean(box.label or box.summary, max(20, TOOLTIP_CHARS - len(head) - len(click) - 2))
    said = _plural(comments, "comment") if comments else ""
    lines = [_dot_string(line, 4)[1:-1] for line in (said, head, summary, click) if line]
    return '"' + "\\n".join(lines) + '"'


def _style(box: DiagramNode) -> dict[str, str]:
    attrs: dict[str, str] = {}
    if box.role == "fold":
        attrs.update(shape="folder", style="filled", fillcolor=FOLD_FILL, color=BORDER, fontcolor=BORDER)
    elif box.role in ("run", "merged"):
        attrs.update(style="rounded,dashed" + (",filled" if box.role == "merged" else ""), fontcolor=BORDER)
        if box.role == "merged":
            attrs["fillcolor"] = FOLD_FILL
        worst = next((p for p in reversed(PROBLEM_KINDS) if box.contains.get(p)), None)
        attrs["color"] = PROBLEM_BORDER[worst] if worst else BORDER
    else:
        fill = "#ffffff"
        if box.node is not None and box.node["leaf"]:
            fill = OUTCOME_FILL.get(box.node["outcome"], OUTCOME_FILL["open"])
        if box.problem:
            fill = PROBLEM_FILL[box.problem]
        attrs.update(style="rounded,filled", fillcolor=fill, color=PROBLEM_BORDER.get(box.problem or "", BORDER))
        if box.head:
            attrs["peripheries"] = "2"
    if box.on_path:
        attrs["penwidth"] = "3" if box.selected else "2"
        if not box.problem and not box.contains:
            attrs["color"] = PATH_COLOUR
    return attrs


def build_dot(
    skeleton: Mapping[str, Any],
    *,
    path: Sequence[PathEvent],
    problems: Mapping[str, str],
    link: Callable[[str], str],
    event_link: Callable[[str], str] | None = None,
    max_nodes: int = 250,
    comments: Mapping[str, int] | None = None,
) -> str:
    """The DOT source of the branch diagram; node ``n{i}`` is ``diagram_nodes(...)[i]``.

    A click on a node off the selected path selects a branch (``link(leaf)``); on the
    path it goes to that event (``event_link(event_id)``) when there is an ``event_link``.
    ``comments``: how many comments each event has; a drawn event with some is marked.
    """
    comments = comments or {}
    boxes = diagram_nodes(skeleton, path=path, problems=problems, max_nodes=max_nodes)
    out = [
        'digraph "Branch diagram" {',
        f'  graph [rankdir=TB, nodesep=0.2, ranksep=0.25, bgcolor="transparent", fontname="{FONT}"];',
        f'  node [shape=box, fontname="{FONT}", fontsize={FONT_SIZE}, height=0.3, width=0.4, margin="0.08,0.03",'
        f' color="{BORDER}"];',
        f'  edge [arrowhead=none, color="{EDGE_COLOUR}", penwidth=1];',
    ]
    for box in boxes:
        said = comments.get(box.event_id, 0) if box.role == "event" and box.event_id is not None else 0
        classes = box.classes + (["commented"] if said else [])
        attrs = {"id": f'"n{box.index}"', "class": '"' + " ".join(classes) + '"'}
        on_branch = event_link is not None and box.at is not None
        attrs["label"] = _label(box, said)
        attrs["tooltip"] = _tooltip(box, on_branch, said)
        target = None
        if event_link is not None and box.at is not None:  # on the branch shown: go to the event
            target = event_link(box.at)
        elif box.link_to is not None:  # elsewhere: switch to the branch below
            target = link(box.link_to)
        if target is not None:
            attrs["URL"] = _dot_string(str(target))
        attrs.update({k: f'"{v}"' for k, v in _style(box).items()})
        out.append(f"  n{box.index} [" + ", ".join(f"{k}={v}" for k, v in attrs.items()) + "];")
    for box in boxes:
        if box.parent is None:
            continue
        attrs = {"id": f'"e{box.index}"'}
        if box.on_path and boxes[box.parent].on_path:
            attrs.update({"class": '"path"', "color": f'"{PATH_COLOUR}"', "penwidth": '"2.5"'})
        if box.spine:
            attrs["weight"] = '"8"'  # keep the selected branch and HEAD's straight, side branches beside them
        out.append(f"  n{box.parent} -> n{box.index} [" + ", ".join(f"{k}={v}" for k, v in attrs.items()) + "];")
    out.append("}")
    return "\n".join(out) + "\n"
