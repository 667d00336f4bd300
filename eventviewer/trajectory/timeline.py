"""The timeline strip: a branch's turns on a time axis, one mark per turn (or per slice
of time when there are more turns than fit), coloured by what happened, problems marked,
each mark a link to its turn, saying on hover when it came and how long it took (until
the next turn). Drawn as a small SVG by hand: no layout to compute. Under it, the axis:
the clock time of the first turn and the time since it at each quarter of the strip.

Everything taken from events (ids, kinds, timestamps) reaches the SVG escaped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape

WIDTH = 1000  # the viewBox width; the strip scales to its column
HEIGHT = 28
MARK_HEIGHT = 16
MAX_MARKS = 150  # more turns than this share marks, one per slice of the axis (5 px or more on a laptop)
AXIS_LABELS = 5  # at 0, 1/4, 1/2, 3/4 and the end of the strip

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


@dataclass(frozen=True)
class Axis:
    """The labels under the strip, evenly spaced from its start to its end."""

    start: str  # the first turn's timestamp, as the SDK wrote it
    labels: tuple[str, ...]  # the first turn's clock time, then the time since it
    duration: str  # from the first turn to the last


def spoken_duration(seconds: float) -> str:
    """1.2 s, 4 min 12 s, 2 h 5 min."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


def elapsed(seconds: float, span: float) -> str:
    """Time since the first turn, as an axis label: tenths of a second on a strip under a
    minute long, else m:ss (h:mm:ss from an hour)."""
    if span < 60:
        return f"+{seconds:.1f} s"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"+{hours}:{minutes:02d}:{secs:02d}" if hours else f"+{minutes}:{secs:02d}"


def timeline_axis(marks: Sequence[Mark]) -> Axis | None:
    """The strip's axis (None when there is no strip: fewer than two timed turns)."""
    timed = sorted(((t, m) for m in marks if (t := _moment(m.timestamp)) is not None), key=lambda tm: tm[0])
    if len(timed) < 2:
        return None
    (start, first), end = timed[0], timed[-1][0]
    span = end - start
    moment = datetime.fromisoformat(first.timestamp)
    clock = _utc(moment).strftime("%H:%M:%S")  # as the cards show it
    steps = [span * i / (AXIS_LABELS - 1) for i in range(1, AXIS_LABELS)]
    return Axis(first.timestamp, (clock, *(elapsed(step, span) for step in steps)), spoken_duration(span))


_EPOCH = datetime(1970, 1, 1)


def _utc(moment: datetime) -> datetime:
    """The moment in UTC; one at the edge of the calendar (year 1 east of UTC) as written."""
    try:
        return moment.astimezone(UTC) if moment.tzinfo else moment
    except OverflowError:
        return moment


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
    buckets: dict[int, list[tuple[float, Mark]]] = {}
    for t, mark in timed:
        buckets.setdefault(min(slices - 1, int((t - start) / span * slices)), []).append((t, mark))
    # How long each turn took: until the next timed turn (the last one: unknown).
    times = sorted(t for t, _ in timed)
    after = {t: later for t, later in zip(times, times[1:], strict=False) if later > t}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'preserveAspectRatio="none">',
        f'<line x1="0" y1="{HEIGHT - 3}" x2="{WIDTH}" y2="{HEIGHT - 3}" stroke="#c9ced8" stroke-width="1"/>',
    ]
    whole = end - start
    for index in sorted(buckets):
        timed_turns = buckets[index]
        turns = [m for _, m in timed_turns]
        worst = min(turns, key=lambda m: TONES.index(m.tone) if m.tone in TONES else len(TONES))
        tone = worst.tone if worst.tone in COLOURS else "other"
        first, last = min(t for t, _ in timed_turns), max(t for t, _ in timed_turns)
        when = f"at {elapsed(first - start, whole)}"
        took = f", took {spoken_duration(after[first] - first)}" if first in after else ""
        if len(turns) == 1:
            title = f"{worst.label[:200]} · {when}{took}"
        else:
            till = after.get(last, last)
            span_of = f"{when} to {elapsed(till - start, whole)} ({spoken_duration(till - first)})"
            title = f"{len(turns):,} turns {span_of}, from: {turns[0].label[:200]}"
        x = index * width
        parts.append(
            f'<a href="{escape(link(worst.event_id))}" class="mark tone-{tone}">'
            f"<title>{escape(title)}</title>"
            f'<rect x="{x:.1f}" y="{HEIGHT - 3 - MARK_HEIGHT}" width="{max(tick, 1.5):.1f}" '
            f'height="{MARK_HEIGHT}" fill="{COLOURS[tone]}"/></a>'
        )
    parts.append("</svg>")
    return "".join(parts)
