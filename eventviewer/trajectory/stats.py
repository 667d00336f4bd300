"""Statistics of an evaluation run: a resolve rate's interval, two runs' paired test, medians."""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.959963984540054  # the standard normal's 97.5th percentile


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default): unlike the normal
    approximation it stays inside [0, 1] and is honest for 0 or all successes."""
    if trials <= 0:
        return (0.0, 1.0)
    if not 0 <= successes <= trials:
        raise ValueError(f"{successes} successes out of {trials} trials")
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    # At 0 or all successes a bound is exact; rounding must not move it off the rate.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return (low, high)


def mcnemar_exact(fixed: int, broken: int) -> float:
    """McNemar's exact test (two-sided) on paired outcomes: ``fixed`` pairs went from
    unresolved to resolved, ``broken`` the other way; the pairs that agree carry no
    information. The p-value of a two-sided binomial test of min(fixed, broken) in
    fixed + broken trials at 1/2, capped at 1."""
    if fixed < 0 or broken < 0:
        raise ValueError("counts cannot be negative")
    n = fixed + broken
    if n == 0:
        return 1.0
    k = min(fixed, broken)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n
    return min(1.0, 2 * tail)


def median(values: Sequence[float]) -> float | None:
    """The median, None of nothing."""
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return None
    middle = n // 2
    return float(ordered[middle]) if n % 2 else (ordered[middle - 1] + ordered[middle]) / 2
