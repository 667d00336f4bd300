"""Databases made by an earlier eventviewer keep their conversations across upgrades."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from eventviewer.models import EventPayload

TEXT_PAYLOADS = ("eventviewer", "0001_initial")
PACKED_PAYLOADS = ("eventviewer", "0002_packed_payload")
BOUNDS = ("eventviewer", "0006_bounds")
pytestmark = pytest.mark.slow  # migrates the database back and forth
JSON = '{"id": "e1", "kind": "MessageEvent", "text": "héllo \\u2028 wörld", "n": [1, 2, 3]}'


def migrate(target: tuple[str, str]):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target])
    return executor.loader.project_state([target]).apps


def migrate_to_latest() -> None:
    """Where the rest of the suite expects the schema."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_payloads_stored_as_text_are_packed_and_read_back_the_same():
    old = migrate(TEXT_PAYLOADS)
    conversation = old.get_model("eventviewer", "Conversation").objects.create(conversation_id="a" * 32)
    Event, Payload = old.get_model("eventviewer", "Event"), old.get_model("eventviewer", "EventPayload")
    texts = {}
    for seq in range(450):  # more than one chunk of the migration
        event = Event.objects.create(
            conversation=conversation, event_id=f"e{seq}", seq=seq, depth=seq, kind="MessageEvent", digest="d"
        )
        texts[event.pk] = Payload.objects.create(event=event, raw=JSON.replace("e1", f"e{seq}")).raw

    migrate(PACKED_PAYLOADS)
    assert {p.pk: p.raw for p in EventPayload.objects.all()} == texts

    # And back, for a downgrade.
    old = migrate(TEXT_PAYLOADS)
    assert dict(old.get_model("eventviewer", "EventPayload").objects.values_list("pk", "raw")) == texts
    migrate_to_latest()


@pytest.mark.django_db(transaction=True)
def test_base_states_move_to_their_own_table_and_back():
    from eventviewer.models import ConversationState, unpack

    old = migrate(PACKED_PAYLOADS)
    Conversation = old.get_model("eventviewer", "Conversation")
    Conversation.objects.create(conversation_id="b" * 32, base_state='{"id": "b", "n": 1.10}')
    Conversation.objects.create(conversation_id="c" * 32)
    migrate(BOUNDS)
    # Read without the Conversation model, which has columns later migrations add.
    rows = ConversationState.objects.values_list("conversation__conversation_id", "packed")
    assert [(cid, unpack(packed)) for cid, packed in rows] == [("b" * 32, b'{"id": "b", "n": 1.10}')]
    old = migrate(PACKED_PAYLOADS)
    states = dict(old.get_model("eventviewer", "Conversation").objects.values_list("conversation_id", "base_state"))
    assert states == {"b" * 32: '{"id": "b", "n": 1.10}', "c" * 32: ""}
    migrate_to_latest()
