"""Search finds symbols (an emoji, an arrow, ✅, €) as words: the events indexed before,
whose text holds one, are indexed again (``trajectory.query.words``, ``fts5_body``).
Only the rows of texts beyond ASCII are read back and rewritten, a thousand at a time."""

from django.db import migrations

from eventviewer.fulltext import TABLE, WORDS
from eventviewer.trajectory.query import fts5_body, tsvector, words

CHUNK = 1000


def index_symbols(apps, schema_editor):
    connection = schema_editor.connection
    last = 0
    with connection.cursor() as cursor:
        while True:
            if connection.vendor == "postgresql":
                cursor.execute(
                    f"SELECT event_id, conversation_id, body FROM {TABLE} WHERE event_id > %s"
                    f" AND body ~ '[^\\x01-\\x7f]' ORDER BY event_id LIMIT {CHUNK}",
                    [last],
                )
            else:
                cursor.execute(
                    f"SELECT rowid, conversation, body FROM {TABLE} WHERE rowid > %s ORDER BY rowid LIMIT {CHUNK}",
                    [last],
                )
            rows = cursor.fetchall()
            if not rows:
                return
            last = rows[-1][0]
            for pk, conversation, body in rows:
                indexed = fts5_body(body)
                if indexed == body:  # no symbol in it: indexed as before
                    continue
                if connection.vendor == "postgresql":
                    cursor.execute(
                        f"UPDATE {TABLE} SET tsv = %s::tsvector WHERE event_id = %s",
                        [f"{tsvector(body)} '_c{conversation}'", pk],
                    )
                    # The list's search asks runs of words: this event's own, its symbols among them.
                    cursor.execute(
                        f"INSERT INTO {WORDS} (conversation_id, tsv) VALUES (%s, %s::tsvector)",
                        [conversation, " ".join(f"'{word}'" for word in set(words(body)))],
                    )
                else:
                    cursor.execute(f"DELETE FROM {TABLE} WHERE rowid = %s", [pk])
                    cursor.execute(
                        f"INSERT INTO {TABLE} (rowid, body, conversation) VALUES (%s, %s, %s)",
                        [pk, indexed, conversation],
                    )


class Migration(migrations.Migration):
    dependencies = [
        ("eventviewer", "0011_search_merges"),
    ]

    operations = [migrations.RunPython(index_symbols, migrations.RunPython.noop)]
