"""End-to-end tests in headless Chromium against pytest-django's live server.

Every page must run under the site's Content-Security-Policy with no console error,
no uncaught exception, no CSP violation and no alert/confirm/prompt: every context made by ``new_context``
(``page`` is one) records them, and the test fails if any appeared.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.core.cache import cache
from django.db import connection
from django.utils import timezone
from playwright.sync_api import Error, expect

from eventviewer.imports.importer import import_paths
from eventviewer.models import Conversation, Instance, ShareLink, Verdict

# Debian's chromium-headless-shell: the same Chromium build without the desktop browser's
# shell (what Playwright itself runs headless). It takes half the CPU of `chromium --headless`
# (docs/development.md), which on two cores is most of the browser tests' time.
CHROMIUM = Path("/usr/lib/chromium/chromium-headless-shell")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "demo"
# Scenario folder -> conversation id, e.g. "branching-retries" -> "fef2edda...".
SCENARIOS = {p.name: next(q.name for q in p.iterdir() if q.is_dir()) for p in sorted(DEMO.iterdir()) if p.is_dir()}
TIMEOUT_MS = 10_000
expect.set_options(timeout=TIMEOUT_MS)
PASSWORD = "a-long-browser-test-password"

# Reports a CSP violation even where Chromium would not log it to the console.
REPORT_CSP_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", function (e) {
  console.error("CSP violation: " + e.violatedDirective + " blocked " + (e.blockedURI || "inline code"));
}, true);
"""


def pytest_addoption(parser):
    parser.addoption(
        "--screenshots",
        action="store_true",
        default=False,
        help="write docs/screenshots/*.png from tests/browser/test_screenshots.py",
    )


# --- the browser -------------------------------------------------------------------------


# Package scope: one browser for all the browser tests, stopped before the rest of the
# suite runs. The test database is made first, while no asyncio loop runs in this thread.
@pytest.fixture(scope="package")
def browser(django_db_setup):
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's chromium-headless-shell (make test does it). "
            "The browser tests never download a browser and are never skipped.",
            pytrace=False,
        )
    from playwright.sync_api import sync_playwright

    with pytest.MonkeyPatch.context() as patch:
        # Playwright's sync API keeps an asyncio loop running in this thread, where Django's
        # ORM would refuse to run ("You cannot call this from an async context"). Allowed
        # only while it runs: other tests start `manage.py check --deploy`, which rightly
        # warns about this variable.
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        playwright = sync_playwright().start()
        try:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            yield browser
            browser.close()
        finally:
            playwright.stop()


@dataclass
class Trouble:
    """What went wrong in the pages of one browser context."""

    errors: list[str] = field(default_factory=list)
    allowed: list[re.Pattern] = field(default_factory=list)  # console errors a test provokes on purpose

    def watch(self, page) -> None:
        page.on("console", lambda message: self.on_console(page, message))
        page.on("pageerror", lambda error: self.errors.append(f"uncaught exception: {error} (page {page.url})"))
        page.on("dialog", lambda dialog: self.on_dialog(page, dialog))

    def on_console(self, page, message) -> None:
        if message.type not in ("error", "assert"):
            return
        source = message.location.get("url") or ""
        if any(pattern.search(message.text) for pattern in self.allowed):
            return
        self.errors.append(f"console {message.type}: {message.text} (page {page.url}, from {source or '?'})")

    def on_dialog(self, page, dialog) -> None:
        self.errors.append(f"dialog opened: {dialog.type} {dialog.message!r} (page {page.url})")
        dialog.dismiss()

    def take(self) -> list[str]:
        errors, self.errors = self.errors, []
        return errors


class Contexts:
    """Makes fresh browser contexts (no shared cookies) and watches every page in them."""

    def __init__(self, browser, base_url: str):
        self.browser, self.base_url = browser, base_url
        self.made: dict[object, Trouble] = {}
        self.allowed: list[re.Pattern] = []

    def __call__(self, **options):
        options.setdefault("viewport", {"width": 1280, "height": 800})
        context = self.browser.new_context(base_url=self.base_url, **options)
        context.set_default_timeout(TIMEOUT_MS)
        # The copy buttons use the clipboard; without it they fall back to window.prompt.
        context.grant_permissions(["clipboard-read", "clipboard-write"], origin=self.base_url)
        context.add_init_script(REPORT_CSP_VIOLATIONS)
        trouble = self.made[context] = Trouble(allowed=list(self.allowed))
        context.on("page", trouble.watch)
        return context

    def allow(self, pattern: str) -> None:
        """Accept console errors matching ``pattern`` from now on: the browser logs the status
        of a page the test opens on purpose, such as a 404 or a 410."""
        for trouble in self.made.values():
            trouble.allowed.append(re.compile(pattern))
        self.allowed.append(re.compile(pattern))

    def check(self) -> None:
        """Fail the running test if any page reported trouble since the last check."""
        problems = [problem for trouble in self.made.values() for problem in trouble.take()]
        if problems:
            pytest.fail("The browser reported:\n  " + "\n  ".join(problems), pytrace=False)

    def close(self) -> None:
        for context in self.made:
            for page in context.pages:
                settle(page)
            context.close()


