"""PostgreSQL's search index takes each event's words from the import (made by
``trajectory.query.tsvector`` in the parser workers) instead of computing them itself
from the text: the column stops being generated. The words already stored stay."""

from django.db import migrations

TABLE = "eventviewer_eventtext"
GENERATED = f"""ALTER TABLE {TABLE} ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    to_tsvector('simple', regexp_replace(body, '[^[:alnum:]]+', ' ', 'g'))
    || ('_c' || conversation_id::text)::tsvector
) STORED"""


def words_from_the_import(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER TABLE {TABLE} ALTER COLUMN tsv DROP EXPRESSION IF EXISTS")


def words_from_the_database(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER TABLE {TABLE} DROP COLUMN tsv")
        schema_editor.execute(GENERATED)
        schema_editor.execute(f"CREATE INDEX eventtext_tsv_idx ON {TABLE} USING gin (tsv)")


class Migration(migrations.Migration):
    dependencies = [
        ("eventviewer", "0009_anchors"),
    ]

    operations = [migrations.RunPython(words_from_the_import, words_from_the_database)]
