from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from django import template
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict

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
    """Render untrusted markdown: markdown-it escapes every text node itself."""
    return mark_safe(_markdown.render(text or ""))


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
