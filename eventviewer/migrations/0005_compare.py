"""What each tool result says its call did to the workspace's files (``Event.effect``:
a recognised edit, or a command that may have changed files), filled in from the stored
payloads of the conversations imported before."""

import lz4.block
import orjson
from django.db import migrations, models

CHUNK = 200  # events (and their payloads) in memory at once


def fill_effects(apps, schema_editor):
    """Each ObservationEvent's ``effect`` from its payload, CHUNK events at a time in
    primary key order, writing only the events that have one."""
    from eventviewer.trajectory.files import effect

    Event = apps.get_model("eventviewer", "Event")
    EventPayload = apps.get_model("eventviewer", "EventPayload")
    results = EventPayload.objects.filter(event__kind="ObservationEvent").order_by("pk")
    last = 0
    while True:
        chunk = list(results.filter(pk__gt=last).values_list("pk", "packed")[:CHUNK])
        if not chunk:
            return
        changed = []
        for pk, packed in chunk:
            try:
                data = orjson.loads(lz4.block.decompress(packed))
            except orjson.JSONDecodeError:
                continue
            found = effect(data) if isinstance(data, dict) else ""
            if found:
                changed.append(Event(pk=pk, effect=found))
        Event.objects.bulk_update(changed, ["effect"], batch_size=50)
        last = chunk[-1][0]


class Migration(migrations.Migration):

    dependencies = [
        ('eventviewer', '0004_live'),
    ]

    operations = [
        migrations.AddField(
            model_name='event',
            name='effect',
            field=models.CharField(blank=True, max_length=10),
        ),
        migrations.RunPython(fill_effects, migrations.RunPython.noop),
    ]
