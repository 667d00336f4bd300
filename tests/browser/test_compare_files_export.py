"""Comparing branches, the Files tab and the downloads, as a user does them in the browser."""

from __future__ import annotations

import re
import zipfile

import pytest
from playwright.sync_api import expect

from .conftest import leaves

pytestmark = pytest.mark.browser


def test_compare_opens_from_the_branch_list(page, branching):
    head = branching.head.event_id
    page.goto(branching.get_absolute_url())
    other = page.locator(".branch-list tbody tr", has_not=page.locator(".tag.head")).first
    other.get_by_role("link", name="compare with HEAD").click()
    expect(page).to_have_url(re.compile(rf"/compare/\?a=[^&]+&b={head}$"))
    expect(page.get_by_role("heading", name="Compare two branches")).to_be_visible()
    expect(page.locator(".compare-shared")).to_contain_text(re.compile(r"The same \d+ events?, up to"))
    expect(page.locator(".compare-side")).to_have_count(2)
    expect(page.locator(".side-b .tag.head")).to_be_visible()
    # A changed step shows its differences as a diff.
    expect(page.locator(".compare-row.row-changed .diff-add").first).to_be_visible()
    # And back to one of the branches.
    page.locator(".side-a h2 a").click()
    expect(page.locator("#workspace")).to_be_visible()


def test_two_leaves_picked_in_the_diagram_are_compared(page, branching):
    first, second = leaves(branching)[:2]
    page.goto(f"/c/{branching.conversation_id}/compare/")
    page.locator(f'#diagram svg a[*|href$="compare/?a={first}"]').first.click()
    expect(page.get_by_text("Now pick")).to_be_visible()
    page.locator(f'#diagram svg a[*|href$="compare/?a={first}&b={second}"]').first.click()
    expect(page).to_have_url(re.compile(rf"\?a={first}&b={second}$"))
    expect(page.locator(".compare-rows")).to_be_visible()


def test_the_files_tab_shows_each_change_and_what_ran_elsewhere(page, branching):
    page.goto(branching.get_absolute_url())
    expect(page.locator(".branch-extras .drift-summary")).to_contain_text("2 file edits on other branches ran after")
    page.locator(".branch-extras").get_by_role("link", name="Files").click()
    expect(page.get_by_role("heading", name="Files", exact=True)).to_be_visible()
    expect(page.locator("#drift")).to_contain_text("create /workspace/count.py")
    expect(page.locator("#drift")).to_contain_text("echo 'wc -w data.txt' > count.sh")
    # The third branch wrote count.sh: open it and read its diff.
    third = next(leaf for leaf in leaves(branching) if leaf.startswith("54478077"))
    page.goto(f"/c/{branching.conversation_id}/files/?leaf={third}")
    file = page.locator(".file", has_text="/workspace/count.sh")
    # A short branch shows its diffs unfolded.
    expect(file.locator(".diff-add", has_text="+wc -w data.txt")).to_be_visible()
    file.locator("summary").click()
    expect(file.locator(".diff-add", has_text="+wc -w data.txt")).to_be_hidden()
    file.locator("summary").click()
    file.locator(".file-change-head a").click()
    expect(page.locator("#workspace")).to_have_attribute("data-leaf", third)


def test_the_export_menu_downloads_the_branch_and_the_conversation(page, branching, tmp_path):
    page.goto(branching.get_absolute_url())
    menu = page.locator(".export-menu")
    menu.locator("summary").click()
    with page.expect_download() as markdown:
        menu.get_by_role("link", name="This branch as a Markdown review").click()
    download = markdown.value
    assert re.fullmatch(rf"{branching.conversation_id}-[\w-]+\.md", download.suggested_filename)
    download.save_as(tmp_path / "review.md")
    assert (tmp_path / "review.md").read_text().startswith("# Write a script that counts words in data.txt.\n")
    with page.expect_download() as archive:
        menu.get_by_role("link", name="The whole conversation, as the SDK's folder (zip)").click()
    assert archive.value.suggested_filename == f"{branching.conversation_id}.zip"
    archive.value.save_as(tmp_path / "conversation.zip")
    names = zipfile.ZipFile(tmp_path / "conversation.zip").namelist()
    assert f"{branching.conversation_id}/base_state.json" in names and len(names) == branching.event_count + 1


@pytest.fixture
def big_edit(transactional_db, live_server, settings, tmp_path):
    """One file_editor edit of a 10,000-line file of repeated lines, in scattered places:
    too costly to match within a page's time."""
    import json
    import random

    from eventviewer.imports.importer import import_paths

    settings.EVENTVIEWER_REQUIRE_LOGIN = False
    rng = random.Random(22)
    old = [f"value = {rng.randrange(150)}\n" for _ in range(10_000)]
    new = [f"changed {n}\n" if n % 500 == 0 else line for n, line in enumerate(old)]
    call = {"id": "call", "name": "file_editor", "arguments": "{}"}
    events = [
        {
            "id": "m1",
            "kind": "MessageEvent",
            "source": "user",
            "timestamp": "2026-01-01T00:00:00",
            "llm_message": {"role": "user", "content": [{"type": "text", "text": "edit"}]},
        },
        {
            "id": "a1",
            "kind": "ActionEvent",
            "source": "agent",
            "timestamp": "2026-01-01T00:00:01",
            "parent_id": "m1",
            "thought": [],
            "tool_name": "file_editor",
            "tool_call_id": "c1",
            "llm_response_id": "r1",
            "tool_call": call,
            "action": {"kind": "FileEditorAction", "command": "str_replace", "path": "/w/big.py"},
        },
        {
            "id": "o1",
            "kind": "ObservationEvent",
            "source": "environment",
            "timestamp": "2026-01-01T00:00:02",
            "parent_id": "a1",
            "action_id": "a1",
            "tool_call_id": "c1",
            "tool_name": "file_editor",
            "observation": {
                "kind": "FileEditorObservation",
                "command": "str_replace",
                "path": "/w/big.py",
                "prev_exist": True,
                "old_content": "".join(old),
                "new_content": "".join(new),
                "is_error": False,
                "content": [{"type": "text", "text": "done"}],
            },
        },
    ]
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return import_paths([(path, str(path))])[0].conversation


@pytest.mark.parametrize("width", [1400, 360])
def test_a_cut_diff_says_so_and_downloads_whole(new_context, big_edit, width, tmp_path):
    page = new_context(viewport={"width": width, "height": 800}).new_page()
    page.goto(big_edit.get_absolute_url())
    page.locator(".branch-extras").get_by_role("link", name="Files").click()
    file = page.locator(".file", has_text="/w/big.py")
    note = file.locator(".diff-cut")
    expect(note).to_contain_text("Its lines were not matched in time: what differs shows as replaced whole.")
    expect(note).to_contain_text("more lines of this diff not shown")
    link = note.get_by_role("link", name="Download the whole diff")
    box = link.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width
    with page.expect_download() as got:
        link.click()
    assert got.value.suggested_filename == "o1-_w_big.py.diff"
    got.value.save_as(tmp_path / "whole.diff")
    body = (tmp_path / "whole.diff").read_text()
    assert body.startswith("--- a/w/big.py\n+++ b/w/big.py\n") and body.count("\n+changed ") == 20
