"""Follow every link and every hx-get target one level deep from the list, every demo
conversation and a share link: nothing answers 4xx or 5xx, and no page logs an error.

Links that only move the focus within one page (``?at=<event>``: each event's own link, its
pair's, a condensation's) are half of them and draw the same page around another event: of each
page's, the first, the middle and the last are followed (a long branch's window moves with
``at``, so those are the ones that differ)."""

from __future__ import annotations

import re
from collections import defaultdict
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from eventviewer.models import ShareLink

from .conftest import log_in, other_leaf

pytestmark = pytest.mark.browser

TARGETS = """() => {
  const out = [];
  for (const el of document.querySelectorAll('a[href], a[*|href], [hx-get]')) {
    const href = el.getAttribute('hx-get') || el.getAttribute('href')
      || el.getAttributeNS('http://www.w3.org/1999/xlink', 'href');
    if (!href || href.startsWith('#')) continue;
    const target = el.getAttribute('hx-target') || '';
    out.push({url: new URL(href, location.href).href, htmx: el.hasAttribute('hx-get'), target: target,
              download: el.hasAttribute('download')});
  }
  return out;
}"""


def shape(url: str) -> str:
    """A page type: the path with ids blanked, and the names of its query parameters."""
    parts = urlsplit(url)
    path = re.sub(r"/(c|s)/[^/]+/", r"/\1/ID/", parts.path)
    path = re.sub(r"/events/[^/]+/", "/events/ID/", path)
    return path + "?" + ",".join(sorted(parse_qs(parts.query)))


def sampled(found: dict[tuple[str, bool, str], str]) -> dict[tuple[str, bool, str], str]:
    """``found`` with the ``?at=`` links of each page reduced to its first, middle and last."""
    pages: dict[tuple, list[tuple[str, bool, str]]] = defaultdict(list)
    kept = {}
    for key in sorted(found):
        parts = urlsplit(key[0])
        query = parse_qs(parts.query)
        if "at" not in query:
            kept[key] = found[key]
            continue
        rest = tuple(sorted((name, tuple(values)) for name, values in query.items() if name != "at"))
        pages[(parts.path, rest, key[1], key[2])].append(key)
    for keys in pages.values():
        for key in {keys[0], keys[len(keys) // 2], keys[-1]}:
            kept[key] = found[key]
    return kept


def test_every_link_and_htmx_target_one_level_deep_answers(page, new_context, demo, make_user, settings, live_server):
    make_user("crawler", is_staff=False)
    log_in(page, "crawler")
    branching = demo["branching-retries"]
    share = ShareLink.objects.create(conversation=branching, leaf_event_id=other_leaf(branching), note="a note")
    starts = ["/", *(c.get_absolute_url() for c in demo.values()), share.get_absolute_url()]

    found: dict[tuple[str, bool, str], str] = {}
    downloads: set[str] = set()  # answered like the rest, but a browser saves them rather than opens them
    for start in starts:
        assert page.goto(start).ok, start
        expect(page.locator("body")).to_be_visible()
        for target in page.evaluate(TARGETS):
            if urlsplit(target["url"]).netloc != urlsplit(live_server.url).netloc:
                continue
            found.setdefault((target["url"], target["htmx"], target["target"]), start)
            if target["download"]:
                downloads.add(target["url"])
    assert len(found) > 200
    followed = sampled(found)
    assert len(followed) > 400

    failures = []
    for (url, htmx, target), source in sorted(followed.items()):
        headers = {"HX-Request": "true", "HX-Target": target.lstrip("#")} if htmx else {}
        response = page.context.request.get(
            url, headers=headers, max_redirects=5, timeout=30_000
        )  # a cold page on a busy CI machine
        if response.status >= 400:
            failures.append(f"{response.status} {url} (htmx={htmx}, from {source})")
        elif htmx and "<html" in response.text():
            failures.append(f"an htmx request got a whole page: {url} (from {source})")
    assert not failures, "\n".join(failures)

    # Each kind of page they lead to, opened in the browser: the page fixture fails the test
    # on any console error, CSP violation or dialog.
    kinds: dict[str, str] = {}
    for url, htmx, _ in found:
        if not htmx and "/admin/" not in url and url not in downloads:
            kinds.setdefault(shape(url), url)
    assert len(kinds) > 8
    by_status = defaultdict(list)
    for url in kinds.values():
        response = page.goto(url)
        by_status[response.status].append(url)
    assert set(by_status) == {200}, dict(by_status)
