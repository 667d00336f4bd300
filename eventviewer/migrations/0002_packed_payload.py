"""Event payloads stored LZ4-compressed (``EventPayload.packed``) instead of as text."""

import lz4.block
from django.db import migrations, models

CHUNK = 2000


def pack_payloads(apps, schema_editor):
    EventPayload = apps.get_model("eventviewer", "EventPayload")
    pks = list(EventPayload.objects.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(pks), CHUNK):
        rows = EventPayload.objects.filter(pk__in=pks[start : start + CHUNK]).only("pk", "raw")
        for row in rows:
            row.packed = lz4.block.compress(row.raw.encode())
        EventPayload.objects.bulk_update(rows, ["packed"])


def unpack_payloads(apps, schema_editor):
    EventPayload = apps.get_model("eventviewer", "EventPayload")
    pks = list(EventPayload.objects.order_by("pk").values_list("pk", flat=True))
    for start in range(0, len(pks), CHUNK):
        rows = EventPayload.objects.filter(pk__in=pks[start : start + CHUNK]).only("pk", "packed")
        for row in rows:
            row.raw = lz4.block.decompress(row.packed).decode()
        EventPayload.objects.bulk_update(rows, ["raw"])


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
