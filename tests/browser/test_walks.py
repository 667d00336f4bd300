"""A new user's first hour, clicked through: the list, a conversation, its diagram and branch
list, events, share links. Every step is a click on what the page shows, not a built URL."""

from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from eventviewer.models import Conversation, ShareLink

from .conftest import assert_not_reloaded, event_ids, leaves, log_in, mark_page, other_leaf

pytestmark = pytest.mark.browser

FOCUSED = re.compile(r"\bfocused\b")


def query(page) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlsplit(page.url).query).items()}


# --- the list: sorting every column and paging through 120 conversations ----------------


@pytest.fixture
def many(transactional_db, live_server, settings) -> list[Conversation]:
    """120 conversations whose figures all differ, imported over two minutes."""
    settings.EVENTVIEWER_REQUIRE_LOGIN = False
    now = timezone.now()
    statuses = ["finished", "error", "running", "paused", "stuck", "waiting_for_confirmation"]
    return [
        Conversation.objects.create(
            conversation_id=f"{i:032x}",
            title=f"Task {(i * 37) % 120:03d}: {'`code` ' if i % 7 == 0 else ''}do thing number {i}",
            execution_status=statuses[i % len(statuses)],
            event_count=(i * 13) % 120 + 1,
            leaf_count=(i * 29) % 120 + 1,
            pending_count=(i * 41) % 120,
            mismatch_count=(i * 53) % 120,
            imported_at=now - timedelta(seconds=i),
        )
        for i in range(120)
    ]


LIST_COLUMNS = {  # heading -> how to read a row's value for it, from the model
    "Title": lambda c: c.title.replace("`", ""),
    "Status": lambda c: c.execution_status,
    "Events": lambda c: c.event_count,
    "Branches": lambda c: c.leaf_count,
    "Pending": lambda c: c.pending_count,
    "Mismatched": lambda c: c.mismatch_count,
    "Imported": lambda c: c.imported_at,
}


def shown_titles(page) -> list[str]:
    return page.locator("#conversation-table tbody td.title-cell a").all_inner_texts()


def shown_page_number(page) -> int:
    return int(re.search(r"page (\d+) of", page.locator(".pager").inner_text()).group(1))


def page_through(page) -> list[str]:
    """Every title on every page, by clicking "older →" until there is none."""
    titles = shown_titles(page)
    while page.get_by_role("link", name="older →").count():
        number = shown_page_number(page)
        page.get_by_role("link", name="older →").click()
        expect(page.locator(".pager")).to_contain_text(f"page {number + 1} of")
        titles += shown_titles(page)
    return titles


def click_sort(page, heading: str) -> bool:
    """Click a column's sort link; True when the list is now in ascending order."""
    name = re.compile(f"^{heading}")
    link = page.locator("#conversation-table thead").get_by_role("link", name=name)
    header = page.locator("#conversation-table thead th").filter(has=page.get_by_role("link", name=name))
    direction = parse_qs(urlsplit(link.get_attribute("href")).query)["dir"][0]
    link.click()
    expect(page).to_have_url(re.compile(f"dir={direction}"))
    expect(header).to_have_attribute("aria-sort", "ascending" if direction == "asc" else "descending")
    return direction == "asc"


@pytest.mark.parametrize("heading", list(LIST_COLUMNS))
def test_sorting_a_column_both_ways_orders_all_120_conversations(page, many, heading):
    by_title = {c.title.replace("`", ""): c for c in many}
    value = LIST_COLUMNS[heading]
    page.goto("/")
    expect(page.locator(".pager")).to_contain_text("120 of 120 conversations")
    directions = []
    for _ in range(2):  # the second click comes from the last page: sorting starts again at page 1
        ascending = click_sort(page, heading)
        expect(page.get_by_role("link", name="← newer")).to_have_count(0)
        titles = page_through(page)
        assert len(titles) == 120 and set(titles) == set(by_title)
        values = [value(by_title[t]) for t in titles]
        assert values == sorted(values, reverse=not ascending), heading
        directions.append(ascending)
    assert directions[0] != directions[1]


