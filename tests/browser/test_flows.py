"""What a user does in the browser: find a conversation, switch branches, share one."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from eventviewer.models import Conversation, ShareLink

from ..test_failures import legacy_errors as legacy_errors  # a fixture
from .conftest import (
    assert_not_reloaded,
    diagram_link,
    event_ids,
    last_event_id,
    leaves,
    log_in,
    mark_page,
    other_leaf,
)

pytestmark = pytest.mark.browser

BRANCHING_TITLE = "Write a script that counts words in data.txt."


def assert_showing_branch(page, leaf: str) -> None:
    """The path panel, the diagram and the branch list all show the branch ending at ``leaf``."""
    expect(page.locator("#workspace")).to_have_attribute("data-leaf", leaf)
    assert last_event_id(page) == leaf
    # The selected node is on the branch shown: a click on it goes to its event there.
    expect(page.locator("#diagram svg g.node.selected a")).to_have_attribute("data-anchor", leaf)
    expect(page.locator("#diagram svg g.node.selected a")).to_have_attribute(
        "xlink:href", re.compile(f"leaf={leaf}&at=")
    )
    expect(page.locator(".branch-list tr.selected a").first).to_have_attribute("hx-get", re.compile(f"leaf={leaf}$"))


# --- the list ----------------------------------------------------------------------------


def test_the_list_shows_every_demo_conversation(page, demo):
    page.goto("/")
    rows = page.locator("#conversation-table tbody tr")
    top_level = Conversation.objects.filter(parent__isnull=True)
    expect(rows).to_have_count(top_level.count())  # sub-agents fold under their parent
    for conversation in top_level:
        name = conversation.title.replace("`", "")  # inline code is rendered as code
        expect(rows.get_by_role("link", name=name, exact=True)).to_be_visible()
    total = top_level.count()
    expect(page.locator(".pager")).to_contain_text(f"{total} of {total} conversations")


def test_typing_in_the_search_box_narrows_the_list_in_place(page, demo):
    page.goto("/")
    mark_page(page)
    page.get_by_role("searchbox", name="Search titles, ids, messages, errors and tools").press_sequentially("words")
    rows = page.locator("#conversation-table tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(BRANCHING_TITLE)
    expect(page).to_have_url(re.compile(r"[?&]q=words(&|$)"))
    assert_not_reloaded(page)


def test_a_search_without_match_says_so(page, demo):
    page.goto("/")
    page.get_by_role("searchbox", name="Search titles, ids, messages, errors and tools").fill("no such conversation")
    expect(page.locator("#conversation-table")).to_contain_text("No conversation matches “no such conversation”")


def test_opening_a_conversation_from_the_list_shows_its_branches(page, branching):
    page.goto("/?q=words")
    page.get_by_role("link", name=BRANCHING_TITLE).click()
    expect(page).to_have_url(re.compile(f"/c/{branching.conversation_id}/$"))
    expect(page.get_by_role("heading", level=1)).to_have_text(BRANCHING_TITLE)
    expect(page.locator(".conv-head .meta")).to_contain_text("3 branches")
    expect(page.locator(".branch-list tbody tr")).to_have_count(3)
    expect(page.locator("#diagram svg g.node.leaf")).to_have_count(3)
    expect(page.locator(".branch-bar .tag.head")).to_have_text("HEAD")
    assert last_event_id(page) == branching.head.event_id


# --- switching branches ------------------------------------------------------------------


def test_clicking_a_leaf_in_the_diagram_switches_branch_without_a_reload(page, branching):
    head, leaf = branching.head.event_id, other_leaf(branching)
    page.goto(branching.get_absolute_url())
    assert_showing_branch(page, head)
    mark_page(page)

    diagram_link(page, leaf).click()

    assert_showing_branch(page, leaf)
    expect(page).to_have_url(re.compile(f"/c/{branching.conversation_id}/\\?leaf={leaf}$"))
    expect(page.locator(".branch-bar .tag.not-head")).to_be_visible()
    assert_not_reloaded(page)


def test_back_and_forward_restore_the_branches_switched_in_the_diagram(page, branching):
    head, leaf = branching.head.event_id, other_leaf(branching)
    page.goto(branching.get_absolute_url())
    diagram_link(page, leaf).click()
    assert_showing_branch(page, leaf)

    page.go_back()
    expect(page).to_have_url(re.compile(f"/c/{branching.conversation_id}/$"))
    assert_showing_branch(page, head)

    page.go_forward()
    expect(page).to_have_url(re.compile(f"\\?leaf={leaf}$"))
    assert_showing_branch(page, leaf)


def test_clicking_a_branch_in_the_branch_list_switches_branch_without_a_reload(page, branching):
    head = branching.head.event_id
    page.goto(branching.get_absolute_url())
    mark_page(page)
    for leaf in [n for n in leaves(branching) if n != head] + [head]:
        page.locator(f'.branch-list a[hx-get$="leaf={leaf}"]').click()
        assert_showing_branch(page, leaf)
        expect(page).to_have_url(re.compile(f"\\?leaf={leaf}$"))
    assert_not_reloaded(page)

    page.go_back()
    assert_showing_branch(page, [n for n in leaves(branching) if n != head][-1])


def test_go_to_head_returns_to_the_default_branch(page, branching):
    page.goto(f"{branching.get_absolute_url()}?leaf={other_leaf(branching)}")
    mark_page(page)
    page.get_by_role("link", name="Go to HEAD").click()
    assert_showing_branch(page, branching.head.event_id)
    expect(page).to_have_url(re.compile(f"/c/{branching.conversation_id}/\\?leaf={branching.head.event_id}$"))
    expect(page.locator(".branch-bar .tag.head")).to_be_visible()
    assert_not_reloaded(page)


# --- links -------------------------------------------------------------------------------


def test_a_branch_url_opens_the_same_branch_in_a_new_browser(page, new_context, branching):
    leaf = other_leaf(branching)
    page.goto(branching.get_absolute_url())
    diagram_link(page, leaf).click()
    assert_showing_branch(page, leaf)

    elsewhere = new_context().new_page()
    elsewhere.goto(page.url)
    assert_showing_branch(elsewhere, leaf)
    assert event_ids(elsewhere) == event_ids(page)


def test_a_copied_event_link_opens_that_event_focused_in_a_new_browser(page, new_context, branching):
    leaf = other_leaf(branching)
    page.goto(f"{branching.get_absolute_url()}?leaf={leaf}")
    target = event_ids(page)[2]
    link = page.locator(f"#event-{target} a.permalink")
    button = page.locator(f"#event-{target}").get_by_role("button", name="copy")
    button.click()
    expect(button).to_have_class(re.compile(r"\bcopied\b"))
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == page.evaluate("href => new URL(href, location.href).href", link.get_attribute("href"))
    assert copied.endswith(f"?leaf={leaf}&at={target}#event-{target}")

    elsewhere = new_context(viewport={"width": 1280, "height": 500}).new_page()
    elsewhere.goto(copied)
    assert_showing_branch(elsewhere, leaf)
    card = elsewhere.locator(f"#event-{target}")
    expect(card).to_have_class(re.compile(r"\bfocused\b"))
    expect(card).to_be_in_viewport()


# --- sharing -----------------------------------------------------------------------------


def create_share_link(page, note: str = "") -> str:
    """Fill in and submit the share form of the conversation page; the new link's path."""
    form = page.locator("#share form")
    if note:
        form.get_by_label("Note").fill(note)
    form.get_by_role("button", name="Share this conversation, opened at this branch").click()
    new = page.locator("#share .share-links li:target")  # the page opens at the new link
    expect(new).to_be_in_viewport()
    href = new.locator("a[href^='/s/']").get_attribute("href")
    assert re.fullmatch(r"/s/[\w-]{43,}/", href)
    return href


