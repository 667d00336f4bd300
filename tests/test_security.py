"""Hostile content stays text: in pages, partials, SVG, the event page and the admin."""

from __future__ import annotations

from html.parser import HTMLParser
from xml.etree import ElementTree

import pytest

from eventviewer.imports.importer import import_paths
from eventviewer.templatetags.eventviewer import markdown

from .hostile import HOSTILE_ID, MARK, write_hostile

pytestmark = pytest.mark.django_db


class Markup(HTMLParser):
    """Every element and attribute the browser would build from a page."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def assert_inert(html: str) -> None:
    parser = Markup()
    parser.feed(html)
    for tag, attrs in parser.tags:
        assert tag not in ("iframe", "object", "embed"), tag
        if tag == "script":
            src = attrs.get("src") or ""
            assert src.startswith("/") and not src.startswith("//"), attrs  # our own files only
        if tag == "img":
            assert not attrs.get("src", "x").startswith(("x", "javascript:")), attrs
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            if name in ("href", "src", "xlink:href", "action", "hx-get"):
                assert not (value or "").strip().lower().startswith(("javascript:", "data:text")), (tag, name, value)
    assert f"<script>{MARK}" not in html


@pytest.fixture
def hostile(tmp_path, client, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = False
    (result,) = import_paths([(write_hostile(tmp_path), "hostile.jsonl")])
    return result.conversation


def test_the_hostile_conversation_imports_and_pairs_up(hostile):
    reading = hostile.read_path(hostile.head)
    assert reading.pairing.pending == [] and reading.pairing.mismatched == {}
    assert HOSTILE_ID in [e.event_id for e in reading.path]


def test_every_page_renders_hostile_content_as_text(client, hostile):
    base = hostile.get_absolute_url()
    urls = ["/", f"/?q={MARK}", base, f"{base}?leaf={hostile.head.event_id}", "/import/"]
    urls += [f"{base}events/{e.event_id}/" for e in hostile.events.all()]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        assert_inert(response.content.decode())
    page = client.get(base).content.decode()
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page


def test_htmx_partials_render_hostile_content_as_text(client, hostile):
    response = client.get(hostile.get_absolute_url(), {"leaf": HOSTILE_ID}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert "<html" not in html
    assert_inert(html)


def test_hostile_ids_are_escaped_in_anchors_and_urls(client, hostile):
    html = client.get(hostile.get_absolute_url()).content.decode()
    assert 'id="event-ev-&quot;&gt;&lt;img src=x onerror=&quot;window.__pwned=1&quot;&gt;"' in html
    assert "events/ev-%22%3E%3Cimg%20src%3Dx%20onerror%3D%22window.__pwned%3D1%22%3E/" in html


def test_the_standalone_svg_has_no_active_content(client, hostile):
    response = client.get(f"{hostile.get_absolute_url()}diagram.svg", {"leaf": HOSTILE_ID})
    root = ElementTree.fromstring(response.content)
    for element in root.iter():
        tag = element.tag.rsplit("}", 1)[-1]
        assert tag not in ("script", "foreignObject", "iframe"), tag
        for name, value in element.attrib.items():
            assert not name.rsplit("}", 1)[-1].startswith("on"), name
            if name.endswith("href"):
                assert value.startswith("/"), value
    assert "script-src" not in response["Content-Security-Policy"]


def test_the_admin_shows_hostile_content_as_text(admin_client, hostile):
    event = hostile.events.get(event_id=HOSTILE_ID)
    for url in (
        "/admin/eventviewer/conversation/",
        f"/admin/eventviewer/conversation/{hostile.pk}/change/",
        "/admin/eventviewer/event/",
        f"/admin/eventviewer/event/{event.pk}/change/",
    ):
        response = admin_client.get(url)
        assert response.status_code == 200, url
        assert_inert(response.content.decode())


def test_the_admin_needs_a_staff_login(client, hostile):
    response = client.get("/admin/eventviewer/event/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


@pytest.mark.parametrize(
    ("source", "forbidden"),
    [
        ("<script>alert(1)</script>", "<script"),
        ('<img src=x onerror="alert(1)">', "<img"),
        ("[x](javascript:alert(1))", 'href="javascript'),
        ("[x](JaVaScRiPt:alert(1))", 'href="JaVaScRiPt'),
        ("[x](vbscript:msgbox)", 'href="vbscript'),
        ("[x](data:text/html;base64,PHNjcmlwdD4=)", 'href="data:'),
        ("![x](javascript:alert(1))", 'src="javascript'),
        ("<a href='https://evil'>x</a>", "<a href='https"),
    ],
)
def test_markdown_drops_raw_html_and_unsafe_links(source, forbidden):
    assert forbidden not in markdown(source)


@pytest.mark.parametrize(
    "source",
    [
        "[docs](https://example.com)",
        '[docs](https://example.com "the docs")',
        "<https://example.com>",
        "[docs][1]\n\n[1]: https://example.com",
        "* a list with [docs](https://example.com) in **bold [docs](https://example.com)**",
    ],
)
def test_markdown_keeps_safe_links_without_referrer(source):
    parser = Markup()
    parser.feed(markdown(source))
    links = [attrs for tag, attrs in parser.tags if tag == "a"]
    assert links
    for attrs in links:
        assert attrs["href"] == "https://example.com"
        assert attrs["rel"] == "nofollow noopener noreferrer"
