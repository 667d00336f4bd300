"""Import one path (a conversation folder, a root of them, an evaluation output) and
print a JSON line: how long it took.

Run by common.import_in_child in a fresh process, so the parent can read this
process's peak RSS. It imports as ``manage.py import_conversation`` does (``import_paths`` with the
process tuned for a bulk import); the time covers the import alone, not the
interpreter's and Django's start-up: connecting to the database, and the
initialisation Django's ORM does on a process's first query (about 4 ms here),
happen before the clock starts, as they have in a running server that imports an
upload. The environment (DATABASE_URL) picks the database.
"""

from __future__ import annotations

import json
import os
import re
import resource
import sys
import time
from pathlib import Path

from common import setup_django


def peak_rss_mb() -> float:
    """This process's peak resident set (VmHWM: ru_maxrss would carry the peak of the
    process that started it, which Linux keeps across exec) or, when larger, that of a
    parser worker it forked (RUSAGE_CHILDREN: the largest of the workers it reaped)."""
    own = int(re.search(r"VmHWM:\s+(\d+)", open("/proc/self/status").read()).group(1))
    return max(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024


def main() -> None:
    folder = Path(sys.argv[1])
    setup_django(os.environ["DATABASE_URL"])
    from eventviewer.imports.importer import import_paths, tuned_for_bulk_import
    from eventviewer.models import Conversation

    Conversation.objects.filter(conversation_id="").exists()  # connects, and warms the ORM up
    with tuned_for_bulk_import():
        started = time.perf_counter()
        results = import_paths([(folder, str(folder))])
        seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "conversation_id": results[0].conversation.conversation_id,
                "added": sum(r.added for r in results),  # a root or an evaluation output holds many
                "seconds": seconds,
                "peak_rss_mb": peak_rss_mb(),
            }
        )
    )


if __name__ == "__main__":
    main()
