"""The README's screenshots: `make screenshots` (pytest ... --screenshots) writes docs/screenshots/."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from eventviewer.models import Conversation, ShareLink

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
    return screenshooter(new_context, VIEWPORT)


def screenshooter(new_context, viewport: dict, scheme: str = "light"):
    page = new_context(viewport=viewport, color_scheme=scheme).new_page()

    def save(name: str) -> None:
        page.evaluate("document.fonts.ready")
        page.mouse.move(0, 0)
        page.screenshot(path=OUT / name, animations="disabled", caret="hide")

    return page, save


def test_list_screenshot(shot, demo):
    page, save = shot
    page.goto("/")
    expect(page.locator("#conversation-table tbody tr")).to_have_count(
        Conversation.objects.filter(parent__isnull=True).count()
    )
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


def test_phone_screenshot(new_context, demo):
    page, save = screenshooter(new_context, {"width": 360, "height": 740})
    page.goto(demo["problems"].get_absolute_url())
    page.get_by_text("Show problems").click()
    save("phone.png")


def test_dark_screenshot(new_context, branching):
    page, save = screenshooter(new_context, VIEWPORT, "dark")
    page.goto(branching.get_absolute_url())
    page.locator("details.legend summary").click()
    save("dark.png")


def test_model_view_screenshot(shot, demo):
    """What the model was sent, with what each turn cost: a conversation condensed four times."""
    page, save = shot
    page.goto(demo["condense-head-before"].get_absolute_url())
    page.get_by_role("link", name="Model's view").click()
    expect(page.get_by_text("Summary of earlier events").first).to_be_visible()
    save("model-view.png")


def test_compare_screenshot(shot, branching):
    page, save = shot
    page.goto(branching.get_absolute_url())
    page.locator(".branch-list").get_by_role("link", name="compare with HEAD").first.click()
    expect(page.locator(".comparison")).to_be_visible()
    save("compare.png")


def test_search_screenshot(shot, branching):
    """A search across every branch of a conversation, its hits grouped by branch."""
    page, save = shot
    page.goto(branching.get_absolute_url())
    box = page.get_by_role("searchbox", name="Search this conversation")
    box.fill("wc")
    box.press("Enter")
    expect(page.locator(".search-group").first).to_be_visible()
    save("search.png")


def test_run_screenshot(shot, demo):
    """An evaluation run's instances, as the demo's runs show them."""
    from eventviewer.imports.importer import import_paths

    root = ROOT / "tests" / "fixtures"
    import_paths([(root / "evaluation" / "parallel-pending.jsonl", "parallel-pending.jsonl")])
    import_paths([(root / "v0" / "output.jsonl", "output.jsonl")], run="multi-swe-bench v0")
    page, save = shot
    page.goto("/")
    page.get_by_role("link", name="Runs", exact=True).click()
    page.get_by_role("link", name="parallel-pending", exact=True).click()
    expect(page.locator("#instance-table tbody tr")).to_have_count(2)
    save("run.png")


def test_review_screenshot(new_context, demo, make_user):
    """The review loop: a thread on a pending action's card, labelled and answered, and the
    Comments panel open with two reviewers' verdicts (docs/sharing.md; the card alone for the README)."""
    from eventviewer.models import Comment, Verdict

    from ..reviewing import make_default_labels
    from .conftest import log_in

    make_default_labels()
    conversation = demo["confirmation-pending"]
    make_user("reviewer-lead")
    page, _ = screenshooter(new_context, VIEWPORT)
    log_in(page, "reviewer-lead")
    page.goto(conversation.get_absolute_url())
    card = page.locator("#turns .problem.pending").first
    card.locator("[data-comment-form] > summary").click()
    form = card.locator("[data-comment-form] form")
    form.get_by_label("Comment on this event").fill("This call is **never** answered: the run waits on it.")
    form.get_by_label("root cause").check()
    form.get_by_role("button", name="Comment").click()
    expect(page.locator("#turns .problem.pending").first.locator(".thread .comment-body")).to_have_count(1)
    first = Comment.objects.get()
    Comment.objects.create(
        conversation=conversation,
        event_id=first.event_id,
        leaf_event_id=first.leaf_event_id,
        parent=first,
        body="Agreed: the confirmation never came.",
        author="Ana (via share link: check the pending call)",
        created_at=first.created_at,
        updated_at=first.created_at,
    )
    Verdict.objects.create(conversation=conversation, reviewer="reviewer-lead", outcome="fail", note="stuck")
    Verdict.objects.create(
        conversation=conversation, reviewer="Ana (via share link: check the pending call)", outcome="fail"
    )
    Comment.objects.filter(pk=first.pk).update(updated_at=first.created_at)
    page.reload()
    card = page.locator("#turns .problem.pending").first
    expect(card.locator(".thread .comment-body")).to_have_count(2)
    page.evaluate("document.fonts.ready")
    page.mouse.move(0, 0)
    card.evaluate("e => e.scrollIntoView({block: 'center'})")  # clear of the sticky branch bar
    card.screenshot(path=OUT / "review-card.png", animations="disabled", caret="hide")
    page.locator("#comments-panel > summary").click()
    # From the branch bar with its panel open down to the thread on its card.
    top = page.locator("[data-branch-bar]").bounding_box()
    bottom = card.locator(".thread").bounding_box()
    assert top and bottom
    scroll = page.evaluate("scrollY")
    y = top["y"] + scroll - 12
    clip = {"x": 0, "y": y, "width": VIEWPORT["width"], "height": bottom["y"] + scroll + bottom["height"] + 12 - y}
    page.screenshot(path=OUT / "review.png", full_page=True, clip=clip, animations="disabled", caret="hide")
