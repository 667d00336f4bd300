"""The HTML of a branch page's turns, built once and kept in the ``cards`` cache.

Two levels, both pasted into later pages as they were built:

- ``part``: what a card shows of its event alone (its body, a batch's thought, a call). An
  event never changes once imported, so this is kept per event and is scope-free: no link
  of an owner's pages or a share link, no state of the branch (pending, pairing). Its one
  link, to the event's page, is kept as ``EVENT_HREF`` and filled in for the page's scope
  and branch when pasted.
- ``turn``: a whole turn as a page shows it, its heads' links and the branch's state
  included, so it is kept by scope (an owner's pages or one share link), branch, view and
  the conversation's ``live_version`` (an import or a HEAD change starts afresh). Comments
  and labels change at any time: the kept HTML holds a ``<!--threads:N-->`` slot where each
  entry's threads go, rendered anew for every page.

The placeholders start with ``<``, which escaped event text never holds (markdown too is
rendered with raw HTML off), so only the templates can have put them there.
"""

from __future__ import annotations

import hashlib
import re
from types import SimpleNamespace
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.cache import caches
from django.template import Context, Engine, Template
from django.template.loader import render_to_string
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

if TYPE_CHECKING:
    from eventviewer.models import Conversation
    from eventviewer.scope import PageScope, Scope
    from eventviewer.trajectory.events import Light
    from eventviewer.views.turns import TurnEvent, TurnRow

EVENT_HREF = mark_safe("<!--event-href-->")  # noqa: S308 (a constant: the templates' placeholder)
TURN = "conversations/_turn.html"
THREADS = "reviews/_threads.html"
_SLOT = re.compile(r"<!--threads:(\d+)-->")


def _templates_digest() -> str:
    """What the kept HTML was built with: a change to any template starts afresh (a shared
    cache outlives a deploy)."""
    digest = hashlib.sha256()
    for path in sorted((settings.BASE_DIR / "templates").glob("**/*.html")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


VERSION = _templates_digest()


def _key(conversation: Conversation, event: Light, template: str) -> str:
    # imported_at: SQLite hands a deleted conversation's pks out again, and a re-import starts afresh.
    parts = (VERSION, template, conversation.pk, conversation.imported_at.isoformat(), event.pk, event.event_id)
    return "card:" + hashlib.sha256(repr(parts).encode()).hexdigest()


def part(template: str, entry: TurnEvent, conversation: Conversation, scope: Scope, leaf: Light | None) -> SafeString:
    """``template`` rendered for ``entry``'s card, its event link for the page's scope and branch."""
    href = escape(scope.event_url(entry.event.event_id, leaf.event_id if leaf else None))
    if entry.forgotten_ranges:  # a condensation's links to what it dropped on this branch
        ranges = {"forgotten_ranges": entry.forgotten_ranges, "scope": scope, "leaf": leaf}
        return render_to_string(template, {"card": entry.card, "event": entry.event, "event_href": href, **ranges})
    cache = caches["cards"]
    key = _key(conversation, entry.event, template)
    html: str | None = cache.get(key)
    if html is None:
        # The card and its event only: what the page knows of scope and branch is not in reach.
        html = render_to_string(template, {"card": entry.card, "event": entry.event, "event_href": EVENT_HREF})
        cache.set(key, html, None)
    return mark_safe(html.replace(EVENT_HREF, href))  # noqa: S308 (escaped parts and one escaped URL)


def threads_slot(index: int) -> SafeString:
    """Where the threads of a turn's ``index``-th entry go (``turn`` fills it)."""
    return mark_safe(f"<!--threads:{int(index)}-->")  # noqa: S308 (an int)


def turn(context: Context, row: TurnRow) -> SafeString:
    """``row`` rendered by ``_turn.html`` in the page's ``context``, kept for the next page
    of the same scope, branch and view; then each entry's comment threads put in."""
    if context.get("deep"):  # a stretch of a long branch: its edges read differently
        html = _render_turn(context, row)
    else:
        key = _turn_key(context, row)
        cache = caches["cards"]
        kept: str | None = cache.get(key)
        if kept is None:
            kept = _render_turn(context, row)
            cache.set(key, kept, None)
        html = kept
    if not context.get("review"):
        return mark_safe(_SLOT.sub("", html))  # noqa: S308 (kept as rendered)
    threads = _engine(context).get_template(THREADS)
    review = context["review"]

    def fill(match: re.Match[str]) -> str:
        entry = row.entries[int(match.group(1))]
        if not review.at.get(entry.event.event_id):  # only the comment form: the page's one, its event put in
            return _without_threads(context, threads).replace(_NO_EVENT, escape(entry.event.event_id))
        with context.push(entry=entry):
            return str(threads.render(context))

    return mark_safe(_SLOT.sub(fill, html))  # noqa: S308 (kept as rendered, threads rendered)


# An event id no event has (ids are printable: see trajectory.events), for the comment form
# rendered once a page.
_NO_EVENT = "\ue000no-event\ue000"


def _without_threads(context: Context, threads: Template) -> str:
    """What ``_threads.html`` shows at an event without threads, for the ``_NO_EVENT`` event."""
    found: str | None = context.render_context.get(_NO_EVENT)
    if found is None:
        with context.push(entry=SimpleNamespace(event=SimpleNamespace(event_id=_NO_EVENT))):
            found = str(threads.render(context))
        context.render_context[_NO_EVENT] = found
    return found


def _render_turn(context: Context, row: TurnRow) -> str:
    with context.push(row=row):
        return str(_engine(context).get_template(TURN).render(context))


def _engine(context: Context) -> Engine:
    """The engine of the template being rendered (a tag's context always has one)."""
    assert context.template is not None
    return context.template.engine


def fragment_key(name: str, scope: PageScope, *parts: object) -> str:
    """The key of a kept part of a branch page (a turn, or ``{% cache None name key
    using="cards" %}``): the templates, the conversation's state (``live_version``), the page's
    scope, view and review queue (whose parameters its links keep), and ``parts``, what else
    the part shows depends on."""
    conversation = scope.conversation
    read = settings.EVENTVIEWER_FULL_READ_MAX  # over it, a branch is read a stretch at a time
    whole = (VERSION, name, conversation.pk, conversation.live_version, read, scope.base, scope.view, scope.keep, parts)
    return hashlib.sha256(repr(whole).encode()).hexdigest()


def _turn_key(context: Context, row: TurnRow) -> str:
    # What a turn's HTML depends on besides what every kept part does (fragment_key): its
    # branch, whether its reader may share, and the sub-agents its calls ran (other
    # conversations, imported at any time).
    scope, leaf = context["scope"], context.get("leaf")
    subagents = tuple((e.subagent.pk, e.subagent.title) for e in row.entries if e.subagent)
    entries = tuple(e.event.event_id for e in row.entries)
    branch = leaf.event_id if leaf else ""
    parts = (branch, bool(context.get("can_share")), row.index, row.side, entries, subagents)
    return "turn:" + fragment_key(TURN, scope, *parts)
