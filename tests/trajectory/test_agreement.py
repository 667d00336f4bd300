"""Agreement between reviewers: Cohen's kappa per pair, checked by hand and at its edges."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from eventviewer.trajectory.agreement import MIN_OVERLAP, agreement, cohen_kappa, strength


def table(cells: dict[tuple[str, str], int]) -> list[tuple[str, str]]:
    """A contingency table as the pairs of verdicts it counts."""
    return [pair for pair, count in cells.items() for _ in range(count)]


def test_the_two_by_two_textbook_table_has_kappa_0_4():
    # Wikipedia, "Cohen's kappa", the worked example: 50 items, 20 yes-yes, 5 yes-no,
    # 10 no-yes, 15 no-no. p_o = 35/50 = 0.7; p_e = (25*30 + 25*20) / 50² = 0.5;
    # kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
    pairs = table({("pass", "pass"): 20, ("pass", "fail"): 5, ("fail", "pass"): 10, ("fail", "fail"): 15})
    assert cohen_kappa(pairs) == Fraction(2, 5)


def test_fleiss_three_category_table_has_kappa_23_over_34():
    # Fleiss, Statistical Methods for Rates and Proportions: 100 patients, three diagnoses.
    # p_o = (75 + 4 + 10) / 100 = 0.89; the margins are A 80/10/10, B 80/5/15, so
    # p_e = (80*80 + 10*5 + 10*15) / 100² = 0.66; kappa = 0.23 / 0.34 = 23/34 ≈ 0.68.
    cells = {
        ("pass", "pass"): 75,
        ("pass", "fail"): 1,
        ("pass", "unsure"): 4,
        ("fail", "pass"): 5,
        ("fail", "fail"): 4,
        ("fail", "unsure"): 1,
        ("unsure", "unsure"): 10,
    }
    assert cohen_kappa(table(cells)) == Fraction(23, 34)
    assert strength(23 / 34) == "substantial"


def test_full_agreement_over_two_verdicts_is_kappa_1():
    assert cohen_kappa([("pass", "pass"), ("fail", "fail"), ("pass", "pass")]) == 1


def test_all_agreeing_on_one_verdict_leaves_kappa_undefined():
    # p_o = p_e = 1: kappa is 0 / 0, not 1 and not 0.
    assert cohen_kappa([("pass", "pass")] * 6) is None
    assert cohen_kappa([]) is None


def test_one_reviewer_always_saying_one_thing_is_kappa_0_not_undefined():
    # A's verdicts carry no information about B's: p_o equals p_e.
    assert cohen_kappa([("pass", "pass"), ("pass", "fail"), ("pass", "pass"), ("pass", "fail")]) == 0


def test_systematic_disagreement_is_negative_and_poor():
    kappa = cohen_kappa([("pass", "fail"), ("fail", "pass")] * 3)
    assert kappa == -1 and strength(float(kappa)) == "poor"


@pytest.mark.parametrize(
    ("kappa", "word"),
    [(-0.1, "poor"), (0.0, "slight"), (0.2, "slight"), (0.3, "fair"), (0.5, "moderate"), (0.7, "substantial")]
    + [(0.81, "almost perfect"), (1.0, "almost perfect")],
)
def test_landis_and_koch_name_each_band(kappa, word):
    assert strength(kappa) == word


VERDICTS = st.sampled_from(["pass", "fail", "unsure"])


@given(st.lists(st.tuples(VERDICTS, VERDICTS), min_size=1, max_size=40))
def test_kappa_matches_the_textbook_formula_in_floats_and_is_symmetric(pairs):
    n = len(pairs)
    p_o = sum(a == b for a, b in pairs) / n
    p_e = sum(
        (sum(a == v for a, _ in pairs) / n) * (sum(b == v for _, b in pairs) / n) for v in ("pass", "fail", "unsure")
    )
    kappa = cohen_kappa(pairs)
    if kappa is None:
        assert p_e == pytest.approx(1)
        assert p_o == 1
    else:
        assert float(kappa) == pytest.approx((p_o - p_e) / (1 - p_e))
        assert -1 <= kappa <= 1
    assert cohen_kappa([(b, a) for a, b in pairs]) == kappa


def test_two_reviewers_are_compared_over_the_items_both_judged_only():
    verdicts = [(i, "ann", "pass" if i % 2 else "fail") for i in range(10)]
    verdicts += [(i, "bob", "pass" if i % 2 else "fail") for i in range(4, 14)]  # 4..9 in common
    found = agreement(verdicts)
    assert found.reviewers == ["ann", "bob"] and found.shown
    (pair,) = found.pairs
    assert (pair.a, pair.b, pair.both, pair.agreed, pair.kappa, pair.raw) == ("ann", "bob", 6, 6, 1, 1.0)
    assert pair.enough and pair.strength == "almost perfect"


def test_a_pair_with_little_overlap_is_not_enough():
    verdicts = [(i, who, "pass" if i else "fail") for i in range(MIN_OVERLAP - 1) for who in ("ann", "bob")]
    (pair,) = agreement(verdicts).pairs
    assert pair.both == MIN_OVERLAP - 1 and not pair.enough


def test_a_pair_that_agrees_on_one_verdict_says_which():
    (pair,) = agreement([(i, who, "fail") for i in range(6) for who in ("ann", "bob")]).pairs
    assert (pair.kappa, pair.only, pair.raw, pair.strength) == (None, "fail", 1.0, "")


def test_three_reviewers_get_every_pair_that_judged_in_common_most_in_common_first():
    verdicts = [(i, "ann", "pass") for i in range(8)]
    verdicts += [(i, "bob", "fail" if i < 3 else "pass") for i in range(8)]
    verdicts += [(i, "cat", "pass") for i in range(6, 12)]
    verdicts += [(i, "dan", "pass") for i in range(20, 22)]  # judged nothing the others did
    found = agreement(verdicts)
    assert found.reviewers == ["ann", "bob", "cat", "dan"]
    assert [(p.a, p.b, p.both) for p in found.pairs] == [("ann", "bob", 8), ("ann", "cat", 2), ("bob", "cat", 2)]


def test_one_reviewer_is_no_agreement_to_show_and_a_later_verdict_replaces_an_earlier():
    found = agreement([(1, "ann", "pass"), (1, "ann", "fail")])
    assert not found.shown and found.pairs == []
