"""Keyboard navigation: j/k between events, n/p between problems, ? for help."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from eventviewer.imports.importer import import_paths

from ..conftest import action, message, observation
from .conftest import event_ids, log_in

pytestmark = pytest.mark.browser

FOCUSED = re.compile(r"\bfocused\b")


def focused_id(page) -> str | None:
    return page.evaluate("(document.querySelector('[data-event].focused') || {dataset: {}}).dataset.event || null")


def press(page, key: str) -> None:
    page.keyboard.press(key)


def test_j_and_k_move_the_focus_to_the_next_and_previous_event(page, branching):
    page.goto(branching.get_absolute_url())
    ids = event_ids(page)
    assert focused_id(page) is None

    press(page, "j")
    first = ids.index(focused_id(page))
    press(page, "j")
    assert focused_id(page) == ids[first + 1]
    expect(page.locator(f"#event-{ids[first + 1]}")).to_be_in_viewport()
    expect(page).to_have_url(re.compile(f"#event-{ids[first + 1]}$"))
    press(page, "k")
    assert focused_id(page) == ids[first]
    expect(page.locator(".focused")).to_have_count(1)


def test_k_stops_at_the_first_event_and_j_at_the_last(page, branching):
    page.goto(branching.get_absolute_url())
    ids = event_ids(page)
    for _ in range(len(ids) + 1):
        press(page, "k")
    assert focused_id(page) == ids[0]
    for _ in range(len(ids) + 1):
        press(page, "j")
    assert focused_id(page) == ids[-1]


def test_n_and_p_jump_between_the_pending_actions(page, demo):
    page.goto(demo["confirmation-pending"].get_absolute_url())
    problems = page.locator("#turns .problem").evaluate_all("els => els.map(e => e.dataset.event)")
    assert len(problems) == 2

    press(page, "n")
    assert focused_id(page) == problems[0]
    press(page, "n")
    assert focused_id(page) == problems[1]
    press(page, "n")  # no problem after the last one: the focus stays
    assert focused_id(page) == problems[1]
    press(page, "p")
    assert focused_id(page) == problems[0]
    expect(page.locator(f"#event-{problems[0]}")).to_be_in_viewport()


@pytest.fixture
def pending_far_back(demo, settings, tmp_path):
    """120 turns whose only problem, a pending action, is the second turn; 20 turns a page."""
    settings.EVENTVIEWER_PAGE_SIZE = 20
    events = [message("m0", None, "Run sixty commands, please.")]
    events.append(action("a0", "m0", "call-0", response="r0"))  # never answered: pending
    parent = "a0"
    for i in range(1, 60):
        events.append(action(f"a{i}", parent, f"call-{i}", response=f"r{i}"))
        events.append(observation(f"o{i}", f"a{i}", f"a{i}", f"call-{i}", text=f"step {i} done"))
        parent = f"o{i}"
    path = tmp_path / "pending-far-back.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")
    (result,) = import_paths([(path, path.name)])
    assert result.conversation.pending_count == 1
    return result.conversation


def test_p_follows_the_link_to_a_problem_outside_the_loaded_turns(page, pending_far_back):
    page.goto(pending_far_back.get_absolute_url())
    expect(page.locator("#turns section.turn")).to_have_count(20)
    expect(page.locator("#event-a0")).to_have_count(0)
    press(page, "j")

    with page.expect_navigation():
        press(page, "p")

    card = page.locator("#event-a0")
    expect(card).to_have_class(FOCUSED)
    expect(card).to_be_in_viewport()
    expect(card.locator(".badge.pending")).to_be_visible()
    assert re.search(r"[?&]at=a0(&|#|$)", page.url)


def test_question_mark_opens_the_keys_dialog_and_escape_closes_it(page, branching):
    page.goto(branching.get_absolute_url())
    dialog = page.locator("dialog#keys")
    expect(dialog).to_be_hidden()
    press(page, "?")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("next / previous problem")
    press(page, "Escape")
    expect(dialog).to_be_hidden()


def test_the_question_mark_button_opens_the_keys_dialog(page, branching):
    page.goto(branching.get_absolute_url())
    page.get_by_role("button", name="?").click()
    expect(page.locator("dialog#keys")).to_be_visible()
    page.locator("dialog#keys").get_by_role("button", name="Close").click()
    expect(page.locator("dialog#keys")).to_be_hidden()


def test_keys_typed_into_the_search_box_are_just_text(page, demo):
    page.goto("/")
    search = page.get_by_role("searchbox", name="Search titles, ids, messages, errors and tools")
    search.press_sequentially("jknp?")
    expect(search).to_have_value("jknp?")
    expect(page.locator("dialog#keys")).to_be_hidden()


def test_keys_typed_into_the_share_note_are_just_text(page, branching, make_user):
    make_user("sharer")
    log_in(page, "sharer")
    page.goto(branching.get_absolute_url())
    note = page.locator("#share").get_by_label("Note")
    note.press_sequentially("jjkn p?")
    expect(note).to_have_value("jjkn p?")
    expect(page.locator("[data-event].focused")).to_have_count(0)
    expect(page.locator("dialog#keys")).to_be_hidden()
    assert "#" not in page.url


def listed_keys(page) -> list[str]:
    press(page, "?")
    dialog = page.locator("dialog#keys")
    expect(dialog).to_be_visible()
    keys = dialog.locator("dt").all_inner_texts()
    press(page, "Escape")
    expect(dialog).to_be_hidden()
    return keys


def test_the_list_lists_its_own_keys_and_j_k_enter_open_a_row(page, demo):
    page.goto("/")
    assert listed_keys(page) == ["j / k", "Enter", "/", "?", "Esc"]
    rows = page.locator("#conversation-table tbody tr")
    press(page, "j")
    press(page, "j")
    press(page, "k")
    press(page, "j")
    second = rows.nth(1)
    expect(second).to_have_class(FOCUSED)
    expect(rows.filter(has=page.locator(":scope.focused"))).to_have_count(1)
    title = second.locator("td.title-cell a").first.get_attribute("title")
    press(page, "Enter")
    expect(page.locator("h1")).to_have_attribute("title", title)
    page.go_back()
    press(page, "/")
    expect(page.get_by_role("searchbox", name=re.compile("Search titles"))).to_be_focused()


def test_a_run_page_lists_its_own_keys_and_j_enter_open_an_instance(page, demo):
    evaluation = Path(__file__).resolve().parents[1] / "fixtures" / "evaluation"
    import_paths([(evaluation / "output.jsonl", "output.jsonl")], run="safety")
    page.goto("/runs/")
    assert listed_keys(page) == ["j / k", "Enter", "?", "Esc"]
    press(page, "j")
    press(page, "Enter")
    expect(page.locator("h1")).to_contain_text("safety")
    assert listed_keys(page) == ["j / k", "Enter", "/", "?", "Esc"]
    press(page, "j")
    press(page, "j")
    instance = page.locator("table.instances tbody tr").nth(1)
    expect(instance).to_have_class(FOCUSED)
    name = instance.locator("a").first.inner_text()
    press(page, "Enter")
    expect(page.locator("main")).to_contain_text(name)
    expect(page).to_have_url(re.compile(r"/c/\w+/"))


def test_the_compare_page_lists_only_the_keys_that_work_there(page, branching):
    page.goto(branching.get_absolute_url())
    assert listed_keys(page) == ["j / k", "n / p", "N / P", "/", "?", "Esc"]
    page.get_by_role("link", name="Compare with HEAD").first.click()
    expect(page).to_have_url(re.compile(r"/compare/\?a="))
    assert listed_keys(page) == ["?", "Esc"]