def test_the_list_pages_forward_and_back(page, many):
    page.goto("/")
    first_page = shown_titles(page)
    assert len(first_page) == 50
    page.get_by_role("link", name="older →").click()
    expect(page.locator(".pager")).to_contain_text("page 2 of 3")
    second = shown_titles(page)
    assert not set(first_page) & set(second)
    page.get_by_role("link", name="← newer").click()
    expect(page.locator(".pager")).to_contain_text("page 1 of 3")
    assert shown_titles(page) == first_page


# --- a conversation: from the list, its diagram and branch list, back and forward -------


def assert_on_branch(page, leaf: str) -> None:
    expect(page.locator("#workspace")).to_have_attribute("data-leaf", leaf)
    assert event_ids(page)[-1] == leaf
    expect(page.locator(f"#diagram svg g.node.selected a[data-anchor='{leaf}']")).to_have_count(1)
    expect(page.locator(".branch-list tr.selected a").first).to_have_attribute("hx-get", re.compile(f"leaf={leaf}$"))


def test_a_newcomer_opens_a_conversation_switches_branches_and_comes_back(page, branching):
    head, leaf = branching.head.event_id, other_leaf(branching)
    page.goto("/")
    page.get_by_role("link", name="Write a script that counts words in data.txt.").click()
    assert_on_branch(page, head)
    mark_page(page)

    # Off the branch: a diagram click switches branch in place.
    page.locator(f'#diagram svg g.node.leaf a[hx-get$="leaf={leaf}"]').click()
    assert_on_branch(page, leaf)
    expect(page).to_have_url(re.compile(f"\\?leaf={leaf}$"))

    # The branch list switches back.
    page.locator(f'.branch-list tbody a[hx-get$="leaf={head}"]').click()
    assert_on_branch(page, head)
    assert_not_reloaded(page)

    page.go_back()
    assert_on_branch(page, leaf)
    page.go_forward()
    assert_on_branch(page, head)

    # An event page and back again.
    target = event_ids(page)[1]
    page.locator(f"#event-{target} a[title^='Event page']").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(target)
    page.get_by_role("link", name="Show in the conversation").click()
    expect(page.locator(f"#event-{target}")).to_have_class(FOCUSED)
    page.go_back()
    expect(page.get_by_role("heading", name="Raw JSON")).to_be_visible()
    page.go_back()
    assert_on_branch(page, head)


def test_a_diagram_node_on_the_branch_shown_goes_to_that_event_not_to_another_branch(page, branching):
    head = branching.head.event_id
    page.goto(branching.get_absolute_url())
    expect(page.locator("#diagram-hint")).to_contain_text("on the highlighted branch to go to that event")
    mark_page(page)
    root = page.locator("#diagram svg g.node.root a")
    first = event_ids(page)[0]
    expect(root).to_have_attribute("data-anchor", first)

    root.click()

    card = page.locator(f"#event-{first}")
    expect(card).to_have_class(FOCUSED)
    expect(card).to_be_focused()
    expect(card).to_be_in_viewport()
    assert_on_branch(page, head)  # still the same branch
    expect(page).to_have_url(re.compile(f"\\?leaf={head}&at={first}#event-{first}$"))
    assert_not_reloaded(page)


def test_the_diagram_zooms_and_opens_large_and_its_legend_folds(page, branching):
    page.goto(branching.get_absolute_url())
    svg = page.locator("#diagram svg")
    fitted = svg.bounding_box()["width"]
    page.get_by_role("button", name="Zoom").click()
    expect(page.get_by_role("button", name="Zoom")).to_have_attribute("aria-pressed", "true")
    assert svg.bounding_box()["width"] >= fitted
    legend = page.locator("details.legend")
    expect(legend.get_by_text("mismatched observation")).to_be_hidden()
    legend.get_by_text("Legend").click()
    expect(legend.get_by_text("mismatched observation")).to_be_visible()
    with page.context.expect_page() as opened:
        page.get_by_role("link", name="Open large").click()
    large = opened.value
    large.wait_for_load_state()
    assert "diagram.svg" in large.url
    expect(large.locator("svg")).to_be_visible()


