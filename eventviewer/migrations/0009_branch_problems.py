"""Each branch's pending actions and mismatched results in the stored skeleton (the branch
list shows them), for the conversations imported before it was counted at import."""

from django.db import migrations

from eventviewer.trajectory.pairing import Identity, problems_per_leaf

COLUMNS = ("id", "parent_id", "event_id", "kind", "tool_name", "tool_call_id", "action_id", "executable")


def count(apps, schema_editor):
    Conversation = apps.get_model("eventviewer", "Conversation")
    Event = apps.get_model("eventviewer", "Event")
    for conversation in Conversation.objects.exclude(skeleton={}).only("pk", "skeleton").iterator():
        nodes = conversation.skeleton.get("nodes") or []
        rows = Event.objects.filter(conversation=conversation, depth__isnull=False).values_list(*COLUMNS)
        found = problems_per_leaf(Identity._make(row) for row in rows.iterator())
        for node in nodes:
            if node.get("leaf") and node["id"] in found:
                node["pending"], node["mismatched"] = found[node["id"]]
        conversation.save(update_fields=["skeleton"])


class Migration(migrations.Migration):
    dependencies = [
        ("eventviewer", "0008_runs"),
    ]

    operations = [
        migrations.RunPython(count, migrations.RunPython.noop),
    ]
