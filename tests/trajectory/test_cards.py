"""What a card holds of an event's JSON, and how far: bounded texts, lists and JSON, each
saying what it left out."""

from __future__ import annotations

import json

import pytest

from eventviewer.trajectory.cards import (
    FULL_TEXT_CHARS,
    JSON_CHARS,
    MAX_IMAGE_CHARS,
    MAX_ITEMS,
    PREVIEW_CHARS,
    PREVIEW_LINES,
    TEXT_CHARS,
    Card,
    Image,
    bound,
    command_of,
    cut_text,
    image,
    images,
    items,
    mapping,
    output,
    pretty,
    text_of,
    texts,
    thinking,
    tool_arguments,
)

# The 4x4 red square of the multimodal fixture.
PNG = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR4nGM4IScHRwzEcQCxYxBBO0tjggAAAABJRU5ErkJggg=="
)


def lines(n: int) -> str:
    return "\n".join(f"line {i}" for i in range(n))


def test_short_output_is_shown_whole():
    shown = output(lines(PREVIEW_LINES))
    assert (shown.preview, shown.total_lines, shown.truncated) == (lines(PREVIEW_LINES), PREVIEW_LINES, False)


def test_long_output_shows_its_first_lines_and_counts_them_all():
    shown = output(lines(PREVIEW_LINES + 1))
    assert shown.truncated and shown.total_lines == PREVIEW_LINES + 1
    assert shown.preview == lines(PREVIEW_LINES)
    assert shown.text == lines(PREVIEW_LINES + 1)  # "show all output" has the rest


def test_output_of_few_very_long_lines_is_cut_by_characters():
    shown = output("x" * (PREVIEW_CHARS + 1))
    assert shown.truncated and shown.preview == "x" * PREVIEW_CHARS
    assert not output("x" * PREVIEW_CHARS).truncated


def test_the_event_page_shows_all_output():
    shown = output(lines(PREVIEW_LINES * 3), full=True)
    assert not shown.truncated and shown.preview == lines(PREVIEW_LINES * 3)


def test_pretty_lays_json_out_indented_and_nothing_for_none():
    assert pretty({"a": [1, "b"]}) == '{\n  "a": [\n    1,\n    "b"\n  ]\n}'
    assert pretty(None) == ""
    assert pretty(0) == "0" and pretty([]) == "[]"


def test_pretty_shows_the_first_items_of_a_huge_list_and_counts_the_rest():
    laid_out = json.loads(pretty(list(range(MAX_ITEMS + 1_500)), 10**9))
    assert laid_out[:MAX_ITEMS] == list(range(MAX_ITEMS))
    assert laid_out[MAX_ITEMS:] == ["… 1,500 more items"]
    assert json.loads(pretty(list(range(MAX_ITEMS)), 10**9)) == list(range(MAX_ITEMS))


def test_pretty_shows_the_first_keys_of_a_huge_object_and_counts_the_rest():
    laid_out = json.loads(pretty({f"k{i}": {"v": [i]} for i in range(MAX_ITEMS + 2)}, 10**9))
    assert list(laid_out)[:3] == ["k0", "k1", "k2"] and laid_out["k0"] == {"v": [0]}
    assert len(laid_out) == MAX_ITEMS + 1 and laid_out["…"] == "2 more keys"
    assert "…" not in json.loads(pretty({f"k{i}": i for i in range(MAX_ITEMS)}, 10**9))


def test_pretty_bounds_lists_nested_a_few_levels_down():
    nested = {"a": [{"b": list(range(MAX_ITEMS + 1))}]}
    assert json.loads(pretty(nested, 10**9))["a"][0]["b"][-1] == "… 1 more items"


def nested(value: object, levels: int, key: str | int = 0) -> object:
    """``value`` inside ``levels`` lists (key 0) or objects (a string key)."""
    for _ in range(levels):
        value = [value] if key == 0 else {key: value}
    return value


def unnest(value: object, levels: int, key: str | int = 0) -> object:
    for _ in range(levels):
        value = value[key]  # type: ignore[index]
    return value


@pytest.mark.parametrize("key", [0, "k"])
def test_pretty_bounds_lists_eight_levels_down_and_leaves_deeper_ones(key):
    long = list(range(MAX_ITEMS + 1))
    assert unnest(json.loads(pretty(nested(long, 8, key), 10**9)), 8, key)[-1] == "… 1 more items"
    assert unnest(json.loads(pretty(nested(long, 9, key), 10**9)), 9, key) == long  # deeper than the bounding looks


@pytest.mark.parametrize("key", [0, "k"])
def test_a_value_nested_thousands_deep_is_described_without_a_crash(key):
    assert pretty(nested(1, 5_000, key)).startswith("(nested too deeply")


