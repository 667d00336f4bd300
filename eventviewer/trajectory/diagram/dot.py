"""The branch diagram as DOT: labels, tooltips and styles of the planned nodes.

Every string taken from events (ids, kinds, summaries, timestamps) is untrusted model
or tool output: it only ever reaches DOT as an escaped quoted string, never as an id
or a URL."""

from __future__ import annotations

import html
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .plan import PROBLEM_KINDS, DiagramNode, PathEvent, diagram_nodes
from .style import BORDER, EDGE_COLOUR, FOLD_FILL, FONT, OUTCOME_FILL, PATH_COLOUR, PROBLEM_BORDER, PROBLEM_FILL

LABEL_CHARS = 40
TOOLTIP_CHARS = 200


def _clean(text: Any, limit: int) -> str:
    """One line of at most ``limit`` characters with no control, format or unassigned
    characters (they are invalid XML or can reorder the text)."""
    text = str(text)[: limit * 2]
    if not text.isprintable():
        text = text.encode("utf-8", "replace").decode("utf-8")
        text = "".join(" " if ch.isspace() else ch for ch in text if ch.isspace() or unicodedata.category(ch)[0] != "C")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


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


def _label(box: DiagramNode) -> str:
    if box.role == "fold":
        return _lines(f"{_plural(box.branches, 'branch')} · {_plural(box.count, 'event')}")
    if box.role == "merged":
        side = f"+ {_plural(box.branches, 'side branch')} ({_plural(box.side_events, 'event')})" if box.branches else ""
        return _lines(_plural(box.count, "event"), side, _contains(box))
    if box.role == "run":
        kinds = [_short(box.first_kind) if box.first_kind else "", _short(box.last_kind) if box.last_kind else ""]
        if box.count == 1:
            span = kinds[0] or kinds[1]
        else:
            span = " … ".join(kinds) if all(kinds) else "… " + kinds[1] if kinds[1] else kinds[0] + " …"
        return _lines(_plural(box.count, "event") + ":", span, _contains(box))
    detail = [f"depth {box.depth:,}"]
    node = box.node
    if node is not None and node["leaf"]:
        detail.append(_clean(node["outcome"] or "open", 12))
    elif node is not None and node["branch"]:
        detail.append(_plural(node["children"], "branch"))
    if box.problem:
        detail.append(box.problem)
    return _lines("HEAD" if box.head else "", _short(box.kind), " · ".join(detail))


def _tooltip(box: DiagramNode) -> str:
    if box.role == "fold":
        text = f"{_plural(box.branches, 'branch')} folded here ({_plural(box.count, 'event')})"
        return _dot_string(text + ". Click to select the most recent leaf among them.", 4)
    if box.role in ("run", "merged"):
        what = "folded events"
        if box.role == "merged":
            what = f"a stretch with {_plural(box.branches, 'side branch')} of {_plural(box.side_events, 'event')}"
        text = f"{_plural(box.count, 'event')} at depths {box.depth:,}–{box.bottom:,} ({what})"
        found = _contains(box)
        return _dot_string(text + (f", {found}" if found else "") + ". Click to select the most recent leaf below.", 4)
    facts = [_clean(box.kind, 60), f"depth {box.depth:,}"]
    if box.node is not None and box.node["leaf"]:
        facts.append(_clean(box.node["outcome"] or "open", 12))
    facts += [word for word, on in (("HEAD", box.head), ("selected", box.selected)) if on]
    if box.problem:
        facts.append(box.problem)
    if box.timestamp:
        facts.append(_clean(box.timestamp, 40))
    head = " · ".join(facts)
    summary = _clean(box.summary, max(20, TOOLTIP_CHARS - len(head) - 1))
    return _dot_string(head, 4)[:-1] + ("\\n" + _dot_string(summary, 4)[1:] if summary else '"')


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


LEGEND = (
    (f'BGCOLOR="{PATH_COLOUR}" BORDER="1"', "selected branch"),
    ('BGCOLOR="#ffffff" BORDER="3"', "HEAD (double border)"),
    ('BGCOLOR="#ffffff" BORDER="1" STYLE="dashed"', "run of folded events"),
    (f'BGCOLOR="{FOLD_FILL}" BORDER="1"', "folded branches"),
    (f'BGCOLOR="{OUTCOME_FILL["finished"]}" BORDER="1"', "leaf: finished"),
    (f'BGCOLOR="{OUTCOME_FILL["error"]}" BORDER="1"', "leaf: error"),
    (f'BGCOLOR="{OUTCOME_FILL["rejected"]}" BORDER="1"', "leaf: rejected"),
    (f'BGCOLOR="{OUTCOME_FILL["open"]}" BORDER="1"', "leaf: open"),
    (f'BGCOLOR="{OUTCOME_FILL["pending"]}" BORDER="1"', "leaf: action pending"),
    (f'BGCOLOR="{PROBLEM_FILL["pending"]}" BORDER="1"', "pending on this branch"),
    (f'BGCOLOR="{PROBLEM_FILL["mismatched"]}" BORDER="1"', "mismatched observation"),
)
LEGEND_TITLE = "Click a node to select its branch (or the latest leaf below it)."


def _legend(columns: int = 4) -> str:
    """The legend as the graph's own label: a small table above the drawing, which (unlike
    a node) does not widen or lengthen the tree's first rank."""
    cells = [f'<TD {swatch} WIDTH="12"> </TD><TD ALIGN="LEFT">{html.escape(text)}</TD>' for swatch, text in LEGEND]
    rows = "".join(f"<TR>{''.join(cells[i : i + columns])}</TR>" for i in range(0, len(cells), columns))
    table = (
        f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="2" CELLPADDING="1" COLOR="{BORDER}">'
        f'<TR><TD COLSPAN="{2 * columns}" ALIGN="LEFT">{html.escape(LEGEND_TITLE)}</TD></TR>{rows}</TABLE>'
    )
    return f'  graph [labelloc="t", labeljust="l", fontsize=8, label=<{table}>];'


def build_dot(
    skeleton: Mapping[str, Any],
    *,
    path: Sequence[PathEvent],
    problems: Mapping[str, str],
    link: Callable[[str], str],
    max_nodes: int = 250,
) -> str:
    """The DOT source of the branch diagram; node ``n{i}`` is ``diagram_nodes(...)[i]``."""
    boxes = diagram_nodes(skeleton, path=path, problems=problems, max_nodes=max_nodes)
    out = [
        'digraph "Branch diagram" {',
        f'  graph [rankdir=TB, nodesep=0.18, ranksep=0.22, bgcolor="transparent", fontname="{FONT}"];',
        f'  node [shape=box, fontname="{FONT}", fontsize=9, height=0.22, width=0.3, margin="0.06,0.02",'
        f' color="{BORDER}"];',
        f'  edge [arrowhead=none, color="{EDGE_COLOUR}", penwidth=1];',
        _legend(),
    ]
    for box in boxes:
        attrs = {"id": f'"n{box.index}"', "class": '"' + " ".join(box.classes) + '"'}
        attrs["label"] = _label(box)
        attrs["tooltip"] = _tooltip(box)
        target = box.link_to
        if target is not None:
            attrs["URL"] = _dot_string(str(link(target)))
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
