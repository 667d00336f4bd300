"""The side panel: the branch diagram opens on the selected branch's leaf (HEAD on a conversation with a
pending action), in one scroll area, with text never under 12 px; Zoom keeps that leaf in
view; in dark mode the drawing is dark too. On a phone, the branch list is stacked rows."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

SIZES = {
    "desktop": {"viewport": {"width": 1400, "height": 900}},
    "phone": {"viewport": {"width": 360, "height": 740}, "is_mobile": True, "has_touch": True},
}

LOOK = """() => {
  const box = document.getElementById('diagram'), svg = box.querySelector('svg');
  const node = svg.querySelector('g.node.selected'), text = svg.querySelector('text');
  const scrolling = [];
  for (let e = node.parentElement; e; e = e.parentElement) {
    const s = getComputedStyle(e);
    const scrolls = (/(auto|scroll)/.test(s.overflowX) && e.scrollWidth > e.clientWidth + 1)
      || (/(auto|scroll)/.test(s.overflowY) && e.scrollHeight > e.clientHeight + 1);
    if (scrolls && e !== document.documentElement && e !== document.body) scrolling.push(e.id || e.className);
  }
  const n = node.getBoundingClientRect(), b = box.getBoundingClientRect();
  const inside = n.top >= b.top - 1 && n.bottom <= b.top + box.clientHeight + 1
    && n.left >= b.left - 1 && n.right <= b.left + box.clientWidth + 1;
  return {inside, scrolling, width: svg.getBoundingClientRect().width,
          text: text.getBoundingClientRect().height, node: [n.top, n.bottom, n.left, n.right],
          box: [b.top, b.top + box.clientHeight, b.left, b.left + box.clientWidth]};
}"""


@pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())
@pytest.mark.parametrize("scenario", ["problems", "confirmation-pending", "long-300"])
def test_the_diagram_opens_on_the_selected_leaf_in_one_scroll_area_and_zooms_around_it(
    new_context, demo, scenario, size
):
    page = new_context(**size).new_page()
    page.goto(demo[scenario].get_absolute_url())
    expect(page.locator("#diagram svg g.node.selected.head")).to_have_count(1)  # HEAD's branch is shown
    page.locator("#diagram").scroll_into_view_if_needed()
    look = page.evaluate(LOOK)
    assert look["inside"], f"the selected leaf is not in the diagram's box: {look}"
    assert look["scrolling"] in ([], ["diagram"]), f"nested scroll areas: {look['scrolling']}"
    assert look["text"] >= 12, f"the diagram's text is {look['text']} px high"

    page.get_by_role("button", name="Zoom").click()
    expect(page.get_by_role("button", name="Zoom")).to_have_attribute("aria-pressed", "true")
    zoomed = page.evaluate(LOOK)
    assert zoomed["width"] >= look["width"] - 1
    assert zoomed["inside"], f"zoomed, the selected leaf left the box: {zoomed}"
    assert zoomed["scrolling"] in ([], ["diagram"])


def test_the_diagram_is_dark_in_dark_mode(new_context, demo):
    page = new_context(color_scheme="dark").new_page()
    page.goto(demo["problems"].get_absolute_url())
    paper = page.locator("#diagram").evaluate("e => getComputedStyle(e).backgroundColor")
    red, green, blue = (int(v) for v in re.findall(r"\d+", paper)[:3])
    assert red + green + blue < 3 * 80, paper
    assert page.locator("#diagram svg").evaluate("e => getComputedStyle(e).filter").startswith("invert(1)")


def test_on_a_phone_the_branch_list_is_stacked_rows_with_every_figure_whole(new_context, branching):
    page = new_context(**SIZES["phone"]).new_page()
    page.goto(branching.get_absolute_url())
    rows = page.locator("#branch-list tbody tr")
    expect(rows).to_have_count(3)
    scroller = page.locator("#branch-list .table-scroll").evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert scroller[0] <= scroller[1] + 1  # nothing cut off to the right
    right = page.locator("#branch-list").bounding_box()
    for i in range(3):
        row = rows.nth(i)
        assert row.locator("td.what").bounding_box()["width"] >= 250  # the branch has the row's width
        last = row.locator("td[data-label='last activity']")
        expect(last).to_contain_text(re.compile(r"\w{3} \d+, \d\d:\d\d"))
        box = last.bounding_box()
        assert box["x"] + box["width"] <= right["x"] + right["width"]
    page.locator("#branch-list thead").get_by_role("link", name=re.compile("^Events")).click()
    expect(page.locator("#branch-list th.sorted")).to_contain_text("Events")
