"""Branches are named by what tells them apart (their own first step and how they end), on
the branch bar, the branch list, the compare picker and the comparison; the id comes second."""

from __future__ import annotations

import html as htmllib
import re

import pytest

from .conftest import text_of

pytestmark = pytest.mark.django_db

NAMES = {
    "User: Prefer a shell script over Python. · finished",
    "User: Before writing anything, check whether data.txt exists. · finished",
    "file_editor: create /workspace/count.py · finished",
}


@pytest.fixture
def branching(imported, open_site):
    return imported("branching-retries")


def test_the_branch_bar_and_the_branch_list_name_each_branch_apart(client, branching):
    page = client.get(branching.get_absolute_url()).content.decode()
    bar = htmllib.unescape(re.search(r'class="branch-name">([^<]*)<', page).group(1))
    assert bar in NAMES
    rows = [htmllib.unescape(r) for r in re.findall(r'<td class="what">\s*<a [^>]*>([^<]*)</a>', page)]
    assert set(rows) == NAMES and len(rows) == 3
    assert "Branch to Observation" not in text_of(page, "workspace")


def test_the_branch_filter_finds_a_branch_by_its_name(client, branching):
    response = client.get(
        branching.get_absolute_url(), {"bq": "shell script"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="branch-list"
    )
    rows = [
        htmllib.unescape(r) for r in re.findall(r'<td class="what">\s*<a [^>]*>([^<]*)</a>', response.content.decode())
    ]
    assert rows == ["User: Prefer a shell script over Python. · finished"]


def test_the_compare_picker_and_the_comparison_name_branches_not_ids(client, branching):
    pick = client.get(f"{branching.get_absolute_url()}compare/").content.decode()
    rows = [htmllib.unescape(r) for r in re.findall(r'<td><a href="[^"]*" title="[^"]*">([^<]*)</a>', pick)]
    assert set(rows) == NAMES
    assert "Observation" not in " ".join(rows)
    leaves = [n["id"] for n in branching.skeleton["nodes"] if n["leaf"]]
    compared = client.get(f"{branching.get_absolute_url()}compare/", {"a": leaves[0], "b": leaves[1]}).content.decode()
    heads = [
        htmllib.unescape(h) for h in re.findall(r'<span class="side-name">[AB]</span>\s*<a [^>]*>([^<]*)</a>', compared)
    ]
    assert len(heads) == 2 and set(heads) <= NAMES
