"""The branch diagram: the stored skeleton drawn as a Graphviz graph, then as inline SVG.

``plan`` decides what to draw (folding big trees under a node budget), ``dot`` writes it
as DOT, ``svg`` runs ``dot`` and sanitizes the SVG for inlining.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .dot import build_dot
from .plan import MAX_PROBLEM_NODES, PROBLEM_KINDS, DiagramNode, PathEvent, diagram_nodes
from .style import LEGEND, PROBLEM_FILL
from .svg import ALLOWED_ELEMENTS, render_svg, sanitize_svg

__all__ = [
    "ALLOWED_ELEMENTS",
    "LEGEND",
    "MAX_PROBLEM_NODES",
    "PROBLEM_FILL",
    "PROBLEM_KINDS",
    "DiagramNode",
    "build_dot",
    "diagram_nodes",
    "diagram_svg",
    "render_svg",
    "sanitize_svg",
]


def diagram_svg(
    skeleton: Mapping[str, Any],
    *,
    path: Sequence[PathEvent],
    problems: Mapping[str, str],
    link: Callable[[str], str],
    event_link: Callable[[str], str] | None = None,
    htmx_target: str | None = None,
    max_nodes: int = 250,
    comments: Mapping[str, int] | None = None,
) -> str:
    """The branch diagram as inline SVG (see ``build_dot`` for its links and marks)."""
    dot = build_dot(
        skeleton,
        path=path,
        problems=problems,
        link=link,
        event_link=event_link,
        max_nodes=max_nodes,
        comments=comments,
    )
    return render_svg(dot, htmx_target=htmx_target)
