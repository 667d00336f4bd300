"""Where a page's links point: a conversation's own pages, or a reviewer's share link.

``Scope`` is the one place that decides whether a page is a reviewer's shared view;
templates ask ``scope.read_only`` and build every link through it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from urllib.parse import quote, urlencode

from eventviewer.models import Conversation, ShareLink, event_path, raw_path

MAX_NESTING = 20  # sub-agents of sub-agents: as deep as a share link follows them


def shares(share: ShareLink, conversation: Conversation) -> bool:
    """Whether ``share`` opens ``conversation``: the shared one, or a sub-agent below it."""
    current: Conversation | None = conversation
    for _ in range(MAX_NESTING):
        if current is None:
            return False
        if current.pk == share.conversation_id:
            return True
        current = current.parent
    return False


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

    @cached_property  # every link of a page starts with it
    def base(self) -> str:
        if self.share is not None:
            root = self.share.get_absolute_url()
            if self.conversation is not None and self.conversation.pk != self.share.conversation_id:
                return f"{root}sub/{self.conversation.conversation_id}/"  # a sub-agent of the shared one
            return root
        return self.conversation.get_absolute_url() if self.conversation else "/"

    def of(self, other: Conversation | None) -> Scope | None:
        """The scope of a related conversation (a parent or a sub-agent): under a share
        link, only the shared conversation and its sub-agents are reachable."""
        if other is None:
            return None
        if self.share is None:
            return Scope(other)
        return Scope(other, self.share, reviewer=True) if shares(self.share, other) else None

    def url(self, **params: str | None) -> str:
        query = urlencode({k: v for k, v in params.items() if v})
        return self.base + (f"?{query}" if query else "")

    def at_url(self, leaf: str, event_id: str) -> str:
        """An event on the branch ending at ``leaf``, focused: the link a card and the diagram give."""
        return self.url(leaf=leaf, at=event_id) + "#event-" + quote(event_id, safe="")

    def page_url(self, path: str, /, **params: str | None) -> str:
        """A page below the conversation's (``compare/``, ``files/``, ``export/``, ``export.zip``)."""
        query = urlencode({k: v for k, v in params.items() if v})
        return self.base + path + (f"?{query}" if query else "")

    def event_url(self, event_id: str, leaf: str | None = None) -> str:
        return self.base + event_path(event_id, leaf)

    def raw_url(self, event_id: str) -> str:
        return self.base + raw_path(event_id)

    def diagram_url(self, leaf: str | None = None) -> str:
        return f"{self.base}diagram.svg" + (f"?{urlencode({'leaf': leaf})}" if leaf else "")
