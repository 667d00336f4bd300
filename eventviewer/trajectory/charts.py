"""Small bar charts of a run's instances, drawn as SVG on the server: how many instances
fall in each range of a figure (turns, cost, duration), each bar split by outcome."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from html import escape

BARS = 12
WIDTH, HEIGHT, GAP = 240, 64, 2


@dataclass(frozen=True)
class Bar:
    low: float  # the range it counts: low <= value < high
    high: float
    counts: dict[str, int]  # outcome -> instances

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def edges(lowest: float, highest: float, bars: int = BARS, whole: bool = False) -> list[float]:
    """The bars' bounds: ``bars`` equal ranges from ``lowest`` to just past ``highest``
    (a range holds its low end, not its high one); ``whole`` keeps them whole numbers."""
    if whole:
        first, last = math.floor(lowest), math.floor(highest) + 1
        size = max(1, math.ceil((last - first) / bars))
        return [float(first + i * size) for i in range(math.ceil((last - first) / size) + 1)]
    span = highest - lowest
    step = span / bars if span > 0 else 1.0
    found = [lowest + i * step for i in range(bars + 1)]
    found[-1] = math.nextafter(highest, math.inf) if span > 0 else highest + step
    return found


def bars(values: Iterable[tuple[str, float | None]], outcomes: Sequence[str], whole: bool = False) -> list[Bar]:
    """(outcome, value) pairs counted into bars; values that are None are left out."""
    known = [(o, v) for o, v in values if v is not None]
    if not known:
        return []
    bounds = edges(min(v for _, v in known), max(v for _, v in known), whole=whole)
    found = [Bar(low, high, {o: 0 for o in outcomes}) for low, high in zip(bounds, bounds[1:], strict=False)]
    for outcome, value in known:
        at = next(i for i, bar in enumerate(found) if value < bar.high)
        found[at].counts[outcome] = found[at].counts.get(outcome, 0) + 1
    return found


def svg(title: str, found: Sequence[Bar], link: Callable[[Bar], str], label: Callable[[Bar], str]) -> str:
    """The chart: a bar per range, stacked by outcome (classes ``outcome-<key>``, coloured by
    the stylesheet), each a link (``link``) with a tooltip (``label``). Every text escaped."""
    tallest = max((bar.total for bar in found), default=0) or 1
    width = (WIDTH - GAP * len(found)) / max(len(found), 1)
    parts = [
        f'<svg class="run-chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="group" aria-label="{escape(title)}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
    ]
    for i, bar in enumerate(found):
        if not bar.total:
            continue
        x = i * (width + GAP)
        parts.append(f'<a href="{escape(link(bar))}" class="bar"><title>{escape(label(bar))}</title>')
        y = float(HEIGHT)
        for outcome, count in bar.counts.items():
            if count:
                h = HEIGHT * count / tallest
                y -= h
                box = f'x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{h:.1f}"'
                parts.append(f'<rect class="outcome-{escape(outcome)}" {box}/>')
        parts.append("</a>")
    parts.append("</svg>")
    return "".join(parts)
