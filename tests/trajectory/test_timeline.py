"""The timeline strip: turns on a time axis, each mark a link, nothing from events unescaped."""

import xml.etree.ElementTree as ET
from datetime import datetime, timedelta, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from eventviewer.trajectory.timeline import (
    COLOURS,
    HEIGHT,
    MAX_MARKS,
    WIDTH,
    Axis,
    Mark,
    elapsed,
    spoken_duration,
    timeline_axis,
    timeline_svg,
)

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
        assert abs(x + width - (next_x - 0.5)) <= 0.11  # each fills its slice of the axis but for a thin gap


def test_a_mark_names_its_turn_or_how_many_it_stands_for():
    text = timeline_svg(marks(2), str)
    titles = [t.text for t in ET.fromstring(text).iter(f"{SVG}title")]
    assert titles == ["turn 0 · at +0.0 s, took 1.0 s", "turn 1 · at +1.0 s"]  # the last: until when, unknown
    same_time = [Mark(f"e{i}", "2026-01-01T00:00:00", "tool", f"turn {i}") for i in range(3)]
    same_time.append(Mark("last", "2026-01-01T00:00:05", "tool", "the end"))
    titles = [t.text for t in ET.fromstring(timeline_svg(same_time, str)).iter(f"{SVG}title")]
    assert titles == ["3 turns at +0.0 s to +5.0 s (5.0 s), from: turn 0", "the end · at +5.0 s"]


def test_a_long_label_is_cut():
    long = [Mark("a", "2026-01-01T00:00:00", "user", "x" * 500), Mark("b", "2026-01-01T00:00:01", "user", "y")]
    (title, _) = ET.fromstring(timeline_svg(long, str)).iter(f"{SVG}title")
    assert title.text == "x" * 200 + " · at +0.0 s, took 1.0 s"


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


# The axis and the durations


def at(*times: str) -> list[Mark]:
    return [Mark(f"e{i}", t, "tool", f"turn {i}") for i, t in enumerate(times)]


def test_the_axis_starts_at_the_first_turns_clock_time_and_counts_time_since_it_at_each_quarter():
    axis = timeline_axis(at("2026-04-30T17:50:02", "2026-04-30T17:52:00", "2026-04-30T17:57:31"))
    assert axis == Axis("2026-04-30T17:50:02", ("17:50:02", "+1:52", "+3:44", "+5:36", "+7:29"), "7 min 29 s")


def test_an_axis_under_a_minute_counts_tenths_of_seconds_and_over_an_hour_hours():
    assert timeline_axis(at("2026-01-01T00:00:00", "2026-01-01T00:00:02")).labels[1:] == (
        "+0.5 s",
        "+1.0 s",
        "+1.5 s",
        "+2.0 s",
    )
    assert timeline_axis(at("2026-01-01T00:00:00", "2026-01-01T02:00:00")).labels[-1] == "+2:00:00"
    assert timeline_axis(at("2026-01-01T00:00:00", "2026-01-01T02:00:00")).duration == "2 h 0 min"


def test_an_axis_in_another_time_zone_reads_as_the_cards_do_in_utc():
    assert timeline_axis(at("2026-01-01T10:00:00+02:00", "2026-01-01T10:00:09+02:00")).labels[0] == "08:00:00"


def test_no_axis_without_a_strip():
    assert timeline_axis(at("2026-01-01T00:00:00", "later")) is None
    assert timeline_axis([]) is None


def test_turns_out_of_order_still_give_the_axis_its_ends():
    axis = timeline_axis(at("2026-01-01T00:01:00", "2026-01-01T00:00:00", "2026-01-01T00:00:30"))
    assert axis is not None and axis.labels[0] == "00:00:00" and axis.duration == "1 min 0 s"


def test_durations_and_elapsed_times_read_as_people_say_them():
    assert [spoken_duration(s) for s in (0.7, 59.94, 449, 7500)] == ["0.7 s", "59.9 s", "7 min 29 s", "2 h 5 min"]
    assert [elapsed(s, 3600) for s in (0, 61, 3599, 3661)] == ["+0:00", "+1:01", "+59:59", "+1:01:01"]


def test_a_long_run_is_binned_each_bin_saying_how_many_turns_and_how_long():
    many = [
        Mark(f"e{i}", f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}", "tool", f"turn {i}") for i in range(MAX_MARKS * 4)
    ]
    titles = [t.text for t in ET.fromstring(timeline_svg(many, str)).iter(f"{SVG}title")]
    assert len(titles) == MAX_MARKS
    assert titles[0] == "4 turns at +0:00 to +0:04 (4.0 s), from: turn 0"
    assert sum(int(t.split()[0]) for t in titles) == MAX_MARKS * 4  # every turn in one bin


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
