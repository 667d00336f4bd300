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
    file.locator("summary").click()
    expect(file.locator(".diff-add", has_text="+wc -w data.txt")).to_be_visible()
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
