"""Following live: the lineage an agent-server reports, and whether a sync or watch follows a conversation."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('eventviewer', '0003_kinds_usage_subagents'),
    ]

    operations = [
        migrations.AddField(
            model_name='conversation',
            name='forked_from_conversation_id',
            field=models.CharField(blank=True, max_length=32),
        ),
        migrations.AddField(
            model_name='conversation',
            name='forked_from_event_id',
            field=models.CharField(blank=True, max_length=255),
        ),
        migrations.AddField(
            model_name='conversation',
            name='live_until',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='conversation',
            name='parent_conversation_id',
            field=models.CharField(blank=True, max_length=32),
        ),
    ]
