"""The Markdown review of a branch whose event ids and texts are hostile: no tag survives
rendering (the app's own renderer, and one that passes raw HTML through, as a reader's
might), and plain text is not littered with escapes."""

from __future__ import annotations

import re
from urllib.parse import quote

from markdown_it import MarkdownIt

from eventviewer.imports.importer import import_paths
from eventviewer.templatetags.eventviewer import markdown

from .conftest import action, message, observation

HOSTILE_ID = "m) <img src=x onerror=alert(1)>"


def review(client, folder, events, leaf: str) -> str:
    (result,) = import_paths([(folder(events, {"leaf_event_id": leaf}), "x")])
    response = client.get(f"{result.conversation.get_absolute_url()}export/", {"format": "markdown", "leaf": leaf})
    assert response.status_code == 200
    return b"".join(response.streaming_content).decode()


def test_a_hostile_event_id_leaves_no_tag_in_the_rendered_review(db, client, open_site, folder):
    events = [
        message(HOSTILE_ID, None, "Create calc.py."),
        action("a1 <b>", HOSTILE_ID, "c1"),
    ]
    text = review(client, folder, events, "a1 <b>")
    for html in (str(markdown(text)), MarkdownIt("commonmark", {"html": True}).render(text)):
        assert not re.search(r"<(img|b)\b", html), html
    assert f"#event-{quote(HOSTILE_ID, safe='')})" in text
    assert "pending: a1 \\<b> has no result on this branch" in text


def test_the_review_does_not_escape_plain_punctuation(db, client, open_site, folder):
    events = [
        message("m-1", None, "go"),
        action("a-1", "m-1", "c1"),
        observation("o-1", "a-1", "a-1", "c1", text="ok"),
        action("a-2", "o-1", "c2"),
    ]
    text = review(client, folder, events, "a-2")
    assert "pending: a-2 has no result on this branch" in text
    assert "\\-" not in text and "\\." not in text
