"""Skip pointers: each event's anchor (its ancestor at tree.anchor_depth(depth)), so that
any part of a long branch is read without the rest of it (EventQuerySet.on_branch);
filled here for the events already imported, one conversation at a time. (An event left
without one is still read right: readers walk parents where an anchor is missing.)"""

from django.db import connection, migrations, models

from eventviewer.trajectory.tree import anchors

BATCH = 2000


def fill_anchors(apps, schema_editor):
    Conversation = apps.get_model("eventviewer", "Conversation")
    Event = apps.get_model("eventviewer", "Event")
    table = Event._meta.db_table
    for conversation in Conversation.objects.values_list("pk", flat=True).iterator():
        nodes = Event.objects.filter(conversation_id=conversation, depth__isnull=False)
        found = anchors(nodes.values_list("pk", "parent_id", "depth").iterator(chunk_size=BATCH))
        changes = [(anchor, pk) for pk, anchor in found.items() if anchor is not None]
        with connection.cursor() as cursor:
            for start in range(0, len(changes), BATCH):
                cursor.executemany(f"UPDATE {table} SET anchor = %s WHERE id = %s", changes[start : start + BATCH])


class Migration(migrations.Migration):
    dependencies = [
        ("eventviewer", "0008_runs"),
    ]

    operations = [
        migrations.AddField(
            model_name="event",
            name="anchor",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.RunPython(fill_anchors, migrations.RunPython.noop),
    ]
