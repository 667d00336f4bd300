"""Import one conversation folder and print a JSON line: how long it took.

Run by common.import_in_child in a fresh process, so the parent can read this
process's peak RSS. It calls the same ``import_paths`` as
``manage.py import_conversation``; the time covers the import alone, not the
interpreter, Django start-up and connecting to the database. The environment (DATABASE_URL) picks the database.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from common import setup_django


def main() -> None:
    folder = Path(sys.argv[1])
    setup_django(os.environ["DATABASE_URL"])
    from django.db import connection

    from eventviewer.importer import import_paths

    connection.ensure_connection()  # connecting is start-up too
    started = time.perf_counter()
    (result,) = import_paths([(folder, str(folder))])
    seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "conversation_id": result.conversation.conversation_id,
                "added": result.added,
                "seconds": seconds,
            }
        )
    )


if __name__ == "__main__":
    main()
