from typing import Any

from django.db import migrations, models


def sign_instances(apps: Any, schema_editor: Any) -> None:
    """The rows imported before patterns existed get their first failure and pattern."""
    from eventviewer.models import signed

    instance = apps.get_model("eventviewer", "Instance")
    event, payload = apps.get_model("eventviewer", "Event"), apps.get_model("eventviewer", "EventPayload")
    for row in instance.objects.filter(pattern__isnull=True).iterator():
        for name, value in signed(event, payload, row.conversation_id, row.outcome, row.error).items():
            setattr(row, name, value)
        row.save(
            update_fields=["pattern", "first_failure", "first_failure_kind", "first_failure_tool", "first_failure_text"]
        )


class Migration(migrations.Migration):
    dependencies = [
        ("eventviewer", "0012_reading_symbols"),
    ]

    operations = [
        migrations.AddField(
            model_name="instance", name="first_failure", field=models.CharField(blank=True, max_length=255)
        ),
        migrations.AddField(
            model_name="instance", name="first_failure_kind", field=models.CharField(blank=True, max_length=20)
        ),
        migrations.AddField(
            model_name="instance", name="first_failure_text", field=models.CharField(blank=True, max_length=300)
        ),
        migrations.AddField(
            model_name="instance", name="first_failure_tool", field=models.CharField(blank=True, max_length=255)
        ),
        migrations.AddField(
            model_name="instance", name="pattern", field=models.CharField(blank=True, max_length=300, null=True)
        ),
        migrations.AddIndex(
            model_name="instance", index=models.Index(fields=["run", "pattern"], name="instance_run_pattern")
        ),
        migrations.RunPython(sign_instances, migrations.RunPython.noop, elidable=True),
    ]
