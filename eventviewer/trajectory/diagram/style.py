"""Colours and fonts of the branch diagram."""

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
