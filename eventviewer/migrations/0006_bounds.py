"""Bounds: base_state.json moves to its own table (ConversationState), read only as a
download; a conversation being deleted is hidden (``deleting``); uploads from the
Import page wait for a background worker (Upload)."""

import django.db.models.deletion
import lz4.block
import django.utils.timezone
import uuid
from django.conf import settings
from django.db import migrations, models


def move_states(apps, schema_editor):
    Conversation = apps.get_model("eventviewer", "Conversation")
    ConversationState = apps.get_model("eventviewer", "ConversationState")
    for pk, text in Conversation.objects.exclude(base_state="").values_list("pk", "base_state").iterator():
        ConversationState.objects.create(conversation_id=pk, packed=lz4.block.compress(text.encode()))


def restore_states(apps, schema_editor):
    Conversation = apps.get_model("eventviewer", "Conversation")
    ConversationState = apps.get_model("eventviewer", "ConversationState")
    for pk, packed in ConversationState.objects.values_list("pk", "packed").iterator():
        Conversation.objects.filter(pk=pk).update(base_state=lz4.block.decompress(packed).decode())


class Migration(migrations.Migration):

    dependencies = [
        ('eventviewer', '0005_compare'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ConversationState',
            fields=[
                ('conversation', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='stored_state', serialize=False, to='eventviewer.conversation')),
                ('packed', models.BinaryField()),
            ],
        ),
        migrations.RunPython(move_states, restore_states),
        migrations.RemoveField(
            model_name='conversation',
            name='base_state',
        ),
        migrations.AddField(
            model_name='conversation',
            name='deleting',
            field=models.BooleanField(default=False),
        ),
        migrations.CreateModel(
            name='Upload',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('names', models.JSONField(default=list)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('task_id', models.CharField(blank=True, max_length=64)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('results', models.JSONField(default=list)),
                ('problems', models.JSONField(default=list)),
                ('created_by', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-created_at'],
            },
        ),
    ]
