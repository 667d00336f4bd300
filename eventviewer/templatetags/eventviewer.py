from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django import template
from django.conf import settings
from django.template import Context
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

from eventviewer import cardhtml
from eventviewer.trajectory.failures import LABELS
from eventviewer.trajectory.projection import TURNS_MEANING
from eventviewer.trajectory.timeline import spoken_duration

if TYPE_CHECKING:  # for the annotations only: views import these tags (views.runs)
    from eventviewer.models import Conversation
    from eventviewer.scope import PageScope, Scope
    from eventviewer.trajectory.files import Drift, Fork
    from eventviewer.views.comments import Review, Shown
    from eventviewer.views.turns import TurnEvent, TurnRow

register = template.Library()

# Raw HTML off: any markup in event text comes out as text. markdown-it's link
# validation refuses javascript:, vbscript:, file: and data: (except images) URLs.
_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


def _render_link_open(self: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
    # Links in agent output go elsewhere: they get no referrer, no opener and no ranking.
    tokens[idx].attrSet("rel", "nofollow noopener noreferrer")
    return self.renderToken(tokens, idx, options, env)


_markdown.add_render_rule("link_open", _render_link_open)


@register.filter
def markdown(text: str) -> SafeString:
    """Render untrusted markdown: markdown-it escapes every text node itself. A text
    over EVENTVIEWER_MARKDOWN_MAX_CHARS shows as plain text: some inputs take
    markdown-it seconds per megabyte."""
    text = text or ""
    if len(text) > settings.EVENTVIEWER_MARKDOWN_MAX_CHARS:
        return mark_safe(f'<pre class="wrap plain-text">{escape(text)}</pre>')
    html: str = _markdown.render(text)
    return mark_safe(html)


@register.filter
def inline_markdown(text: str) -> SafeString:
    """One line of untrusted markdown rendered inline (code spans, emphasis; no blocks),
    for titles: a line starting with ``` or # stays a line."""
    html: str = _markdown.renderInline(text or "")
    return mark_safe(html)


@register.filter
def kind_label(kind: str) -> str:
    """ObservationEvent -> Observation: the suffix says nothing in a list of events."""
    kind = kind or ""
    return kind[: -len("Event")] if kind.endswith("Event") and len(kind) > 5 else kind


@register.filter
def short_id(value: str, length: int = 8) -> str:
    value = value or ""
    return value if len(value) <= length else value[:length] + "…"


@register.filter
def when(timestamp: str) -> datetime | str:
    """An event's timestamp as a datetime for |date, or the text as it came when it
    is not one (or one that no time zone can show, like year 9999 at -23:59)."""
    try:
        moment = datetime.fromisoformat(timestamp)
        return moment.astimezone(UTC) if moment.tzinfo else moment
    except (TypeError, ValueError, OverflowError):
        return timestamp or ""


@register.filter
def branch_name(conversation: Any, leaf_id: str) -> str:
    """What tells the branch ending at ``leaf_id`` apart (``trajectory.naming``)."""
    return str(conversation.branch_name(leaf_id))


@register.simple_tag
def turns_meaning() -> str:
    return TURNS_MEANING


@register.filter
def words(name: str) -> str:
    """A machine name as words (``waiting_for_confirmation``: "waiting for confirmation")."""
    return name.replace("_", " ")


@register.filter
def tokens(count: float | None) -> str:
    """A token count as people read it: 950, 12.3k, 4.1M."""
    if count is None:
        return ""
    count = round(count)  # a median can fall between two counts
    if count < 10_000:
        return f"{count:,}"
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


@register.filter
def percent(share: float | None) -> str:
    """A share as a percentage: 0.3333 -> 33.3%."""
    return "" if share is None else f"{share * 100:.1f}%"


def _sign(value: float) -> str:
    return "+" if value > 0 else "−" if value < 0 else "±"


@register.filter
def signed_percent(difference: float) -> str:
    """A difference of two shares in percentage points: +4.2 pp."""
    return f"{_sign(difference)}{abs(difference) * 100:.1f} pp"


@register.filter
def signed_tokens(difference: float) -> str:
    return f"{_sign(difference)}{tokens(abs(difference))}"


@register.filter
def signed_dollars(difference: float) -> str:
    return f"{_sign(difference)}{dollars(abs(difference))}"


@register.filter
def dollars(amount: float | None) -> str:
    if amount is None:
        return ""
    return f"${amount:,.2f}" if amount >= 1 or amount == 0 else f"${amount:.4f}"


@register.filter
def duration(seconds: float | None) -> str:
    """1.2 s, 4 min 12 s, 2 h 5 min."""
    return "" if seconds is None else spoken_duration(seconds)


@register.filter
def failure_label(code: str) -> str:
    """A problem or failure code (trajectory.failures) as words: exit_code -> non-zero exit code."""
    return LABELS.get(code, code)


@register.filter
def scope_of(scope: Scope | None, conversation: Conversation | None) -> PageScope | None:
    """The scope of a related conversation (parent, sub-agent), or None if out of reach."""
    return scope.of(conversation) if scope is not None else None


@register.simple_tag
def scope_url(scope: Scope, **params: str | None) -> str:
    """A link within the scope (a conversation's pages or a share link); the scope keeps
    the page's view unless ``view`` is given."""
    return scope.url(**params)


@register.simple_tag(takes_context=True)
def card_part(context: Context, template: str, entry: TurnEvent) -> SafeString:
    """``template`` rendered for a card on a branch page, built once per event (``cardhtml``)."""
    return cardhtml.part(template, entry, context["conversation"], context["scope"], context.get("leaf"))


@register.simple_tag
def threads_slot(index: int) -> SafeString:
    return cardhtml.threads_slot(index)


@register.simple_tag(takes_context=True)
def turn(context: Context, row: TurnRow) -> SafeString:
    """A turn of a branch page (``_turn.html``), kept by scope and branch (``cardhtml``)."""
    return cardhtml.turn(context, row)


@register.simple_tag
def event_url(scope: Scope, event_id: str, leaf: str | None = None) -> str:
    return scope.event_url(event_id, leaf)


@register.simple_tag
def page_url(scope: Scope, path: str, **params: str | None) -> str:
    """A page below the conversation's (or share link's): compare/, files/, export/ …"""
    return scope.page_url(path, **params)


@register.filter
def threads_at(review: Review | None, event_id: str) -> list[Shown]:
    """The comment threads a page shows at an event (views.comments.Review)."""
    return review.at.get(event_id, []) if review else []


@register.filter
def fork_at(drift: Drift | None, row: TurnRow) -> Fork | None:
    """The point in a turn where other branches forked off after which edits or commands ran there."""
    return drift.fork_at(row.turn.event_ids) if drift else None


@register.filter
def pretty_json(value: Any) -> str:
    """A stored JSON value indented for reading (the template escapes it)."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)
