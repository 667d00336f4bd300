"""The timeline strip: turns on a time axis, each mark a link, nothing from events unescaped."""

import xml.etree.ElementTree as ET
from datetime import datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from eventviewer.trajectory.timeline import COLOURS, HEIGHT, MAX_MARKS, WIDTH, Mark, timeline_svg

SVG = "{http://www.w3.org/2000/svg}"


def marks(n, tone="tool"):
    return [Mark(f"e{i}", f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}", tone, f"turn {i}") for i in range(n)]


def test_each_turn_is_a_mark_linking_to_it():
    svg = ET.fromstring(timeline_svg(marks(3), lambda eid: f"?at={eid}#event-{eid}"))
    links = [a.get("href") for a in svg.iter(f"{SVG}a")]
    assert links == ["?at=e0#event-e0", "?at=e1#event-e1", "?at=e2#event-e2"]


def test_many_turns_share_marks_and_the_worst_colours_a_slice():
    many = marks(MAX_MARKS * 3)
    many[5] = Mark("bad", many[5].timestamp, "mismatched", "the broken one")
    svg = ET.fromstring(timeline_svg(many, lambda eid: f"?at={eid}"))
    anchors = list(svg.iter(f"{SVG}a"))
    assert len(anchors) == MAX_MARKS
    assert anchors[1].get("href") == "?at=bad" and "tone-mismatched" in anchors[1].get("class")


def test_event_content_is_escaped():
    hostile = [
        Mark('"><script>x</script>', "2026-01-01T00:00:00", "user", "<b>&"),
        Mark("b", "2026-01-01T00:00:01", "user", "ok"),
    ]
    text = timeline_svg(hostile, lambda eid: f"?at={eid}")
    assert "<script>" not in text and "<b>" not in text
    ET.fromstring(text)  # still well-formed


def test_no_strip_without_two_times():
    assert timeline_svg([Mark("a", "not a time", "user", "x"), Mark("b", "", "user", "y")], str) == ""


def rects(svg):
    return [
        (float(r.get("x")), float(r.get("y")), float(r.get("width")), float(r.get("height")))
        for r in svg.iter(f"{SVG}rect")
    ]


def test_marks_sit_on_the_axis_in_time_order_inside_the_strip():
    text = timeline_svg(marks(4), str)
    svg = ET.fromstring(text)
    assert svg.get("viewBox") == f"0 0 {WIDTH} {HEIGHT}"
    (axis,) = svg.iter(f"{SVG}line")
    assert axis.get("y1") == axis.get("y2") == str(HEIGHT - 3) and axis.get("x2") == str(WIDTH)
    shown = rects(svg)
    assert [x for x, *_ in shown] == [0.0, 250.0, 500.0, 750.0]  # evenly spaced turns, evenly spaced marks
    for x, y, width, height in shown:
        assert y + height == HEIGHT - 3 and y >= 0 and x + width <= WIDTH
    assert not (svg.text or "").strip() and all(not (e.tail or "").strip() for e in svg)


def test_a_turn_is_placed_by_its_time():
    times = ["2026-01-01T00:00:00", "2026-01-01T00:00:01", "2026-01-01T00:01:40"]
    svg = ET.fromstring(timeline_svg([Mark(str(i), t, "user", "x") for i, t in enumerate(times)], str))
    assert [x for x, *_ in rects(svg)] == [0.0, 666.7]  # the first two share the first third of the axis


def test_few_turns_are_ticks_and_many_never_overlap():
    (first, _) = rects(ET.fromstring(timeline_svg(marks(2), str)))
    assert first[2] == 8.0  # a tick, not a bar across half the strip
    shown = rects(ET.fromstring(timeline_svg(marks(MAX_MARKS), str)))
    assert len(shown) == MAX_MARKS
    for (x, _, width, _), (next_x, *_) in zip(shown, shown[1:], strict=False):
        assert x + width == next_x - 0.5  # each fills its slice of the axis but for a thin gap


def test_a_mark_names_its_turn_or_how_many_it_stands_for():
    text = timeline_svg(marks(2), str)
    assert [t.text for t in ET.fromstring(text).iter(f"{SVG}title")] == ["turn 0", "turn 1"]
    same_time = [Mark(f"e{i}", "2026-01-01T00:00:00", "tool", f"turn {i}") for i in range(3)]
    same_time.append(Mark("last", "2026-01-01T00:00:05", "tool", "the end"))
    titles = [t.text for t in ET.fromstring(timeline_svg(same_time, str)).iter(f"{SVG}title")]
    assert titles == ["3 turns, from: turn 0", "the end"]


def test_a_long_label_is_cut():
    long = [Mark("a", "2026-01-01T00:00:00", "user", "x" * 500), Mark("b", "2026-01-01T00:00:01", "user", "y")]
    (title, _) = ET.fromstring(timeline_svg(long, str)).iter(f"{SVG}title")
    assert title.text == "x" * 200


def test_a_mark_of_an_unknown_tone_is_grey():
    odd = [Mark("a", "2026-01-01T00:00:00", "weird", "x"), Mark("b", "2026-01-01T00:00:01", "user", "y")]
    svg = ET.fromstring(timeline_svg(odd, str))
    first = next(svg.iter(f"{SVG}a"))
    assert first.get("class") == "mark tone-other"
    assert next(first.iter(f"{SVG}rect")).get("fill") == COLOURS["other"]


def test_a_known_tone_beats_an_unknown_one_in_a_slice():
    same = [Mark("a", "2026-01-01T00:00:00", "weird", "x"), Mark("b", "2026-01-01T00:00:00", "other", "y")]
    same.append(Mark("c", "2026-01-01T00:00:09", "user", "z"))
    first = next(ET.fromstring(timeline_svg(same, str)).iter(f"{SVG}a"))
    assert first.get("href") == "b"


OFFSETS = st.builds(
    timezone, st.timedeltas(min_value=-timedelta(hours=23, minutes=59), max_value=timedelta(hours=23, minutes=59))
)
# Any moment, the first and last days that can be written most often (where clocks overflow).
MOMENTS = st.datetimes(max_value=datetime(1, 1, 2)) | st.datetimes(min_value=datetime(9999, 12, 30)) | st.datetimes()
ISO = st.builds(lambda moment, zone: moment.replace(tzinfo=zone).isoformat(), MOMENTS, st.none() | OFFSETS)


@settings(max_examples=300)
@given(st.lists(ISO | st.text(max_size=64), min_size=2, max_size=6))
def test_any_timestamp_an_import_accepts_draws_a_strip(stamps):
    """Years 1 to 9999, any offset, or no time at all (an import takes any text of up
    to 64 characters): the strip is drawn, never an error."""
    svg = timeline_svg([Mark(f"e{i}", stamp, "tool", "t") for i, stamp in enumerate(stamps)], lambda eid: eid)
    assert svg == "" or ET.fromstring(svg).tag == f"{SVG}svg"


def test_the_first_and_last_years_are_on_one_axis():
    stamps = ["0001-01-01T00:00:00", "2026-01-01T00:00:00", "9999-12-31T23:59:59.999999"]
    svg = ET.fromstring(timeline_svg([Mark(f"e{i}", s, "tool", "t") for i, s in enumerate(stamps)], lambda eid: eid))
    xs = [float(rect.get("x")) for rect in svg.iter(f"{SVG}rect")]
    assert xs == [0, round(2 * WIDTH / 3, 1)]  # years 1 and 2026 share the first of three slices
