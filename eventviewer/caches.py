"""What a process keeps of what it read, for the next requests.

Two kinds: facts about a conversation that change only with an import (``cached``, in
Django's cache, keyed by the conversation's ``updated_at``), and what the last pages
built as live objects (``branch_memo``, ``kept_cards``): least recently used first out,
shared by a server's worker threads."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from cachetools import LRUCache
from django.conf import settings
from django.core.cache import cache

if TYPE_CHECKING:
    from eventviewer.models import Conversation
    from eventviewer.trajectory.cards import Card

# The cards of the events shown lately: an event's card comes from its JSON alone, which
# never changes once imported, so a page of a branch already shown builds none again. By
# conversation, its updated_at and the event's pk (SQLite hands a deleted conversation's
# event pks out again).
CARDS_KEPT = 2000
T = TypeVar("T")

_lock = threading.Lock()
# The readings of the branches read last (``branch_memo``), and what derives from them.
_branches: LRUCache[tuple[Any, ...], dict[str, Any]] = LRUCache(maxsize=settings.EVENTVIEWER_BRANCHES_KEPT)
_cards: LRUCache[tuple[Any, ...], Card] = LRUCache(maxsize=CARDS_KEPT)


def cached(key: str, compute: Callable[[], T]) -> T:
    """What ``compute`` returns, kept per process: for facts that change only with an import."""
    found: T | None = cache.get(key)
    if found is None:
        found = compute()
        cache.set(key, found, settings.EVENTVIEWER_DIAGRAM_CACHE_SECONDS)
    return found


def branch_memo(conversation: Conversation, leaf_pk: int, name: str, compute: Callable[[], T]) -> T:
    """What ``compute`` returns about the branch ending at ``leaf_pk``, kept per process
    for the few branches read last (EVENTVIEWER_BRANCHES_KEPT). A branch's reading (and
    what is derived from it) changes only with an import or a HEAD change
    (``updated_at``), and reading it again costs more than the rest of a page; kept as
    objects, not pickled into the cache."""
    key = (conversation.pk, conversation.updated_at, leaf_pk)
    with _lock:
        memo = _branches.get(key)
    if memo is not None and name in memo:
        found: T = memo[name]
        return found
    value = compute()
    if _branches.maxsize:  # 0: none kept
        with _lock:
            _branches.setdefault(key, {})[name] = value
    return value


def kept_cards(conversation: Conversation, pks: Iterable[int]) -> dict[int, Card]:
    """The cards of these events that a page built lately, by pk."""
    version = (conversation.pk, conversation.updated_at)
    found: dict[int, Card] = {}
    with _lock:
        for pk in pks:
            card = _cards.get((*version, pk))
            if card is not None:
                found[pk] = card
    return found


def keep_cards(conversation: Conversation, cards: dict[int, Card]) -> None:
    version = (conversation.pk, conversation.updated_at)
    if not _cards.maxsize:  # 0: none kept
        return
    with _lock:
        _cards.update(((*version, pk), card) for pk, card in cards.items())
