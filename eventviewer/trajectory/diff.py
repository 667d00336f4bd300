"""Unified diffs as lines a page can colour, bounded: however long the texts, a diff
holds at most MAX_LINES lines and says how many it left out."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import NamedTuple

MAX_LINES = 400  # lines of one diff shown; the events have the rest
MAX_INPUT = 20_000  # lines of each text compared; longer texts are summarised, not diffed


class Line(NamedTuple):
    tone: str  # "add", "del", "hunk", "head" or "" (context)
    text: str


class Diff(NamedTuple):
    lines: list[Line]
    cut: int = 0  # lines left out

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines if line.tone == "add")

    @property
    def removed(self) -> int:
        return sum(1 for line in self.lines if line.tone == "del")


def unified(before: str, after: str, old_name: str, new_name: str, context: int = 3) -> Diff:
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    if len(old) > MAX_INPUT or len(new) > MAX_INPUT:
        return Diff([Line("hunk", f"@@ {len(old):,} lines before, {len(new):,} after: too long to compare here @@")])
    return bounded(difflib.unified_diff(old, new, old_name, new_name, n=context))


def added(content: str, name: str) -> Diff:
    """A text that was written whole, as a diff that adds every line."""
    lines = content.splitlines(keepends=True)
    return bounded([f"+++ {name}\n", f"@@ +1,{len(lines)} @@\n", *("+" + line for line in lines)])


def bounded(diff: Iterable[str]) -> Diff:
    lines: list[Line] = []
    cut = 0
    for raw in diff:
        if len(lines) >= MAX_LINES:
            cut += 1
            continue
        if raw.startswith(("+++", "---")):
            tone = "head"
        elif raw.startswith("@@"):
            tone = "hunk"
        elif raw.startswith("+"):
            tone = "add"
        elif raw.startswith("-"):
            tone = "del"
        else:
            tone = ""
        lines.append(Line(tone, raw.rstrip("\n")))
    return Diff(lines, cut)