def test_the_branch_list_says_where_each_branch_forks_and_filters_and_sorts_in_place(page, branching):
    page.goto(branching.get_absolute_url())
    mark_page(page)
    rows = page.locator(".branch-list tbody tr")
    expect(rows).to_have_count(3)
    others = rows.filter(has_not=page.locator("text=this branch"))
    expect(others).to_have_count(2)
    for row in others.all():
        expect(row.locator("td").nth(0)).to_contain_text(re.compile(r"\w+: "))  # its first action or message
        expect(row.locator("td").nth(1).get_by_role("link")).to_have_text(re.compile(r"^\d+$"))  # where it forks
        expect(row.locator("td").nth(4)).not_to_be_empty()

    page.locator(".branch-list").get_by_role("link", name=re.compile("^Events")).click()
    expect(page).to_have_url(re.compile("bsort=length"))
    lengths = [int(t) for t in page.locator(".branch-list tbody td:nth-child(3)").all_inner_texts()]
    assert lengths == sorted(lengths, reverse=True)
    page.locator(".branch-list").get_by_role("link", name=re.compile("^Events")).click()
    expect(page).to_have_url(re.compile("bdir=asc"))
    lengths = [int(t) for t in page.locator(".branch-list tbody td:nth-child(3)").all_inner_texts()]
    assert lengths == sorted(lengths)

    page.get_by_role("searchbox", name="Filter the branches").fill("no such branch at all")
    expect(page.locator(".branch-list")).to_contain_text("No branch matches")
    page.get_by_role("searchbox", name="Filter the branches").fill("this branch")
    page.get_by_role("searchbox", name="Filter the branches").fill("")
    expect(rows).to_have_count(3)
    assert_not_reloaded(page)

    # A sorted list survives a branch switch from it.
    leaf = other_leaf(branching)
    page.locator(f'.branch-list tbody a[hx-get*="leaf={leaf}&"]').click()
    expect(page.locator("#workspace")).to_have_attribute("data-leaf", leaf)
    assert query(page)["bsort"] == "length"


def test_the_branch_filter_answers_the_moment_the_list_is_redrawn(page, branching):
    """Redrawn controls work at once: htmx wires new content up when it settles, by
    default 20 ms after the swap, and typing into the filter in that gap did nothing
    (what made the walk above fail now and then on a loaded machine)."""
    page.goto(branching.get_absolute_url())
    # Type the moment the redrawn list appears, before any timer could run.
    page.evaluate(
        """() => {
          const old = document.getElementById("branch-list");
          new MutationObserver((records, observer) => {
            const box = document.querySelector("#branch-list input[name=bq]");
            if (!box || old.contains(box)) return;
            observer.disconnect();
            box.value = "no such branch at all";
            box.dispatchEvent(new Event("input", { bubbles: true }));
          }).observe(old.parentNode, { childList: true });
        }"""
    )
    page.locator(".branch-list").get_by_role("link", name=re.compile("^Events")).click()
    expect(page.locator(".branch-list")).to_contain_text("No branch matches")


def test_a_long_argument_line_stays_inside_its_card(page, wide_call):
    page.goto(wide_call.get_absolute_url())
    page.get_by_text("Arguments").click()
    block = page.locator("pre.json").first
    expect(block).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    assert block.evaluate("el => el.scrollWidth > el.clientWidth")  # it scrolls inside


# --- problems ---------------------------------------------------------------------------