@pytest.fixture
def shared_branch(branching) -> str:
    """A share link to branching-retries' most recent non-HEAD branch."""
    return ShareLink.objects.create(conversation=branching, leaf_event_id=other_leaf(branching)).get_absolute_url()


def test_a_shared_branch_opens_read_only_with_its_note_without_a_login(
    page, new_context, branching, make_user, settings
):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    leaf = other_leaf(branching)
    make_user("sharer")
    log_in(page, "sharer")
    page.goto(branching.get_absolute_url())
    page.locator(f'.branch-list a[hx-get$="leaf={leaf}"]').click()
    assert_showing_branch(page, leaf)
    shared = create_share_link(page, note="Why did this retry fail?")

    reviewer = new_context().new_page()
    reviewer.goto(shared)
    assert_showing_branch(reviewer, leaf)
    expect(reviewer.locator(".share-note")).to_have_text("Note from the sender: Why did this retry fail?")
    expect(reviewer.locator(".shared-tag")).to_have_text("Shared read-only view")
    expect(reviewer.get_by_role("button", name="Make this the default branch")).to_have_count(0)
    expect(reviewer.locator("#share, form[action*='/share/']")).to_have_count(0)
    expect(reviewer.get_by_role("link", name=re.compile("Conversations|Import|Admin|Log in"))).to_have_count(0)
    paths = reviewer.locator("a").evaluate_all(
        "links => links.map(a => new URL(a.getAttribute('href') || a.getAttribute('xlink:href'), location.href))"
        ".map(url => url.pathname)"
    )
    assert paths and all(p.startswith(shared) for p in paths), paths


