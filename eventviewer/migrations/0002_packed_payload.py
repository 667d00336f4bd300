"""Event payloads stored LZ4-compressed (``EventPayload.packed``) instead of as text."""

import lz4.block
from django.db import migrations, models

CHUNK = 200  # payloads in memory at once (each up to EVENTVIEWER_MAX_EVENT_BYTES)


def _convert(apps, source: str, target: str, convert) -> None:
    """Rewrite every payload, CHUNK rows at a time in primary key order: no list of
    keys held, and no more query parameters than any SQLite build allows."""
    EventPayload = apps.get_model("eventviewer", "EventPayload")
    last = 0
    while True:
        rows = list(EventPayload.objects.filter(pk__gt=last).order_by("pk").only("pk", source)[:CHUNK])
        if not rows:
            return
        for row in rows:
            setattr(row, target, convert(getattr(row, source)))
        EventPayload.objects.bulk_update(rows, [target], batch_size=50)
        last = rows[-1].pk


def pack_payloads(apps, schema_editor):
    _convert(apps, "raw", "packed", lambda raw: lz4.block.compress(raw.encode()))


def unpack_payloads(apps, schema_editor):
    _convert(apps, "packed", "raw", lambda packed: lz4.block.decompress(packed).decode())


class Migration(migrations.Migration):
    dependencies = [
        ("eventviewer", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="eventpayload",
            name="packed",
            field=models.BinaryField(default=b""),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name="eventpayload",
            name="raw",
            field=models.TextField(default=""),
        ),
        migrations.RunPython(pack_payloads, unpack_payloads),
        migrations.RemoveField(
            model_name="eventpayload",
            name="raw",
        ),
    ]
