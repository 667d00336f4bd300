"""The Markdown review escapes what Markdown reads as markup, and only that; every id it
writes into a link is encoded so that nothing after it becomes markup."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from eventviewer.trajectory import export
from eventviewer.trajectory.events import Light
from eventviewer.trajectory.projection import Turn

HOSTILE_ID = "m) <img src=x onerror=alert(1)> [y](javascript:alert(2)) `z` <b>"
# The app's renderer reads Markdown with raw HTML off; a reader's (GitHub's, an editor's)
# may pass it through: the export must hold up under both.
RENDERERS = [
    MarkdownIt("commonmark", {"html": False}).enable("table"),
    MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]),
]


def rendered_text(markdown: str, renderer: MarkdownIt) -> str:
    """What a reader reads of one line of Markdown: its inline text, escapes undone."""
    (inline,) = [t for t in renderer.parse(markdown) if t.type == "inline"]
    assert inline.children is not None
    return "".join(c.content for c in inline.children if c.type in ("text", "code_inline"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Created calc.py.", "Created calc.py."),
        ("4b337be1-8be7-4a8b-902a-2d4d3b151b60", "4b337be1-8be7-4a8b-902a-2d4d3b151b60"),
        ("file_editor (tool: 50%, ok!) {x}", "file_editor (tool: 50%, ok!) {x}"),
        ("https://example.com/a?b=c", "https://example.com/a?b=c"),
        ("R&D, C# and 3.14", "R&D, C# and 3.14"),
        ("*bold* _it_ `code` [l](u)", r"\*bold\* \_it\_ \`code\` \[l\](u)"),
        ("<img src=x>", r"\<img src=x>"),
        ("a | b ~~c~~", r"a \| b \~\~c\~\~"),
        ("&amp; &#60;", r"\&amp; \&#60;"),
        (r"back\slash", r"back\\slash"),
        ("# heading", r"\# heading"),
        ("title #", r"title \#"),
        ("- item", r"\- item"),
        ("> quote", r"\> quote"),
        ("1. first", r"1\. first"),
        ("2) second", r"2\) second"),
    ],
)
def test_escape_touches_only_what_markdown_reads_as_markup(text, expected):
    assert export.escape(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Created calc.py.",
        "*bold* _it_ `code` [l](u)",
        "<img src=x onerror=alert(1)>",
        "&amp; &#60; a | b ~~c~~",
        r"back\slash \* \.",
        "# heading #",
        "- item",
        "1. first",
        "snake_case_name __init__ _x",
        HOSTILE_ID,
    ],
)
@pytest.mark.parametrize("renderer", RENDERERS)
def test_escaped_text_reads_back_as_itself(text, renderer):
    assert rendered_text(f"- {export.escape(text)}", renderer) == text
    assert rendered_text(f"# {export.escape(text)}", renderer) == text


def test_a_hostile_event_id_in_a_review_turn_leaves_no_tag_and_no_second_link():
    event = Light(event_id=HOSTILE_ID, kind="MessageEvent", source="user", role="user")
    turn = Turn(events=[event], visible=True, role="user")

    def link(event_id: str) -> str:
        return f"https://ev.example/c/1/?at={event_id}#event-{event_id}"

    markdown = export.review_turn(1, turn, {HOSTILE_ID: {"kind": "MessageEvent"}}, {}, link)
    for renderer in RENDERERS:
        html = renderer.render(markdown)
        assert not re.search(r"<(img|b|script)\b", html), html
        assert 'href="javascript' not in html
        assert html.count("<a ") == 1
    (href,) = re.findall(r'href="([^"]*)"', RENDERERS[1].render(markdown))
    assert href.endswith(
        "#event-m%29%20%3Cimg%20src=x%20onerror=alert%281%29%3E%20%5By%5D%28javascript:alert%282%29%29%20%60z%60%20%3Cb%3E"
    )


def test_a_link_destination_keeps_a_plain_url_as_it_is():
    url = "http://testserver/c/abc/?leaf=a2&at=m1#event-m1"
    assert export.destination(url) == url
    assert export.destination(export.destination(url + " x")) == url + "%20x"
