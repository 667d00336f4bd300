"""The README's screenshots: `make screenshots` (pytest ... --screenshots) writes docs/screenshots/."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from eventviewer.models import ShareLink

from .conftest import ROOT, diagram_link, other_leaf

pytestmark = pytest.mark.browser

OUT = ROOT / "docs" / "screenshots"
VIEWPORT = {"width": 1400, "height": 900}


@pytest.fixture(autouse=True)
def screenshots_wanted(request):
    if not request.config.getoption("--screenshots", default=False):
        pytest.skip("screenshots are written only with --screenshots (make screenshots)")
    OUT.mkdir(parents=True, exist_ok=True)


@pytest.fixture
def shot(new_context):
    page = new_context(viewport=VIEWPORT, color_scheme="light").new_page()

    def save(name: str) -> None:
        page.evaluate("document.fonts.ready")
        page.mouse.move(0, 0)
        page.screenshot(path=OUT / name, animations="disabled", caret="hide")

    return page, save


def test_list_screenshot(shot, demo):
    page, save = shot
    page.goto("/")
    expect(page.locator("#conversation-table tbody tr")).to_have_count(len(demo))
    save("list.png")


def test_conversation_screenshot(shot, branching):
    page, save = shot
    leaf = other_leaf(branching)
    page.goto(branching.get_absolute_url())
    diagram_link(page, leaf).click()
    expect(page.locator("#workspace")).to_have_attribute("data-leaf", leaf)
    save("conversation.png")


def test_reviewer_screenshot(shot, branching):
    page, save = shot
    leaf = other_leaf(branching)
    share = ShareLink.objects.create(
        conversation=branching, leaf_event_id=leaf, note="The second attempt: why did it rewrite count.py?"
    )
    page.goto(share.get_absolute_url())
    expect(page.locator(".share-note")).to_be_visible()
    save("reviewer.png")
