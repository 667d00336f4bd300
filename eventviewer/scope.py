"""Where a page's links point: a conversation's own pages, or a reviewer's share link.

``Scope`` is the one place that decides whether a page is a reviewer's shared view;
templates ask ``scope.read_only`` and build every link through it. A conversation's pages
get a ``PageScope`` (its conversation is never None), a share link's a ``SharedScope``
(its share link neither); a bare ``Scope`` serves the pages of no one conversation
(error pages, comparing two conversations)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Self
from urllib.parse import quote, urlencode

if TYPE_CHECKING:  # models builds its events' URLs with event_path
    from eventviewer.models import Conversation, ShareLink

MAX_NESTING = 20  # sub-agents of sub-agents: as deep as a share link follows them


def event_path(event_id: str, leaf: str | None = None) -> str:
    """An event page's path below its conversation's (or share link's) URL, with the
    branch to go back to. An id that a browser would read as a dot segment ("." or
    "..") and drop goes in the query."""
    query = {"id": event_id} if event_id in (".", "..") else {}
    path = "events/" if query else f"events/{quote(event_id, safe='')}/"
    if leaf:
        query["leaf"] = leaf
    return path + (f"?{urlencode(query)}" if query else "")


def raw_path(event_id: str) -> str:
    """An event's stored JSON as a download, below its conversation's (or share link's) URL."""
    if event_id in (".", ".."):
        return f"events/raw.json?{urlencode({'id': event_id})}"
    return f"events/{quote(event_id, safe='')}/raw.json"


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
    # How the page reads its branch when not the default (``model``): every link it builds keeps it.
    view: str | None = None
    # A review queue's parameters (views.queue): the branch page's own links keep them.
    keep: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def shared(share: ShareLink) -> SharedScope:
        return SharedScope(share.conversation, share, reviewer=True)

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

    def of(self, other: Conversation | None) -> PageScope | None:
        """The scope of a related conversation (a parent or a sub-agent): under a share
        link, only the shared conversation and its sub-agents are reachable."""
        if other is None:
            return None
        if self.share is None:
            return PageScope(other, view=self.view)
        return SharedScope(other, self.share, reviewer=True, view=self.view) if shares(self.share, other) else None

    def viewing(self, view: str | None) -> Self:
        """This scope on a page that reads its branch as ``view`` (None: the default)."""
        return replace(self, view=view or None)

    def query(self, params: dict[str, str | None], keep: bool = False) -> str:
        """``?…`` of ``params`` with the page's view unless they name one ("" for none),
        and with ``keep``, the queue's parameters."""
        kept: dict[str, str | None] = dict(self.keep) if keep else {}
        merged = {**kept, **params, "view": params.get("view", self.view)}
        query = urlencode({k: v for k, v in merged.items() if v})
        return f"?{query}" if query else ""

    def url(self, **params: str | None) -> str:
        """The branch page with ``params`` (and the queue it is walked in)."""
        return self.base + self.query(params, keep=True)

    def keeping(self, keep: tuple[tuple[str, str], ...]) -> Self:
        """This scope walked in a review queue (a share link's never is)."""
        return self if self.share is not None else replace(self, keep=keep)

    def at_url(self, leaf: str, event_id: str) -> str:
        """An event on the branch ending at ``leaf``, focused: the link a card and the diagram give."""
        return self.url(leaf=leaf, at=event_id) + "#event-" + quote(event_id, safe="")

    def action_url(self, path: str) -> str:
        """Where a review form posts (``comments/``, ``verdict/``): its answer keeps the queue."""
        return self.base + path + self.query({}, keep=True)

    def page_url(self, path: str, /, **params: str | None) -> str:
        """A page below the conversation's (``compare/``, ``files/``, ``export/``, ``diagram.svg`` …)."""
        return self.base + path + self.query(params)

    def event_url(self, event_id: str, leaf: str | None = None) -> str:
        path = event_path(event_id, leaf)
        if not self.view:
            return self.base + path
        return self.base + path + ("&" if "?" in path else "?") + urlencode({"view": self.view})

    def raw_url(self, event_id: str) -> str:
        return self.base + raw_path(event_id)


@dataclass(frozen=True)
class PageScope(Scope):
    """The scope of one conversation's pages."""

    conversation: Conversation


@dataclass(frozen=True)
class SharedScope(PageScope):
    """The scope of a reviewer's pages, opened by a share link."""

    share: ShareLink
