"""A page showing the model's view keeps it: every link on it (export, compare, files, search,
the diagram, the cards, load earlier and later) opens the model's view again, and the export
"as the model's messages" is what the page shows."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

LINKS = """base => [...document.querySelectorAll('main a[href], main svg a')]
  .map(a => new URL(a.getAttribute('href') || a.getAttribute('xlink:href'), location.href))
  .filter(u => u.pathname.startsWith(base) && u.pathname !== base + 'export.zip' && (u.search || u.pathname !== base))
  .map(u => u.pathname + u.search)"""


def views(page, base: str) -> dict[str, str]:
    """Each link of the page into the conversation -> its ``view``."""
    return {href: parse_qs(urlsplit(href).query).get("view", [""])[0] for href in page.evaluate(LINKS, base)}


def download_messages(page, tmp_path, name: str) -> list:
    menu = page.locator(".export-menu")
    menu.locator("summary").click()
    with page.expect_download() as download:
        menu.get_by_role("link", name=re.compile("as the model's messages")).click()
    download.value.save_as(tmp_path / name)
    return json.loads((tmp_path / name).read_text())


@pytest.mark.parametrize("width", [1400, 360])
def test_every_link_on_the_models_view_keeps_it_and_its_export_is_what_the_model_was_sent(
    new_context, demo, settings, tmp_path, width
):
    settings.EVENTVIEWER_PAGE_SIZE = 3  # a window with load earlier and load later
    conversation = demo["condense-head-before"]
    base = conversation.get_absolute_url()
    page = new_context(viewport={"width": width, "height": 900}).new_page()
    page.goto(base)
    whole = download_messages(page, tmp_path, "whole.json")
    page.get_by_role("link", name="Model's view").click()
    expect(page).to_have_url(re.compile(r"[?&]view=model"))
    page.get_by_role("link", name="Jump to start").click()
    expect(page.locator("[data-load-later]")).to_be_visible()

    found = views(page, base)
    assert len(found) > 20
    lost = [href for href, view in found.items() if view != "model" and "Whole branch" not in href]
    assert lost == [href for href in found if parse_qs(urlsplit(href).query).get("view") == ["full"]], lost
    assert page.locator(".conv-search input[name=view]").input_value() == "model"

    page.locator("[data-load-later]").click()
    expect(page).to_have_url(re.compile(r"[?&]view=model"))
    model = download_messages(page, tmp_path, "model.json")
    assert len(model) < len(whole)  # the forgotten events left out, as on the page

    page.locator(".branch-extras").get_by_role("link", name="Files").click()
    expect(page).to_have_url(re.compile(r"/files/\?.*view=model"))
    assert all(view == "model" for view in views(page, base).values())