def test_a_problem_reason_links_its_events_and_the_event_page_says_it_too(page, demo):
    conversation = demo["problems"]
    page.goto(conversation.get_absolute_url())
    mark_page(page)
    page.get_by_text("Show problems and failures").click()
    expect(page.locator("details.problems li")).to_have_count(6)  # and one failure
    items = page.locator("details.problems li").filter(has=page.locator("[data-code=pending], [data-code=mismatched]"))
    expect(items).to_have_count(5)
    for item in items.all():
        expect(item.locator("a").first).to_contain_text(re.compile(r"terminal|file_editor|result|tool"))
    mismatched = page.locator("#turns .problem.mismatched").filter(has_text="second result for action")
    link = mismatched.locator(".reason a").first
    target = link.get_attribute("data-anchor")
    assert target and len(link.inner_text()) < len(target)  # a short id, the full one on hover
    link.click()
    expect(page.locator(f"#event-{target}")).to_have_class(FOCUSED)
    assert_not_reloaded(page)

    problem_card = page.locator("#turns .problem.mismatched").first
    problem_card.locator("a[title^='Event page']").click()
    expect(page.locator(".problem-note .badge.mismatched")).to_be_visible()
    expect(page.locator(".problem-note .reason")).not_to_be_empty()


def test_a_pending_action_whose_result_does_not_match_says_so(page, demo):
    page.goto(demo["problems"].get_absolute_url())
    reasons = page.locator("#turns .call.pending .reason")
    expect(reasons.filter(has_text="its only result does not match (see")).to_have_count(1)
    expect(reasons.filter(has_text="no result on this branch")).to_have_count(1)


def test_the_open_problem_list_stays_in_the_sticky_bar_and_its_links_land_below_it(page, demo, settings):
    page.set_viewport_size({"width": 1400, "height": 600})
    page.goto(demo["problems"].get_absolute_url())
    page.get_by_text("Show problems").click()
    box = page.locator("details.problems ol").bounding_box()
    assert box["height"] <= 0.3 * 600 + 1
    page.mouse.wheel(0, 2000)
    page.wait_for_timeout(200)
    topbar = page.locator(".topbar").bounding_box()
    bar = page.locator(".branch-bar").bounding_box()
    assert abs(bar["y"] - (topbar["y"] + topbar["height"])) <= 1  # still pinned under the top bar
    expect(page.locator("details.problems ol")).to_be_in_viewport()

    link = page.locator("details.problems ol a[data-anchor]").first
    card = page.locator(f"[id='event-{link.get_attribute('data-anchor')}']")
    link.click()
    expect(card).to_have_class(FOCUSED)
    page.wait_for_timeout(200)
    bar = page.locator(".branch-bar").bounding_box()
    assert card.bounding_box()["y"] >= bar["y"] + bar["height"]  # the open list covers none of it


# --- reading ---------------------------------------------------------------------------


def test_load_earlier_puts_a_url_that_reopens_those_turns_in_the_address_bar(page, new_context, long300):
    page.goto(long300.get_absolute_url())
    before = event_ids(page)
    page.locator("[data-load-earlier]").click()
    expect(page.locator("#turns section.turn")).to_have_count(40)
    expect(page).to_have_url(re.compile(f"before={before[0]}"))
    earlier = event_ids(page)[:20]

    again = new_context().new_page()
    again.goto(page.url)
    assert event_ids(again) == earlier


def test_show_all_output_opens_in_place(page, long_output):
    page.goto(long_output.get_absolute_url())
    mark_page(page)
    output = page.locator("#event-o1 pre.output")
    expect(output).not_to_contain_text("line 499")
    page.get_by_role("link", name="show all output").click()
    expect(output).to_contain_text("line 499")
    expect(page.get_by_role("link", name="show all output")).to_have_count(0)
    assert_not_reloaded(page)


