"""Colours and fonts of the branch diagram, and its legend."""

from typing import NamedTuple

FONT = "DejaVu Sans"
PATH_COLOUR = "#1f6feb"
EDGE_COLOUR = "#8c959f"
BORDER = "#57606a"
OUTCOME_FILL = {
    "finished": "#dafbe1",
    "error": "#ffcecb",
    "rejected": "#e8ddf7",
    "pending": "#fff1c2",
    "open": "#f6f8fa",
}
PROBLEM_FILL = {"pending": "#ffd33d", "mismatched": "#ff8182"}
PROBLEM_BORDER = {"pending": "#9a6700", "mismatched": "#cf222e"}
FOLD_FILL = "#eaeef2"
FONT_SIZE = 12


class Swatch(NamedTuple):
    """One legend entry, drawn beside the diagram as a small box like the nodes'."""

    text: str
    fill: str = "#ffffff"
    stroke: str = BORDER
    stroke_width: float = 1
    dashed: bool = False
    double: bool = False


LEGEND = (
    Swatch("selected branch", stroke=PATH_COLOUR, stroke_width=2.5),
    Swatch("HEAD (double border)", double=True),
    Swatch("run of folded events", dashed=True),
    Swatch("folded branches", fill=FOLD_FILL),
    Swatch("leaf: finished", fill=OUTCOME_FILL["finished"]),
    Swatch("leaf: error", fill=OUTCOME_FILL["error"]),
    Swatch("leaf: rejected", fill=OUTCOME_FILL["rejected"]),
    Swatch("leaf: open", fill=OUTCOME_FILL["open"]),
    Swatch("leaf: action pending", fill=OUTCOME_FILL["pending"]),
    Swatch("pending on this branch", fill=PROBLEM_FILL["pending"], stroke=PROBLEM_BORDER["pending"]),
    Swatch("mismatched observation", fill=PROBLEM_FILL["mismatched"], stroke=PROBLEM_BORDER["mismatched"]),
    Swatch("\u270e 2: an event with 2 comments"),
)
