"""Event kinds in one registry: what each event records about its own failure and
thinking blocks (filled in from the stored payloads); per-response usage and run totals;
sub-agent conversations under their parent; ``head_path_length`` named for what it holds."""

import django.db.models.deletion
import lz4.block
import orjson
from django.db import migrations, models

CHUNK = 200  # events (and their payloads) in memory at once


def fill_failures(apps, schema_editor):
    """Each event's ``failure`` and ``thinking`` from its payload, CHUNK events at a time
    in primary key order, writing only the events that have either."""
    from eventviewer.trajectory.events import describe

    Event = apps.get_model("eventviewer", "Event")
    EventPayload = apps.get_model("eventviewer", "EventPayload")
    last = 0
    while True:
        chunk = list(EventPayload.objects.filter(pk__gt=last).order_by("pk").values_list("pk", "packed")[:CHUNK])
        if not chunk:
            return
        changed = []
        for pk, packed in chunk:
            try:
                light = describe(orjson.loads(lz4.block.decompress(packed)))
            except ValueError:  # not an event this version reads: leave it as it was
                continue
            if light.failure or light.thinking:
                changed.append(Event(pk=pk, failure=light.failure, thinking=light.thinking))
        Event.objects.bulk_update(changed, ["failure", "thinking"], batch_size=50)
        last = chunk[-1][0]


class Migration(migrations.Migration):

    dependencies = [
        ('eventviewer', '0002_packed_payload'),
    ]

    operations = [
        migrations.RenameField(
            model_name='conversation',
            old_name='head_depth',
            new_name='head_path_length',
        ),
        migrations.AddField(
            model_name='conversation',
            name='cache_read_tokens',
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='conversation',
            name='completion_tokens',
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='conversation',
            name='cost',
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='conversation',
            name='duration',
            field=models.FloatField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='conversation',
            name='parent',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='subagents', to='eventviewer.conversation'),
        ),
        migrations.AddField(
            model_name='conversation',
            name='parent_call_id',
            field=models.CharField(blank=True, max_length=255),
        ),
        migrations.AddField(
            model_name='conversation',
            name='prompt_tokens',
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='conversation',
            name='reasoning_tokens',
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='event',
            name='failure',
            field=models.CharField(blank=True, max_length=20),
        ),
        migrations.AddField(
            model_name='event',
            name='thinking',
            field=models.BooleanField(default=False),
        ),
        migrations.CreateModel(
            name='TurnUsage',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('response_id', models.CharField(max_length=255)),
                ('usage_id', models.CharField(blank=True, max_length=100)),
                ('model', models.CharField(blank=True, max_length=200)),
                ('prompt_tokens', models.BigIntegerField(blank=True, null=True)),
                ('completion_tokens', models.BigIntegerField(blank=True, null=True)),
                ('cache_read_tokens', models.BigIntegerField(blank=True, null=True)),
                ('cache_write_tokens', models.BigIntegerField(blank=True, null=True)),
                ('reasoning_tokens', models.BigIntegerField(blank=True, null=True)),
                ('cost', models.FloatField(blank=True, null=True)),
                ('latency', models.FloatField(blank=True, null=True)),
                ('conversation', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='usages', to='eventviewer.conversation')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('conversation', 'response_id'), name='usage_per_response')],
            },
        ),
        migrations.RunPython(fill_failures, migrations.RunPython.noop),
    ]