def test_an_agent_error_is_red_like_every_error(page, demo):
    page.goto(demo["errors"].get_absolute_url())
    label = page.locator(".kind-agenterrorevent .event-head .kind").first
    expect(label).to_be_visible()
    red = page.locator(".badge.mismatched, .outcome-error").first.evaluate("el => getComputedStyle(el).color")
    assert label.evaluate("el => getComputedStyle(el).color") == red
    page.goto(demo["simple"].get_absolute_url())
    ok = page.locator(".card.kind-observationevent:not(.is-error) .event-head .kind").first
    assert ok.evaluate("el => getComputedStyle(el).color") != red


def test_the_title_is_one_line_with_the_whole_of_it_on_hover_and_folded(page, demo):
    conversation = demo["problems"]  # its title has `calc.py` in backticks
    page.goto(conversation.get_absolute_url())
    heading = page.get_by_role("heading", level=1)
    expect(heading.locator("code")).to_have_text("calc.py")
    assert heading.get_attribute("title") == conversation.title
    height = heading.bounding_box()["height"]
    page.set_viewport_size({"width": 360, "height": 740})
    assert abs(heading.bounding_box()["height"] - height) < 2  # still one line
    assert heading.evaluate("el => el.scrollWidth > el.clientWidth")  # cut with "…"
    page.get_by_text("Full title").click()
    expect(page.locator(".full-title p")).to_have_text(conversation.title.replace("`", ""))


# --- sharing ---------------------------------------------------------------------------


def test_a_sender_shares_one_event_and_a_reviewer_reads_it_and_then_it_is_revoked(
    page, new_context, branching, make_user, settings
):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    make_user("sharer")
    log_in(page, "sharer")
    page.goto(branching.get_absolute_url())
    target = event_ids(page)[3]
    page.locator(f"#event-{target}").get_by_role("link", name="share").click()
    form = page.locator("#share form")
    expect(form.locator("[data-focus-input]")).to_have_value(target)
    expect(form.get_by_label("Expires")).to_have_value("7d")
    form.get_by_label("Note").fill("Look at this call")
    form.get_by_role("button", name="Share this conversation, opened at this branch").click()

    new = page.locator(".share-links li:target")
    expect(new).to_be_in_viewport()
    expect(new.get_by_role("button", name="Copy link")).to_be_visible()
    expect(new).to_contain_text(re.compile(r"expires 6\W+days"))
    href = new.locator("a.share-url").get_attribute("href")
    new.get_by_role("button", name="Copy link").click()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied.endswith(href)

    reviewer = new_context().new_page()
    reviewer.goto(copied)
    card = reviewer.locator(f"#event-{target}")
    expect(card).to_have_class(FOCUSED)
    expect(card).to_be_in_viewport()
    note = reviewer.locator(".share-note")
    expect(note).to_have_text("Note from the sender: Look at this call")
    expect(note).to_be_in_viewport()
    reviewer.mouse.wheel(0, 1500)
    expect(note).to_be_in_viewport()  # the note stays in sight while reading
    expect(reviewer.get_by_role("link", name="share")).to_have_count(0)

    # The reviewer reaches a missing event: the error page leads back into the share.
    new_context.allow(r"status of (404|410)")
    reviewer.goto(href + "events/no-such-event/")
    back = reviewer.get_by_role("link", name="Back to the shared conversation")
    expect(back).to_have_attribute("href", href)
    expect(reviewer.get_by_role("link", name="Back to the conversations")).to_have_count(0)
    back.click()
    expect(reviewer.locator("#workspace")).to_be_visible()

    # Revoking asks first; cancelling keeps the link.
    page.locator(".share-links li:target").get_by_role("link", name="Revoke…").click()
    expect(page.get_by_role("heading", name="Revoke this share link?")).to_be_visible()
    page.get_by_role("link", name="Cancel, keep it").click()
    assert ShareLink.objects.get().is_active
    page.locator(".share-links li:target").get_by_role("link", name="Revoke…").click()
    page.get_by_role("button", name="Revoke the link").click()
    # The revoked link leaves the list of links (and its green "New link" box) for the revoked ones.
    expect(page.get_by_role("list", name="Share links")).to_have_count(0)
    expect(page.locator(".share-links li:target")).to_have_count(0)
    ended = page.locator("#share-ended")
    expect(ended).to_contain_text("Revoked or expired (1)")
    ended.get_by_text("Revoked or expired (1)").click()
    expect(ended.get_by_role("list", name="Revoked or expired share links")).to_contain_text("revoked")
    expect(ended.get_by_role("button", name="Copy link")).to_have_count(0)
    assert not ShareLink.objects.get().is_active

    # The reviewer's open page learns it at its next live poll, says so and stops asking.
    expect(reviewer.locator("#live")).to_contain_text("revoked or has expired", timeout=10_000)
    reviewer.reload()
    expect(reviewer.get_by_role("heading", level=1)).to_contain_text("no longer valid")


