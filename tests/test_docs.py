"""The README and the pages under docs/: links that lead somewhere, the URL table's URLs exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import Resolver404, resolve

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
TOPICS = [
    "importing",
    "reading",
    "investigating",
    "runs",
    "sharing",
    "urls",
    "api",
    "configuration",
    "deployment",
    "performance",
    "development",
]


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_to_a_file_and_heading(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(target)
        elif anchor and anchor not in anchors(file):
            broken.append(target)
    assert broken == []


def test_the_readme_shows_the_two_commands_and_links_every_topic_page() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "make run" in readme
    assert "make test" in readme
    linked = set(LINK.findall(readme))
    assert {f"docs/{topic}.md" for topic in TOPICS} <= linked
    assert len(readme.splitlines()) <= 200


SAMPLES = {
    "<conversation-id>": "0eb8b4d7d1a14751b2b449213c4127d1",
    "<event-id>": "e1",
    "<id>": "e1",
    "<pk>": "7",
    "<token>": "t0k3n",
    "<run-slug>": "my-run",
    "<upload-id>": "5d3b6a43-4f1e-4f3f-9a53-0d5f6c2b1a10",
}


def url_table_paths() -> list[str]:
    page = (ROOT / "docs" / "urls.md").read_text()
    paths = []
    for first_cell in re.findall(r"^\| ([^|]+) \|", page, re.MULTILINE):
        named = re.findall(r"`([^`]*)`", first_cell)
        full = [n for n in named if n.startswith("/")]
        # The share rows name their sub-pages relative to the first URL: `/s/<token>/` (`events/<id>/`, …).
        relative = [full[0] + n for n in named if full and re.match(r"[a-z]", n)]
        for path in full + relative:
            path = path.split("?")[0]
            for placeholder, sample in SAMPLES.items():
                path = path.replace(placeholder, sample)
            paths.append(path)
    return paths


def test_every_url_in_the_url_table_resolves() -> None:
    paths = url_table_paths()
    assert len(paths) > 30
    unknown = []
    for path in paths:
        try:
            resolve(path)
        except Resolver404:
            unknown.append(path)
    assert unknown == []