# An htmx request still answered by the live server (a search typed just before the test
# ended) would hold its table while the test database is flushed: "database table is locked".
HTMX_IDLE = "() => !document.querySelector('.htmx-request')"


def settle(page) -> None:
    """Wait until no htmx request of ``page`` is waiting for its answer."""
    try:
        page.wait_for_function(HTMX_IDLE, timeout=TIMEOUT_MS)
    except Error:  # the page is closed or navigating: it waits for nothing
        pass


@pytest.fixture
def new_context(browser, live_server):
    """``new_context(**options)``: a fresh browser context on the live server."""
    contexts = Contexts(browser, live_server.url)
    yield contexts
    contexts.close()
    contexts.check()  # whatever arrived after the test's own check


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A page's console error, uncaught exception, CSP violation or dialog fails the test."""
    result = yield
    contexts = item.funcargs.get("new_context")
    if isinstance(contexts, Contexts):
        contexts.check()
    return result


@pytest.fixture
def page(new_context):
    return new_context().new_page()


# --- data --------------------------------------------------------------------------------


# The SQLite test database right after the first import of the demo, for load_demo.
_demo_database: list[sqlite3.Connection] = []


def load_demo() -> None:
    """Imports the demo into the (empty) test database. On SQLite, the first import is kept
    as a copy of the whole in-memory database (rows, search index, sequences) and later
    tests get that copy back, byte for byte, instead of importing again: about half of a
    browser test's time was this import. PostgreSQL, or a database a test has already
    written to, gets a real import each time."""
    if connection.vendor != "sqlite" or Conversation.objects.exists() or User.objects.exists():
        import_paths([(DEMO, "demo")])
        return
    connection.ensure_connection()
    if not _demo_database:
        import_paths([(DEMO, "demo")])
        copy = sqlite3.connect(":memory:", check_same_thread=False)
        connection.connection.backup(copy)
        _demo_database.append(copy)
    else:
        _demo_database[0].backup(connection.connection)
        ContentType.objects.clear_cache()  # the copy's ids, not those the flush made


@pytest.fixture
def demo(transactional_db, live_server, settings) -> dict[str, Conversation]:
    """The demo conversations, by scenario folder name; reading needs no login."""
    settings.EVENTVIEWER_REQUIRE_LOGIN = False
    cache.clear()  # diagrams are cached by conversation pk, which a flushed database reuses
    load_demo()
    by_id = {c.conversation_id: c for c in Conversation.objects.all()}
    return {scenario: by_id[cid] for scenario, cid in SCENARIOS.items()}


@pytest.fixture
def branching(demo) -> Conversation:
    """branching-retries: "Write a script that counts words in data.txt.", 3 branches."""
    return demo["branching-retries"]


def leaves(conversation: Conversation) -> list[str]:
    """Leaf event ids, most recent first (the branch list's order)."""
    nodes = [n for n in conversation.skeleton["nodes"] if n["leaf"]]
    return [n["id"] for n in sorted(nodes, key=lambda n: n["seq"], reverse=True)]


def other_leaf(conversation: Conversation) -> str:
    """The most recent leaf that is not HEAD."""
    return next(n for n in leaves(conversation) if n != conversation.head.event_id)


