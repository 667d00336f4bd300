"""The timeline strip: a branch's turns on a time axis, one mark per turn (or per slice
of time when there are more turns than fit), coloured by what happened, problems marked,
each mark a link to its turn. Drawn as a small SVG by hand: no layout to compute.

Everything taken from events (ids, kinds, timestamps) reaches the SVG escaped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from html import escape

WIDTH = 1000  # the viewBox width; the strip scales to its column
HEIGHT = 28
MARK_HEIGHT = 16
MAX_MARKS = 400  # more turns than this share marks, one per slice of the axis

# What a mark says, worst first: the colour of a slice is its worst turn's.
TONES = ("mismatched", "pending", "error", "user", "assistant", "tool", "other")
COLOURS = {
    "mismatched": "#cf222e",
    "pending": "#bf8700",
    "error": "#e5534b",
    "user": "#2f6fdb",
    "assistant": "#7a4fd6",
    "tool": "#3b8a6e",
    "other": "#8c959f",
}


@dataclass(frozen=True)
class Mark:
    """One turn on the strip."""

    event_id: str  # the turn's first event: where its link goes
    timestamp: str  # ISO, as the SDK wrote it
    tone: str  # one of TONES
    label: str  # what the turn is, for the tooltip


_EPOCH = datetime(1970, 1, 1)


def _moment(timestamp: str) -> float | None:
    try:
        moment = datetime.fromisoformat(timestamp)
    except (TypeError, ValueError):
        return None
    # All of one log share one clock; seconds from a fixed moment, not through the local
    # time zone (which has no year 1, nor 9999 at every offset).
    return (moment.replace(tzinfo=None) - _EPOCH).total_seconds()


def timeline_svg(marks: Sequence[Mark], link: Callable[[str], str]) -> str:
    """The strip as inline SVG, or "" when fewer than two turns have a usable time."""
    timed = [(t, m) for m in marks if (t := _moment(m.timestamp)) is not None]
    if len(timed) < 2:
        return ""
    start, end = min(t for t, _ in timed), max(t for t, _ in timed)
    span = end - start or 1.0
    slices = min(MAX_MARKS, len(timed))
    width = WIDTH / slices
    tick = min(width - 0.5, 8.0)  # a tick, however few the turns
    buckets: dict[int, list[Mark]] = {}
    for t, mark in timed:
        buckets.setdefault(min(slices - 1, int((t - start) / span * slices)), []).append(mark)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'preserveAspectRatio="none">',
        f'<line x1="0" y1="{HEIGHT - 3}" x2="{WIDTH}" y2="{HEIGHT - 3}" stroke="#c9ced8" stroke-width="1"/>',
    ]
    for index in sorted(buckets):
        turns = buckets[index]
        worst = min(turns, key=lambda m: TONES.index(m.tone) if m.tone in TONES else len(TONES))
        tone = worst.tone if worst.tone in COLOURS else "other"
        title = worst.label if len(turns) == 1 else f"{len(turns):,} turns, from: {turns[0].label}"
        x = index * width
        parts.append(
            f'<a href="{escape(link(worst.event_id))}" class="mark tone-{tone}">'
            f"<title>{escape(title[:200])}</title>"
            f'<rect x="{x:.1f}" y="{HEIGHT - 3 - MARK_HEIGHT}" width="{max(tick, 1.5):.1f}" '
            f'height="{MARK_HEIGHT}" fill="{COLOURS[tone]}"/></a>'
        )
    parts.append("</svg>")
    return "".join(parts)