def test_pretty_cuts_long_json_and_marks_the_cut():
    text = pretty("x" * JSON_CHARS)
    assert text == '"' + "x" * (JSON_CHARS - 1) + "\n…"
    assert pretty("x" * (JSON_CHARS - 2)) == '"' + "x" * (JSON_CHARS - 2) + '"'
    assert pretty("abcdef", 3) == '"ab\n…'


def test_json_nested_too_deeply_is_described_not_laid_out():
    deep: object = 1
    for _ in range(300):
        deep = [deep]
    assert pretty(deep) == "(nested too deeply to lay out here: see the raw JSON on the event page)"


def test_cut_text_marks_a_cut():
    assert cut_text("abcdef", 6) == ("abcdef", False)
    assert cut_text("abcdef", 5) == ("abcde …", True)


def test_untrusted_json_of_the_wrong_shape_reads_as_empty():
    data = {"obj": {"a": 1}, "list": [1], "str": "x"}
    assert mapping(data, "obj") == {"a": 1} and mapping(data, "list") == {} and mapping(data, "none") == {}
    assert items(data, "list") == [1] and items(data, "obj") == [] and items(data, "none") == []
    assert text_of("x") == "x" and text_of(None) == "" and text_of(3) == "3" and text_of(False) == "False"


def test_texts_joins_the_text_parts_and_describes_images():
    content = [
        {"type": "text", "text": "one"},
        "not a part",
        {"type": "image", "image_urls": [PNG]},
        {"type": "image", "image_urls": [PNG, PNG]},
        {"type": "image"},
        {"type": "text", "text": "two"},
        {"type": "other"},
    ]
    assert texts(content) == "one\n\n[image: 1]\n\n[images: 2]\n\n[images: 0]\n\ntwo"
    assert texts("plain") == "plain"
    assert texts(None) == "" and texts({"text": "x"}) == ""


def test_texts_shows_the_first_parts_of_a_long_content_list():
    content = [{"type": "text", "text": str(i)} for i in range(5)]
    assert texts(content, 3) == "0\n\n1\n\n2\n\n[… 2 more parts]"
    assert texts(content, 5) == "0\n\n1\n\n2\n\n3\n\n4"
    assert texts([{"text": "x"}] * (MAX_ITEMS + 1_000)).endswith("x\n\n[… 1,000 more parts]")


def test_a_small_raster_data_url_is_shown_inline():
    assert image(PNG) == Image(src=PNG)
    for kind in ("jpeg", "gif", "webp"):
        assert image(f"data:image/{kind};base64,AAAA").src


@pytest.mark.parametrize(
    ("url", "note"),
    [
        (None, "an image without a usable address"),
        (3, "an image without a usable address"),
        ("https://example.com/a.png", "an image at https://example.com/a.png"),
        ("data:image/svg+xml;base64,PHN2Zz4=", "an embedded image/svg+xml, not shown"),
        ("data:image/svg+xml;charset=utf-8;base64,PHN2Zz4=", "an embedded image/svg+xml, not shown"),
        ("data:image/png;base64,<script>", "an embedded image/png, not shown"),
        ("data:;base64,AAAA", "an embedded file, not shown"),
        ("data:text/html,<b>", "an embedded text/html,<b>, not shown"),
    ],
)
def test_any_other_image_is_only_described(url, note):
    assert image(url) == Image(note=note)


def test_a_described_address_is_bounded():
    assert image("https://e.com/" + "a" * 1000).note == "an image at https://e.com/" + "a" * 186
    assert image("data:" + "x" * 100).note == "an embedded " + "x" * 40 + ", not shown"


def test_an_image_too_big_to_show_says_its_size():
    url = "data:image/png;base64," + "A" * MAX_IMAGE_CHARS
    assert image(url) == Image(note="an image of 1,536 KB, too big to show here")
    exactly = "data:image/png;base64," + "A" * (MAX_IMAGE_CHARS - 22)
    assert image(exactly).src == exactly


def test_images_are_read_from_the_image_parts_only():
    content = [
        {"type": "text", "text": "see", "image_urls": [PNG]},
        {"type": "image", "image_urls": [PNG, "https://e.com/b.png"]},
        {"type": "image", "image_urls": "not a list"},
        "junk",
    ]
    assert images(content) == [Image(src=PNG), Image(note="an image at https://e.com/b.png")]
    assert images("text") == [] and images(None) == []


def test_images_are_bounded_across_parts():
    content = [{"type": "image", "image_urls": [PNG] * 150}] * 3
    assert len(images(content)) == MAX_ITEMS
    assert len(images([{"type": "image", "image_urls": [PNG] * (MAX_ITEMS + 5)}])) == MAX_ITEMS


