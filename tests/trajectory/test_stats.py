"""Wilson intervals and McNemar's exact test against published values."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from eventviewer.trajectory import stats


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [
        # Newcombe (1998), Statistics in Medicine 17:857, table I, method 3.
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
        (29, 29, 0.8830, 1.0),
    ],
)
def test_the_wilson_interval_matches_newcombes_table(successes, trials, low, high):
    found = stats.wilson(successes, trials)
    assert found == pytest.approx((low, high), abs=5e-5)


def test_no_trials_say_nothing_and_impossible_counts_are_refused():
    assert stats.wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="3 successes out of 2"):
        stats.wilson(3, 2)


@given(st.integers(0, 500), st.integers(1, 500))
def test_the_interval_holds_the_rate(successes, trials):
    successes = min(successes, trials)
    low, high = stats.wilson(successes, trials)
    assert 0.0 <= low <= successes / trials <= high <= 1.0


@pytest.mark.parametrize(
    ("fixed", "broken", "p"),
    [
        # scipy.stats.binomtest(k, n, 0.5).pvalue, statsmodels mcnemar(exact=True)
        (0, 0, 1.0),
        (1, 0, 1.0),
        (5, 0, 0.0625),
        (6, 0, 0.03125),
        (10, 2, 0.0385742),
        (3, 12, 0.0351563),
        (7, 7, 1.0),
        (1, 4, 0.375),
    ],
)
def test_mcnemars_exact_test_matches_the_binomial_test(fixed, broken, p):
    assert stats.mcnemar_exact(fixed, broken) == pytest.approx(p, abs=1e-6)


@given(st.integers(0, 200), st.integers(0, 200))
def test_mcnemar_is_symmetric_and_a_probability(fixed, broken):
    p = stats.mcnemar_exact(fixed, broken)
    assert p == stats.mcnemar_exact(broken, fixed)
    assert 0.0 < p <= 1.0 and (fixed != broken or math.isclose(p, 1.0))


def test_the_median():
    assert stats.median([]) is None
    assert stats.median([3, 1, 2]) == 2
    assert stats.median([4, 1, 2, 3]) == 2.5
