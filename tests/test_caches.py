"""What a process keeps of the branches it read (``caches.branch_memo``)."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.utils import timezone

from eventviewer import caches
from eventviewer.models import Conversation

pytestmark = pytest.mark.django_db


def test_it_keeps_the_branches_read_last_and_forgets_the_least_recently_used():
    conversation = Conversation.objects.create(conversation_id="c" * 32)
    computed: list[int] = []

    def read(leaf: int) -> str:
        def compute() -> str:
            computed.append(leaf)
            return f"reading of {leaf}"

        return caches.branch_memo(conversation, leaf, "reading", compute)

    kept = settings.EVENTVIEWER_BRANCHES_KEPT
    assert kept >= 2
    for leaf in range(kept):
        assert read(leaf) == f"reading of {leaf}"
    assert read(0) == "reading of 0"  # kept, and now the most recently used
    assert computed == list(range(kept))
    read(kept)  # one more: the least recently used (1) goes
    read(0)
    assert computed == [*range(kept), kept]
    read(1)
    assert computed == [*range(kept), kept, 1]


def test_an_import_or_a_head_change_reads_the_branch_again():
    conversation = Conversation.objects.create(conversation_id="d" * 32)
    assert caches.branch_memo(conversation, 1, "reading", lambda: "before") == "before"
    assert caches.branch_memo(conversation, 1, "reading", lambda: "again") == "before"
    conversation.updated_at = timezone.now()
    assert caches.branch_memo(conversation, 1, "reading", lambda: "after") == "after"
