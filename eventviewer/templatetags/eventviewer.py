from __future__ import annotations

from datetime import UTC, datetime

from django import template
from django.conf import settings
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

register = template.Library()

# Raw HTML off: any markup in event text comes out as text. markdown-it's link
# validation refuses javascript:, vbscript:, file: and data: (except images) URLs.
_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


@register.filter
def markdown(text: str) -> SafeString:
    """Render untrusted markdown: markdown-it escapes every text node itself. A text
    over EVENTVIEWER_MARKDOWN_MAX_CHARS shows as plain text: some inputs take
    markdown-it seconds per megabyte."""
    text = text or ""
    if len(text) > settings.EVENTVIEWER_MARKDOWN_MAX_CHARS:
        return mark_safe(f'<pre class="wrap plain-text">{escape(text)}</pre>')
    html = _markdown.render(text)
    return mark_safe(html.replace("<a href=", '<a rel="nofollow noopener noreferrer" href='))


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


@register.simple_tag
def scope_url(scope, **params) -> str:
    return scope.url(**params)


@register.simple_tag
def event_url(scope, event_id: str, leaf: str | None = None) -> str:
    return scope.event_url(event_id, leaf)