@pytest.fixture
def make_user(transactional_db, django_user_model, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast logins

    def make(username: str = "reviewer-lead", **fields):
        return django_user_model.objects.create_user(username, password=PASSWORD, **fields)

    return make


def log_in(page, username: str, password: str = PASSWORD) -> None:
    """Log in through the real login form."""
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    with page.expect_navigation():
        page.get_by_role("button", name="Log in").click()
    assert urlsplit(page.url).path != "/accounts/login/", "login failed"


# --- reading the conversation page -------------------------------------------------------


def event_ids(page) -> list[str]:
    return page.locator("#workspace [data-event]").evaluate_all("els => els.map(e => e.dataset.event)")


def last_event_id(page) -> str:
    return event_ids(page)[-1]


def mark_page(page) -> None:
    """Set a marker that only survives if the page is never reloaded."""
    page.evaluate("window.__marker = 'still here'")


def assert_not_reloaded(page) -> None:
    assert page.evaluate("window.__marker") == "still here", "the page was reloaded"


def diagram_link(page, event_id: str):
    """The diagram's link selecting the branch that ends at ``event_id``."""
    return page.locator(f'#diagram svg a[hx-get$="leaf={event_id}"]').first


def import_wide_call(folder: Path) -> Conversation:
    """A conversation whose tool call has one 6,000-character line (a file_editor create),
    and a long title: what once made the page 1,115 px wide on a phone."""
    from ..conftest import action, message, observation

    line = "x = [" + ", ".join(str(i) for i in range(1200)) + "]"
    call = action("a1", "m1", "c1", tool="file_editor", action={"kind": "FileEditorAction", "command": "create"})
    call["tool_call"]["arguments"] = json.dumps({"command": "create", "path": "/w/numbers.py", "file_text": line})
    events = [
        message("m1", None, "Write numbers.py with a very long list literal on one line " + "please " * 30),
        call,
        observation("o1", "a1", "a1", "c1", tool="file_editor", text="File created: " + line),
    ]
    path = folder / "wide-call.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in events))
    (result,) = import_paths([(path, path.name)])
    return result.conversation


@dataclass
class PageType:
    name: str
    url: str
    owner: bool  # opened logged in as the conversation's owner (else as a reviewer without an account)
    status: int = 200


@pytest.fixture
def page_types(demo, make_user, tmp_path) -> list[PageType]:
    """One URL of every kind of page, including the conversation with the longest line."""
    make_user("owner")
    wide = import_wide_call(tmp_path)
    branching = demo["branching-retries"]
    share = ShareLink.objects.create(
        conversation=branching, leaf_event_id=other_leaf(branching), note="Look at the retry " * 8
    )
    gone = ShareLink.objects.create(conversation=branching, revoked_at=timezone.now())
    evaluation = ROOT / "tests" / "fixtures" / "evaluation"
    (pending, *_) = import_paths([(evaluation / "parallel-pending.jsonl", "parallel-pending.jsonl")], run="fixtures")
    import_paths([(evaluation / "output.jsonl", "output.jsonl")], run="safety")
    for i, instance in enumerate(Instance.objects.filter(run__slug="safety")):  # two reviewers: the agreement
        for reviewer in ("Ana (via share link: a long note to wrap at 360 px)", "owner"):
            Verdict.objects.create(
                conversation=instance.conversation, reviewer=reviewer, outcome=("pass", "fail")[i % 2]
            )
    return [
        PageType("list", "/", True),
        PageType("conversation", branching.get_absolute_url(), True),
        PageType("long line", wide.get_absolute_url(), True),
        PageType("problems", demo["problems"].get_absolute_url(), True),
        PageType("model's view", f"{demo['condense-head-before'].get_absolute_url()}?view=model", True),
        PageType("hooks and costs", demo["hooks"].get_absolute_url(), True),
        PageType("sub-agents", demo["subagent"].get_absolute_url(), True),
        PageType(
            "compare",
            f"{branching.get_absolute_url()}compare/?a={other_leaf(branching)}&b={branching.head.event_id}",
            True,
        ),
        PageType("files", f"{demo['parallel-with-invalid-call'].get_absolute_url()}files/", True),
        PageType("long conversation", demo["long-300"].get_absolute_url(), True),
        PageType("search", f"{branching.get_absolute_url()}search/?q=count*", True),
        PageType("list filtered", "/?q=words&failures=1&status=finished", True),
        PageType("list by runs", "/?run=fixtures&run=safety&sort=run&dir=asc", True),
        PageType("runs compared", "/runs/compare/?runs=fixtures,safety", True),
        PageType("share search", f"{share.get_absolute_url()}search/?q=script", False),
        PageType("event", f"{wide.get_absolute_url()}events/a1/", True),
        PageType("import", "/import/", True),
        PageType("runs", "/runs/", True),
        PageType("run", "/runs/fixtures/", True),
        PageType("run reviewed", "/runs/safety/?sort=verdicts&comments=none", True),
        PageType("runs compared", "/runs/compare/?a=fixtures&b=safety", True),
        PageType("instance", pending.conversation.get_absolute_url(), True),
        PageType("revoke", f"{branching.get_absolute_url()}share/{share.pk}/revoke/", True),
        PageType("404", "/no/such/page/", True, 404),
        PageType("400", "/c/zzz/", True, 400),
        PageType("login", "/accounts/login/", False),
        PageType("share", share.get_absolute_url(), False),
        PageType("share event", f"{share.get_absolute_url()}events/{other_leaf(branching)}/", False),
        PageType("share 404", f"{share.get_absolute_url()}events/nope/", False, 404),
        PageType("share 410", gone.get_absolute_url(), False, 410),
    ]


def open_page_types(new_context, page_types: list[PageType], **options):
    """(page type, page) for each page type, the owner's logged in; bad statuses are expected."""
    new_context.allow(r"status of 4\d\d")
    owner = new_context(**options).new_page()
    log_in(owner, "owner")
    reviewer = new_context(**options).new_page()
    for page_type in page_types:
        page = owner if page_type.owner else reviewer
        response = page.goto(page_type.url)
        assert response.status == page_type.status, (page_type, response.status)
        page.evaluate("document.fonts.ready")
        yield page_type, page
