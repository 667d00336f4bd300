"""Every kind of page on a laptop and on a phone: nothing wider than the screen, the branch
and the side panel side by side or stacked but never on top of each other, no button whose
text is cut off."""

from __future__ import annotations

import pytest

from .conftest import open_page_types

pytestmark = pytest.mark.browser

VIEWPORTS = {"laptop": {"width": 1400, "height": 900}, "phone": {"width": 360, "height": 740}}

CLIPPED_CONTROLS = """() => [...document.querySelectorAll('button, .button, input[type=submit], summary')]
  .filter(el => el.offsetParent !== null)
  .filter(el => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1)
  .map(el => el.outerHTML.slice(0, 120))"""

WIDE_ELEMENTS = """() => [...document.querySelectorAll('body *')]
  .filter(el => el.getBoundingClientRect().right > innerWidth + 0.5)
  .slice(0, 5).map(el => el.tagName + '.' + (el.className.baseVal ?? el.className))"""


def overlap(a: dict, b: dict) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_every_page_fits_the_screen(new_context, page_types, viewport):
    problems = []
    for page_type, page in open_page_types(new_context, page_types, viewport=VIEWPORTS[viewport]):
        where = f"{page_type.name} at {viewport}"
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")  # the worst case
        if not page.evaluate("document.documentElement.scrollWidth <= innerWidth"):
            problems.append(f"{where}: scrolls sideways; too wide: {page.evaluate(WIDE_ELEMENTS)}")
        main, side = page.locator(".path-panel"), page.locator(".side-panel")
        if main.count() and side.count():
            a, b = main.bounding_box(), side.bounding_box()
            if overlap(a, b):
                problems.append(f"{where}: the branch and the side panel overlap: {a} {b}")
        if clipped := page.evaluate(CLIPPED_CONTROLS):
            problems.append(f"{where}: controls with cut-off text: {clipped}")
        heading = page.locator("h1").first
        if heading.count():
            # A heading never breaks inside a word ("Conversa/tions"): no more lines than words.
            words = len(heading.inner_text().split())
            lines = heading.evaluate(
                "el => Math.round(el.getBoundingClientRect().height / parseFloat(getComputedStyle(el).lineHeight))"
            )
            if lines > words:
                problems.append(f"{where}: the heading takes {lines} lines for {words} words")
    assert not problems, "\n".join(problems)


def test_the_keys_button_is_round_and_its_question_mark_centred(page, demo):
    for width in (1400, 360):
        page.set_viewport_size({"width": width, "height": 740})
        page.goto("/")
        button = page.get_by_role("button", name="?")
        box = button.bounding_box()
        assert abs(box["width"] - box["height"]) < 1 and box["x"] + box["width"] <= width
        mark = button.evaluate(
            """el => { const r = document.createRange(); r.selectNodeContents(el);
                       const t = r.getBoundingClientRect(), b = el.getBoundingClientRect();
                       return [t.left + t.width / 2 - (b.left + b.width / 2),
                               t.top + t.height / 2 - (b.top + b.height / 2)]; }"""
        )
        assert abs(mark[0]) <= 1.5 and abs(mark[1]) <= 2, mark


def test_dark_mode_follows_the_system(new_context, demo):
    light = new_context(color_scheme="light").new_page()
    dark = new_context(color_scheme="dark").new_page()
    for page in (light, dark):
        page.goto(demo["branching-retries"].get_absolute_url())
    background = "getComputedStyle(document.body).backgroundColor"
    ink = "getComputedStyle(document.body).color"

    def brightness(colour: str) -> float:
        r, g, b = (int(x) for x in colour[colour.index("(") + 1 : colour.index(")")].split(",")[:3])
        return (r * 299 + g * 587 + b * 114) / 1000

    assert brightness(light.evaluate(background)) > 200 and brightness(light.evaluate(ink)) < 80
    assert brightness(dark.evaluate(background)) < 50 and brightness(dark.evaluate(ink)) > 180
    card = "getComputedStyle(document.querySelector('.card')).backgroundColor"
    assert brightness(dark.evaluate(card)) < 60