# --- keyboard --------------------------------------------------------------------------


def focused_id(page) -> str | None:
    return page.evaluate("document.activeElement && document.activeElement.dataset.event || null")


def test_the_first_j_goes_to_the_first_card(page, branching):
    page.goto(branching.get_absolute_url())
    ids = event_ids(page)
    page.keyboard.press("j")
    assert focused_id(page) == ids[0]  # the system prompt, not the card after it
    expect(page.locator(f"#event-{ids[0]}")).to_have_class(FOCUSED)
    page.keyboard.press("j")
    assert focused_id(page) == ids[1]


def test_after_scrolling_j_starts_from_the_card_in_view(page, long300):
    page.goto(long300.get_absolute_url())
    page.keyboard.press("j")
    first = focused_id(page)
    page.mouse.wheel(0, 2500)
    page.wait_for_timeout(300)
    in_view = page.evaluate(
        """() => {
          const top = Math.max(...[...document.querySelectorAll('.topbar, .branch-bar')]
            .map(el => el.getBoundingClientRect().bottom));
          return [...document.querySelectorAll('#workspace [data-event]')]
            .find(el => el.getBoundingClientRect().top >= top - 4).dataset.event;
        }"""
    )
    assert in_view != first
    page.keyboard.press("j")
    assert focused_id(page) == in_view
    expect(page.locator(f"#event-{in_view}")).to_be_in_viewport()


def test_k_at_the_top_loads_earlier_turns_and_keeps_the_focus_in_view(page, long300):
    page.goto(long300.get_absolute_url())
    first = event_ids(page)[0]
    page.keyboard.press("j")
    assert focused_id(page) == first
    page.keyboard.press("k")
    expect(page.locator("#turns section.turn")).to_have_count(40)
    ids = event_ids(page)
    expect(page.locator(f"#event-{ids[ids.index(first) - 1]}")).to_be_focused()
    expect(page.locator(f"#event-{ids[ids.index(first) - 1]}")).to_be_in_viewport()


# --- data --------------------------------------------------------------------------------


@pytest.fixture
def long300(demo, settings):
    settings.EVENTVIEWER_PAGE_SIZE = 20
    return demo["long-300"]


@pytest.fixture
def long_output(demo, tmp_path):
    import json

    from eventviewer.imports.importer import import_paths

    from ..conftest import action, message, observation

    text = "\n".join(f"line {i}" for i in range(500))
    events = [message("m1", None, "go"), action("a1", "m1", "c1"), observation("o1", "a1", "a1", "c1", text=text)]
    path = tmp_path / "long-output.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events))
    (result,) = import_paths([(path, path.name)])
    return result.conversation


@pytest.fixture
def wide_call(demo, tmp_path):
    from .conftest import import_wide_call

    return import_wide_call(tmp_path)


def test_every_branch_of_the_demo_can_be_reached_from_the_branch_list(page, branching):
    page.goto(branching.get_absolute_url())
    for leaf in leaves(branching):
        page.locator(f'.branch-list tbody a[hx-get$="leaf={leaf}"]').click()
        expect(page.locator("#workspace")).to_have_attribute("data-leaf", leaf)