def test_thinking_keeps_the_non_empty_blocks():
    data = {"thinking_blocks": [{"thinking": "first"}, {"thinking": ""}, "junk", {"other": 1}, {"thinking": 2}]}
    assert thinking(data) == ["first", "2"]
    assert thinking({"thinking_blocks": "x"}) == [] and thinking({}) == []
    assert len(thinking({"thinking_blocks": [{"thinking": "t"}] * (MAX_ITEMS + 1)})) == MAX_ITEMS


def test_tool_arguments_are_laid_out_as_json():
    data = {"tool_call": {"arguments": '{"command": "ls", "path": "/w"}'}}
    assert tool_arguments(data) == '{\n  "command": "ls",\n  "path": "/w"\n}'
    assert tool_arguments({"tool_call": {"arguments": {"a": 1}}}) == '{\n  "a": 1\n}'
    as_object = tool_arguments({"tool_call": {"arguments": {"a": "x" * JSON_CHARS}}})
    assert as_object.endswith('"\n}')  # the event page's limit, not the conversation page's


def test_tool_arguments_that_are_not_json_are_shown_as_the_model_wrote_them():
    assert tool_arguments({"tool_call": {"arguments": '{"command": "ls"'}}) == '{"command": "ls"'
    deep = "[" * 100_000 + "]" * 100_000
    assert tool_arguments({"tool_call": {"arguments": deep}}) == deep


def test_tool_arguments_up_to_the_event_pages_limit_are_laid_out():
    exactly = json.dumps({"a": "x" * (FULL_TEXT_CHARS - 9)})
    assert len(exactly) == FULL_TEXT_CHARS
    assert tool_arguments({"tool_call": {"arguments": exactly}}).startswith('{\n  "a": "xxx')


def test_huge_tool_arguments_are_cut_at_the_event_pages_limit():
    long = '"' + "x" * FULL_TEXT_CHARS + '"'
    assert tool_arguments({"tool_call": {"arguments": long}}) == long[:FULL_TEXT_CHARS]
    long_json = {"tool_call": {"arguments": json.dumps({"a": "x" * (FULL_TEXT_CHARS - 100)})}}
    assert tool_arguments(long_json).endswith("\n}")  # not cut at the conversation page's 20,000


def test_without_a_tool_call_the_arguments_are_the_actions_fields():
    data = {"action": {"kind": "TerminalAction", "command": "ls"}, "tool_call": "junk"}
    assert tool_arguments(data) == '{\n  "command": "ls"\n}'
    assert tool_arguments({"action": "junk"}) == "" and tool_arguments({}) == ""
    big = {"action": {"kind": "K", "text": "x" * (JSON_CHARS * 2)}}
    assert len(tool_arguments(big)) > JSON_CHARS * 2


def test_a_command_names_its_path_when_it_has_one():
    assert command_of({"command": "view", "path": "/w/a.py"}) == "view /w/a.py"
    assert command_of({"command": "ls -la"}) == "ls -la"
    assert command_of({"command": "ls", "path": 3}) == "ls"
    assert command_of({"command": ["ls"], "path": "/w"}) == ""


def test_the_conversation_page_cuts_long_texts_and_says_so():
    long = "x" * (TEXT_CHARS + 1)
    for name in ("text", "reasoning", "error"):
        card = bound(Card("k", **{name: long}), full=False)
        assert getattr(card, name) == "x" * TEXT_CHARS + " …" and card.cut
        assert not bound(Card("k", **{name: "x" * TEXT_CHARS}), full=False).cut


def test_the_event_page_shows_texts_up_to_its_own_limit():
    card = bound(Card("k", text="x" * (TEXT_CHARS + 1)), full=True)
    assert card.text == "x" * (TEXT_CHARS + 1) and not card.cut
    card = bound(Card("k", text="x" * (FULL_TEXT_CHARS + 1)), full=True)
    assert card.text == "x" * FULL_TEXT_CHARS + " …" and card.cut


def test_long_arguments_show_their_first_lines_on_the_conversation_page_only():
    card = bound(Card("k", arguments=lines(PREVIEW_LINES + 5)), full=False)
    assert card.arguments == lines(PREVIEW_LINES) + "\n…" and card.cut
    card = bound(Card("k", arguments=lines(PREVIEW_LINES + 5)), full=True)
    assert card.arguments == lines(PREVIEW_LINES + 5) and not card.cut
    assert not bound(Card("k", arguments=lines(PREVIEW_LINES)), full=False).cut


def test_a_card_cut_before_bounding_stays_cut():
    assert bound(Card("k", cut=True), full=True).cut
