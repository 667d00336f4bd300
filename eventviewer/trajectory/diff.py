"""Unified diffs as lines a page can colour, bounded in lines, characters and time.

However long the texts, a diff shows at most ``max_lines`` lines of at most LINE_CHARS
characters, and says what it left out. Its cost is linear in the texts, plus what the
line matching (difflib's) spends within a ``Budget``: the lines both texts start and
end with are set aside first (an edit changes a few places of a file), and when the
matching of the rest runs out of time, the rest is shown as replaced whole (a correct
diff, only coarser), and the diff says so. ``lines`` gives a whole diff, for a download.
"""

from __future__ import annotations

import difflib
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import NamedTuple

MAX_LINES = 400  # lines of one diff shown; the download has the rest
LINE_CHARS = 2_000  # characters of one line shown
PAGE_SECONDS = 1.0  # what one page spends matching lines, over all its diffs
DOWNLOAD_SECONDS = 5.0  # what a download of one diff spends matching lines
# Pairs of equal lines difflib looks at in its first search of what differs (each line of
# one text against each of its copies in the other), about 0.3 µs each: past this, that
# one search could outlast the budget, and the diff is coarse at once.
PAGE_WORK = 500_000
DOWNLOAD_WORK = 10_000_000


class Budget:
    """Time for matching lines, shared by the diffs of one page."""

    def __init__(self, seconds: float, work: int = PAGE_WORK) -> None:
        self.deadline = time.monotonic() + seconds
        self.work = work

    @property
    def spent(self) -> bool:
        return time.monotonic() >= self.deadline


class _OutOfTime(Exception):
    pass


class _Timed(difflib.SequenceMatcher):  # type: ignore[type-arg]
    """difflib's matcher, stopped between two of its searches once the budget is spent."""

    def __init__(self, a: Sequence[str], b: Sequence[str], budget: Budget) -> None:
        self.budget = budget
        super().__init__(None, a, b)

    def find_longest_match(self, alo: int = 0, ahi: int | None = None, blo: int = 0, bhi: int | None = None):  # type: ignore[no-untyped-def]
        if self.budget.spent:
            raise _OutOfTime
        return super().find_longest_match(alo, ahi, blo, bhi)


class Line(NamedTuple):
    tone: str  # "add", "del", "hunk", "head" or "" (context)
    text: str


@dataclass
class Diff:
    lines: list[Line] = field(default_factory=list)
    cut: int = 0  # lines left out
    coarse: bool = False  # the lines were not matched in time: what differs shows as replaced whole
    clipped: int = 0  # lines shown shortened to LINE_CHARS
    adds: int | None = None  # lines added and removed in the whole diff (None: count the lines shown)
    dels: int | None = None

    @property
    def added(self) -> int:
        return self.adds if self.adds is not None else sum(1 for line in self.lines if line.tone == "add")

    @property
    def removed(self) -> int:
        return self.dels if self.dels is not None else sum(1 for line in self.lines if line.tone == "del")

    @property
    def whole(self) -> bool:
        """Shown as it is: nothing left out, shortened or coarsened."""
        return not (self.cut or self.coarse or self.clipped)


Opcode = tuple[str, int, int, int, int]


def opcodes(old: Sequence[str], new: Sequence[str], budget: Budget) -> tuple[list[Opcode], bool]:
    """How ``old`` becomes ``new`` (difflib's opcodes), and whether the matching ran out
    of time or work (then what lies between the common start and end is one replace)."""
    n, m = len(old), len(new)
    start = 0
    while start < n and start < m and old[start] == new[start]:
        start += 1
    end = 0
    while end < n - start and end < m - start and old[n - 1 - end] == new[m - 1 - end]:
        end += 1
    found: list[Opcode] = [("equal", 0, start, 0, start)] if start else []
    a, b = old[start : n - end], new[start : m - end]
    coarse = False
    if a and b and set(a).isdisjoint(b):  # nothing to match: one replace, exactly
        found.append(("replace", start, n - end, start, m - end))
    elif a and b:
        try:
            if budget.spent or _work(a, b) > budget.work:
                raise _OutOfTime
            middle = _Timed(a, b, budget).get_opcodes()
        except _OutOfTime:
            middle, coarse = [("replace", 0, len(a), 0, len(b))], True
        found += [(tag, i1 + start, i2 + start, j1 + start, j2 + start) for tag, i1, i2, j1, j2 in middle]
    elif a:
        found.append(("delete", start, n - end, start, start))
    elif b:
        found.append(("insert", start, start, start, m - end))
    if end:
        found.append(("equal", n - end, n, m - end, m))
    return found, coarse


