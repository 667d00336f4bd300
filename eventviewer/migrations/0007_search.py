"""Search: the full-text index of events (SQLite FTS5 or PostgreSQL tsvector + GIN,
see eventviewer.fulltext), filled here for the events already imported; and each
conversation's count of events recording a failure, for the list's filter."""

import lz4.block
import orjson
from django.db import migrations, models

from eventviewer import fulltext
from eventviewer.trajectory.query import event_text

CHUNK = 1000


def create_index(apps, schema_editor):
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        for statement in fulltext.schema(connection.vendor):
            cursor.execute(statement)
    fill(apps, connection)


def fill(apps, connection):
    """Index the events imported before, a thousand at a time."""
    Event = apps.get_model("eventviewer", "Event")
    EventPayload = apps.get_model("eventviewer", "EventPayload")
    last = 0
    while True:
        rows = list(
            Event.objects.filter(pk__gt=last).order_by("pk").values_list("pk", "conversation_id")[:CHUNK]
        )
        if not rows:
            break
        last = rows[-1][0]
        packed = dict(EventPayload.objects.filter(pk__in=[pk for pk, _ in rows]).values_list("pk", "packed"))
        texts = []
        for pk, conversation in rows:
            if pk in packed:
                text = event_text(orjson.loads(lz4.block.decompress(packed[pk])))
                if text:
                    texts.append((pk, conversation, text, ""))  # "": PostgreSQL's words made by insert
        with connection.cursor() as cursor:
            fulltext.insert(connection, cursor.cursor, texts)
    Conversation = apps.get_model("eventviewer", "Conversation")
    for conversation in Conversation.objects.all():
        conversation.failure_count = Event.objects.filter(conversation=conversation).exclude(failure="").count()
        conversation.save(update_fields=["failure_count"])


def drop_index(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        for statement in fulltext.UNDO[schema_editor.connection.vendor]:
            cursor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [
        ("eventviewer", "0006_bounds"),
    ]

    operations = [
        migrations.AddField(
            model_name="conversation",
            name="failure_count",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(create_index, drop_index),
    ]
