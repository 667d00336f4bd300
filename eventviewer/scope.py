"""Where a page's links point: a conversation's own pages, or a reviewer's share link.

``Scope`` is the one place that decides whether a page is a reviewer's shared view;
templates ask ``scope.read_only`` and build every link through it."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from eventviewer.models import Conversation, ShareLink, event_path, raw_path


@dataclass(frozen=True)
class Scope:
    conversation: Conversation | None
    share: ShareLink | None = None
    reviewer: bool = False  # a reviewer's page even without a valid link (an error under /s/)

    @classmethod
    def shared(cls, share: ShareLink) -> Scope:
        return cls(share.conversation, share, reviewer=True)

    @property
    def read_only(self) -> bool:
        return self.reviewer or self.share is not None

    @property
    def base(self) -> str:
        if self.share is not None:
            return self.share.get_absolute_url()
        return self.conversation.get_absolute_url() if self.conversation else "/"

    def url(self, **params: str | None) -> str:
        query = urlencode({k: v for k, v in params.items() if v})
        return self.base + (f"?{query}" if query else "")

    def event_url(self, event_id: str, leaf: str | None = None) -> str:
        return self.base + event_path(event_id, leaf)

    def raw_url(self, event_id: str) -> str:
        return self.base + raw_path(event_id)

    def diagram_url(self, leaf: str | None = None) -> str:
        return f"{self.base}diagram.svg" + (f"?{urlencode({'leaf': leaf})}" if leaf else "")
