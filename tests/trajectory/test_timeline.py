"""The timeline strip: turns on a time axis, each mark a link, nothing from events unescaped."""

import xml.etree.ElementTree as ET

from eventviewer.trajectory.timeline import MAX_MARKS, Mark, timeline_svg

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
