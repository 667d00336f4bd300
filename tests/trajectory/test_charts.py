"""Run charts: every instance in exactly one bar, each bar's range what its link filters."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from eventviewer.trajectory import charts

OUTCOMES = ("resolved", "failed")


@given(st.lists(st.tuples(st.sampled_from(OUTCOMES), st.floats(0, 1e6, allow_nan=False)), min_size=1), st.booleans())
def test_every_value_falls_in_the_one_bar_whose_range_holds_it(values, whole):
    if whole:
        values = [(o, float(int(v))) for o, v in values]
    found = charts.bars(values, OUTCOMES, whole=whole)
    assert sum(bar.total for bar in found) == len(values)
    for _, value in values:
        assert sum(1 for bar in found if bar.low <= value < bar.high) == 1
    assert len(found) <= charts.BARS


def test_whole_numbers_make_whole_ranges_split_by_outcome():
    found = charts.bars([("resolved", 1), ("failed", 1), ("failed", 5), ("resolved", None)], OUTCOMES, whole=True)
    assert [(b.low, b.high, b.counts) for b in found] == [
        (1, 2, {"resolved": 1, "failed": 1}),
        (2, 3, {"resolved": 0, "failed": 0}),
        (3, 4, {"resolved": 0, "failed": 0}),
        (4, 5, {"resolved": 0, "failed": 0}),
        (5, 6, {"resolved": 0, "failed": 1}),
    ]
    assert charts.bars([], OUTCOMES) == []


def test_the_svg_links_each_bar_and_escapes_its_text():
    found = charts.bars([("resolved", 1), ("failed", 3)], OUTCOMES, whole=True)
    drawn = charts.svg('<b>"turns"</b>', found, lambda b: f"?turns={b.low}-{b.high}&x=<y>", lambda b: f"{b.total} <i>")
    assert "<b>" not in drawn and "&lt;b&gt;&quot;turns&quot;&lt;/b&gt;" in drawn
    assert drawn.count('<a href="?turns=') == 2 and "&amp;x=&lt;y&gt;" in drawn
    assert drawn.count('class="outcome-resolved"') == 1 and "<i>" not in drawn
