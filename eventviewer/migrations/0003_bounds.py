"""Bounds: base_state.json moves to its own table (ConversationState), read only as a
download, never with a conversation."""

import lz4.block
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
        text = lz4.block.decompress(packed).decode()
        Conversation.objects.filter(pk=pk).update(base_state=text)


class Migration(migrations.Migration):
    dependencies = [
        ("eventviewer", "0002_packed_payload"),
    ]

    operations = [
        migrations.CreateModel(
            name="ConversationState",
            fields=[
                (
                    "conversation",
                    models.OneToOneField(
                        on_delete=models.deletion.CASCADE,
                        primary_key=True,
                        related_name="stored_state",
                        serialize=False,
                        to="eventviewer.conversation",
                    ),
                ),
                ("packed", models.BinaryField()),
            ],
        ),
        migrations.RunPython(move_states, restore_states),
        migrations.RemoveField(
            model_name="conversation",
            name="base_state",
        ),
    ]
