"""A conversation with a script payload in every field stays text in every page."""

from __future__ import annotations

import json
from urllib.parse import quote_plus

import pytest
from playwright.sync_api import expect

from eventviewer.imports.importer import import_paths

from ..hostile import HOSTILE_ID, MARK, PAYLOADS, hostile_events
from .conftest import assert_not_reloaded, diagram_link, last_event_id, mark_page

pytestmark = pytest.mark.browser

SCRIPT = f"<script>{MARK}</script>"
# A second branch off the event with the hostile id, ending in an event with a hostile id.
SIDE_LEAF = f'side-<script>{MARK}</script>"><img src=x onerror="{MARK}">'


@pytest.fixture
def hostile(demo, tmp_path):
    events = hostile_events()
    events.append(
        {
            "id": SIDE_LEAF,
            "parent_id": HOSTILE_ID,
            "kind": "MessageEvent",
            "source": "user",
            "timestamp": "2026-01-01T00:00:01",
            "llm_message": {"role": "user", "content": [{"type": "text", "text": PAYLOADS[0]}]},
        }
    )
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    (result,) = import_paths([(path, path.name)])
    assert result.conversation.leaf_count == 2
    return result.conversation


def assert_inert(page) -> None:
    """No payload ran or became markup."""
    assert page.evaluate("typeof window.__pwned") == "undefined"
    expect(page.locator('img[src="x"]')).to_have_count(0)
    expect(page.locator("iframe, object, embed")).to_have_count(0)
    scripts = page.locator("script").evaluate_all(
        "els => els.map(s => s.getAttribute('src') && new URL(s.getAttribute('src'), location.href).origin)"
    )
    origin = page.evaluate("location.origin")
    assert all(src == origin for src in scripts), f"a script element without a same-origin src: {scripts}"
    handlers = page.evaluate(
        "Array.from(document.querySelectorAll('*')).flatMap(e => Array.from(e.attributes))"
        ".filter(a => /^on/i.test(a.name) || /^\\s*javascript:/i.test(a.value)).map(a => a.name + '=' + a.value)"
    )
    assert handlers == []


def test_a_hostile_conversation_page_shows_payloads_as_text(page, hostile):
    page.goto(hostile.get_absolute_url())
    expect(page.locator("#turns [data-event]").first).to_be_visible()
    assert_inert(page)
    text = page.evaluate("document.body.innerText")
    assert SCRIPT in text
    assert f'"><img src=x onerror="{MARK}">' in text
    assert "{{ request }} {% debug %}" in text


def test_switching_branches_of_a_hostile_conversation_keeps_it_inert(page, hostile):
    leaves = [n["id"] for n in hostile.skeleton["nodes"] if n["leaf"]]
    other = next(leaf for leaf in leaves if leaf != hostile.head.event_id)
    page.goto(hostile.get_absolute_url())
    mark_page(page)

    diagram_link(page, quote_plus(other)).click()
    expect(page.locator("#workspace")).to_have_attribute("data-leaf", other)
    assert last_event_id(page) == other
    assert_inert(page)

    page.locator(".branch-list tbody tr:not(.selected) a").first.click()
    expect(page.locator("#workspace")).to_have_attribute("data-leaf", hostile.head.event_id)
    assert_inert(page)
    assert SCRIPT in page.evaluate("document.body.innerText")
    assert_not_reloaded(page)


def test_a_hostile_event_page_shows_payloads_as_text(page, hostile):
    page.goto(hostile.get_absolute_url())
    page.locator(f"[data-event='{HOSTILE_ID}'] a[title^='Event page']").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(HOSTILE_ID)
    assert_inert(page)
    text = page.evaluate("document.body.innerText")
    assert SCRIPT in text  # the raw JSON, at least
    page.get_by_role("link", name="Show in the conversation").click()
    expect(page.locator(f"[id='event-{HOSTILE_ID}']")).to_have_count(1)
    assert_inert(page)


def test_the_standalone_diagram_of_a_hostile_conversation_is_inert(page, hostile):
    response = page.goto(f"{hostile.get_absolute_url()}diagram.svg")
    assert response.headers["content-type"].startswith("image/svg+xml")
    assert "script-src" not in response.headers["content-security-policy"]  # default-src 'none': no script at all
    assert_inert(page)
    assert page.locator("svg a").count() >= 2
    assert MARK in page.evaluate("document.documentElement.textContent")