def _work(a: Sequence[str], b: Sequence[str]) -> int:
    """The pairs of equal lines difflib's first search goes through (after its autojunk:
    a line more than 1% of a long text is skipped)."""
    counts = Counter(b)
    if len(b) >= 200:
        common = len(b) // 100 + 1
        counts = Counter({line: c for line, c in counts.items() if c <= common})
    return sum(counts.get(line, 0) for line in a)


def _groups(codes: list[Opcode], context: int) -> Iterator[list[Opcode]]:
    """The opcodes in hunks with ``context`` lines around each change (as difflib's
    ``get_grouped_opcodes``)."""
    codes = list(codes)
    if not codes:
        return
    if codes[0][0] == "equal":
        tag, i1, i2, j1, j2 = codes[0]
        codes[0] = tag, max(i1, i2 - context), i2, max(j1, j2 - context), j2
    if codes[-1][0] == "equal":
        tag, i1, i2, j1, j2 = codes[-1]
        codes[-1] = tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)
    group: list[Opcode] = []
    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and i2 - i1 > 2 * context:
            group.append((tag, i1, min(i2, i1 + context), j1, min(j2, j1 + context)))
            yield group
            group = []
            i1, j1 = max(i1, i2 - context), max(j1, j2 - context)
        group.append((tag, i1, i2, j1, j2))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _range(start: int, length: int) -> str:
    beginning = start + 1 if length else start
    return f"{beginning}" if length == 1 else f"{beginning},{length}"


def lines(
    old: Sequence[str], new: Sequence[str], codes: list[Opcode], old_name: str, new_name: str, context: int = 3
) -> Iterator[str]:
    """The unified diff of ``old`` and ``new`` (lines with their ends) by ``codes``."""
    first = True
    for group in _groups(codes, context):
        if first:
            yield f"--- {old_name}\n"
            yield f"+++ {new_name}\n"
            first = False
        a1, a2, b1, b2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        yield f"@@ -{_range(a1, a2 - a1)} +{_range(b1, b2 - b1)} @@\n"
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                yield from (" " + line for line in old[i1:i2])
                continue
            if tag in ("replace", "delete"):
                yield from ("-" + line for line in old[i1:i2])
            if tag in ("replace", "insert"):
                yield from ("+" + line for line in new[j1:j2])


def split(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def unified(
    before: str,
    after: str,
    old_name: str,
    new_name: str,
    context: int = 3,
    budget: Budget | None = None,
    whole: bool = False,
) -> Diff:
    """The diff of two texts, bounded (see the module); ``whole``: every line, uncut
    (for a download: its size is the texts')."""
    old, new = split(before), split(after)
    if budget is None:
        budget = Budget(DOWNLOAD_SECONDS, DOWNLOAD_WORK) if whole else Budget(PAGE_SECONDS)
    codes, coarse = opcodes(old, new, budget)
    diff = bounded(lines(old, new, codes, old_name, new_name, context), whole, _count(codes, context))
    diff.coarse = coarse
    diff.dels = sum(i2 - i1 for tag, i1, i2, _, _ in codes if tag != "equal")
    diff.adds = sum(j2 - j1 for tag, _, _, j1, j2 in codes if tag != "equal")
    return diff


def added(content: str, name: str, whole: bool = False) -> Diff:
    """A text that was written whole (or appended), as the lines it adds."""
    found = split(content)
    diff = bounded(["+++ " + name + "\n", *("+" + line for line in found)], whole, len(found) + 1)
    diff.adds, diff.dels = len(found), 0
    return diff


def _count(codes: list[Opcode], context: int) -> int:
    """The lines of ``lines``' diff, counted without making them."""
    total = 0
    for group in _groups(codes, context):
        total += 1 + sum(i2 - i1 if tag == "equal" else (i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in group)
    return total + 2 if total else 0


def bounded(diff: Iterable[str], whole: bool = False, total: int | None = None) -> Diff:
    """The diff's lines toned; at most MAX_LINES of at most LINE_CHARS characters unless
    ``whole``. ``total``: how many lines ``diff`` has (else they are counted)."""
    shown: list[Line] = []
    clipped = 0
    raws = iter(diff)
    for raw in raws if whole else islice(raws, MAX_LINES):
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
        text = raw.rstrip("\n")
        if not whole and len(text) > LINE_CHARS:
            text, clipped = text[:LINE_CHARS] + "…", clipped + 1
        shown.append(Line(tone, text))
    cut = total - len(shown) if total is not None else sum(1 for _ in raws)
    return Diff(shown, cut, clipped=clipped)