def test_a_reviewer_switches_branches_inside_the_share_link(page, branching, shared_branch, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    head = branching.head.event_id
    page.goto(shared_branch)
    mark_page(page)

    diagram_link(page, head).click()

    assert_showing_branch(page, head)
    expect(page).to_have_url(re.compile(f"{shared_branch}\\?leaf={head}$"))
    expect(page.locator(".shared-tag")).to_be_visible()
    assert_not_reloaded(page)


def test_a_share_link_opens_nothing_else(page, new_context, branching, shared_branch, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    page.goto(shared_branch)
    expect(page.locator("#workspace")).to_have_attribute("data-leaf", other_leaf(branching))

    for path in (
        "/",
        branching.get_absolute_url(),
        f"{branching.get_absolute_url()}diagram.svg",
        "/import/",
        "/admin/",
    ):
        page.goto(path)
        assert urlsplit(page.url).path in ("/accounts/login/", "/admin/login/"), (path, page.url)
        expect(page.get_by_role("button", name="Log in")).to_be_visible()
    assert page.context.request.get("/api/conversations/").status == 401
    assert page.context.request.get(f"/api/conversations/{branching.conversation_id}/path/").status == 401


def test_a_share_link_with_a_focus_event_opens_at_that_event(page, new_context, long300, make_user, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    make_user("sharer")
    log_in(page, "sharer")
    path = page.context.request.get(f"/api/conversations/{long300.conversation_id}/path/").json()["path"]
    focus = path[30]
    page.goto(f"{long300.get_absolute_url()}?leaf={path[-1]}&at={focus}#event-{focus}")
    expect(page.locator("#share [data-focus-input]")).to_have_value(focus)
    shared = create_share_link(page)

    reviewer = new_context().new_page()
    reviewer.goto(shared)
    card = reviewer.locator(f"#event-{focus}")
    expect(card).to_have_class(re.compile(r"\bfocused\b"))
    expect(card).to_be_in_viewport()


# --- long conversations ------------------------------------------------------------------


@pytest.fixture
def long300(demo, settings):
    settings.EVENTVIEWER_PAGE_SIZE = 20
    return demo["long-300"]


def test_a_long_conversation_shows_its_newest_turns(page, long300):
    page.goto(long300.get_absolute_url())
    expect(page.locator("#turns section.turn")).to_have_count(20)
    assert last_event_id(page) == long300.head.event_id
    expect(page.locator("[data-load-earlier]")).to_contain_text("(302 more)")
    expect(page.locator("[data-load-later]")).to_have_count(0)


def test_load_earlier_turns_adds_them_above_in_place(page, long300):
    page.goto(long300.get_absolute_url())
    url, before = page.url, event_ids(page)
    mark_page(page)

    page.locator("[data-load-earlier]").click()

    expect(page.locator("#turns section.turn")).to_have_count(40)
    after = event_ids(page)
    assert after[20:] == before and len(after) == 40
    expect(page.locator("[data-load-earlier]")).to_contain_text("(282 more)")
    expect(page).to_have_url(f"{url}?leaf={before[-1]}&before={before[0]}")  # reopens the turns loaded
    assert_not_reloaded(page)


def test_an_event_link_outside_the_window_opens_the_window_around_it(page, long300):
    path = page.context.request.get(f"/api/conversations/{long300.conversation_id}/path/").json()["path"]
    early = path[30]
    page.goto(long300.get_absolute_url())
    expect(page.locator(f"#event-{early}")).to_have_count(0)

    page.goto(f"{long300.get_absolute_url()}?leaf={path[-1]}&at={early}#event-{early}")

    card = page.locator(f"#event-{early}")
    expect(card).to_have_class(re.compile(r"\bfocused\b"))
    expect(card).to_be_in_viewport()
    shown = event_ids(page)
    assert len(shown) == 20 and shown[0] == path[30 - 20 // 3]
    expect(page.locator("[data-load-earlier]")).to_be_visible()
    expect(page.locator("[data-load-later]")).to_be_visible()


def test_jump_to_start_opens_the_first_turns(page, long300):
    path = page.context.request.get(f"/api/conversations/{long300.conversation_id}/path/").json()["path"]
    page.goto(long300.get_absolute_url())
    page.get_by_role("link", name="Jump to start").click()
    expect(page.locator("#turns section.turn")).to_have_count(20)
    assert event_ids(page) == path[:20]
    first = page.locator(f"#event-{path[0]}")
    expect(first).to_have_class(re.compile(r"\bfocused\b"))
    expect(first).to_be_in_viewport()
    expect(page.locator("[data-load-earlier]")).to_have_count(0)
    page.get_by_role("link", name="Jump to the end").click()
    expect(page.locator("[data-load-later]")).to_have_count(0)
    assert last_event_id(page) == path[-1]


# --- problems ----------------------------------------------------------------------------


def test_pending_actions_are_marked_and_counted(page, demo):
    page.goto(demo["confirmation-pending"].get_absolute_url())
    expect(page.locator(".problem-line > .badge.pending")).to_have_text("2 pending")
    pending = page.locator("#turns .problem.pending")
    expect(pending).to_have_count(2)
    for card in pending.all():
        expect(card.locator(".event-head .badge.pending")).to_have_text("pending")
        expect(card.locator(".event-head .reason")).to_have_text("no result on this branch")
    page.get_by_text("Show problems").click()
    expect(page.locator("[data-problem-link]")).to_have_count(2)


def test_the_result_link_of_an_action_focuses_its_result_in_place(page, branching):
    page.goto(branching.get_absolute_url())
    mark_page(page)
    action = page.locator("[data-event]:has(a.pair[title='Go to its result'])").first
    result_id = action.locator("a.pair").get_attribute("data-anchor")

    action.get_by_role("link", name="result ↓").click()

    expect(page.locator(f"#event-{result_id}")).to_have_class(re.compile(r"\bfocused\b"))
    expect(page).to_have_url(re.compile(f"#event-{result_id}$"))
    page.locator(f"#event-{result_id}").get_by_role("link", name=re.compile("answers")).click()
    expect(action).to_have_class(re.compile(r"\bfocused\b"))
    assert_not_reloaded(page)


# --- every page --------------------------------------------------------------------------


def test_every_page_of_every_demo_conversation_runs_cleanly_under_the_csp(page, demo):
    """The page fixture fails the test on any console error, CSP violation or dialog."""
    for path in ("/", "/import/", "/accounts/login/"):
        assert page.goto(path).ok
    for conversation in demo.values():
        page.goto(conversation.get_absolute_url())
        expect(page.locator("#diagram svg")).to_be_visible()
        expect(page.locator("#turns [data-event]").first).to_be_visible()
        page.locator("#turns [data-event] a[title^='Event page']").last.click()
        expect(page.get_by_role("heading", name="Raw JSON")).to_be_visible()
        assert page.goto(f"{conversation.get_absolute_url()}diagram.svg").ok


def test_the_problems_demo_shows_each_kind_of_problem(page, demo):
    conversation = demo["problems"]
    page.goto(conversation.get_absolute_url())
    expect(page.locator(".problem-line > .badge.pending")).to_have_text("2 pending")
    expect(page.locator(".problem-line > .badge.mismatched")).to_have_text("3 mismatched")
    reasons = page.locator(".event-head .reason")
    expect(reasons.filter(has_text="does not match the action's 'call_demo_02'")).to_have_count(1)
    expect(reasons.filter(has_text="second result for action")).to_have_count(1)
    expect(reasons.filter(has_text="which is on another branch")).to_have_count(1)


@pytest.mark.parametrize("width", [1400, 360])
def test_the_errors_ending_a_run_below_head_are_counted_and_lead_to_themselves(new_context, demo, legacy_errors, width):
    conversation, events = legacy_errors
    page = new_context(viewport={"width": width, "height": 900}).new_page()
    page.goto("/")
    page.get_by_role("link", name=conversation.title).first.click()
    summary = page.locator(".failure-summary")
    expect(summary).to_contain_text("2 conversation errors")
    expect(page.locator(".branch-list tbody tr")).to_have_count(2)
    expect(page.locator(".branch-list tr.selected")).to_contain_text("HEAD")
    summary.get_by_role("link", name="the run ended with 2 conversation errors").click()
    expect(page).to_have_url(re.compile(f"/events/{events[-2]['id']}/$"))
    expect(page.locator("body")).to_contain_text("LLMAuthenticationError")
