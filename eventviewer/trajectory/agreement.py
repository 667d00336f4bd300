"""Agreement between reviewers: Cohen's kappa for each pair of reviewers over the items
(a run's instances) both of them judged.

Kappa is (p_o - p_e) / (1 - p_e): the observed agreement p_o over what chance alone would
give, p_e, from each reviewer's own mix of verdicts. It is computed in integers, so that the
case where chance agreement is certain (both reviewers gave one and the same verdict to every
item: p_e = 1) is found exactly; kappa is then undefined (0 / 0), and shown so, with the raw
agreement (100%) beside it. Three or more reviewers get the table of every pair that judged
an item in common, not Fleiss' kappa: reviewers here judge different subsets of a run, and
Fleiss' kappa needs the same number of ratings on every item."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

MIN_OVERLAP = 5  # items two reviewers both judged, below which their kappa is not shown
# Landis and Koch (1977): how strong a kappa is, by its upper bound (below 0: poor).
STRENGTHS = ((0.2, "slight"), (0.4, "fair"), (0.6, "moderate"), (0.8, "substantial"))


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> Fraction | None:
    """Cohen's kappa of two reviewers' verdicts on the same items, ``(a's, b's)`` each;
    None when it is undefined: no items, or both gave one same verdict to every item."""
    n = len(pairs)
    agreed = sum(a == b for a, b in pairs)
    of_a = Counter(a for a, _ in pairs)
    of_b = Counter(b for _, b in pairs)
    # n * n * p_e: the pairs chance alone would match
    expected = sum(count * of_b[verdict] for verdict, count in of_a.items())
    if expected == n * n:
        return None
    return Fraction(n * agreed - expected, n * n - expected)


def strength(kappa: float) -> str:
    """Landis and Koch's word for a kappa."""
    if kappa < 0:
        return "poor"
    for bound, word in STRENGTHS:
        if kappa <= bound:
            return word
    return "almost perfect"


@dataclass(frozen=True)
class Pair:
    """Two reviewers over the items both judged."""

    a: str
    b: str
    both: int  # the items both judged
    agreed: int  # of those, the ones given the same verdict
    kappa: float | None  # None: undefined (see cohen_kappa)
    only: str = ""  # the one verdict every one of their verdicts was, when kappa is undefined

    @property
    def enough(self) -> bool:
        return self.both >= MIN_OVERLAP

    @property
    def raw(self) -> float:
        """The share of the items both judged that they judged alike."""
        return self.agreed / self.both

    @property
    def strength(self) -> str:
        return strength(self.kappa) if self.kappa is not None else ""


@dataclass(frozen=True)
class Agreement:
    reviewers: list[str]  # everyone who gave a verdict, in name order (case aside)
    pairs: list[Pair]  # each pair that judged an item in common, the most items in common first

    @property
    def shown(self) -> bool:
        """Whether there is anything to say: two reviewers or more."""
        return len(self.reviewers) >= 2


def agreement(verdicts: Iterable[tuple[Hashable, str, str]]) -> Agreement:
    """The agreement of the reviewers of ``(item, reviewer, verdict)`` (one verdict per
    reviewer and item: a later one replaces an earlier)."""
    by_reviewer: dict[str, dict[Hashable, str]] = {}
    for item, reviewer, verdict in verdicts:
        by_reviewer.setdefault(reviewer, {})[item] = verdict
    reviewers = sorted(by_reviewer, key=lambda name: (name.casefold(), name))
    pairs = []
    for a, b in combinations(reviewers, 2):
        common = by_reviewer[a].keys() & by_reviewer[b].keys()
        if not common:
            continue
        judged = [(by_reviewer[a][i], by_reviewer[b][i]) for i in common]
        kappa = cohen_kappa(judged)
        only = judged[0][0] if kappa is None else ""
        agreed = sum(x == y for x, y in judged)
        pairs.append(Pair(a, b, len(judged), agreed, None if kappa is None else float(kappa), only))
    pairs.sort(key=lambda p: (-p.both, p.a, p.b))
    return Agreement(reviewers, pairs)
