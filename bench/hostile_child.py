"""Run ``manage.py import_conversation PATH`` in this fresh process and print one JSON
line: whether it imported, the first problem line, the time, and this process's peak
memory (VmHWM, which unlike ru_maxrss owes nothing to the process that started it)."""

from __future__ import annotations

import io
import json
import os
import re
import sys
import time
from pathlib import Path

from common import setup_django


def peak_mb() -> float:
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+)", status).group(1)) / 1024


def main() -> None:
    setup_django(os.environ["DATABASE_URL"])
    from django.core.management import CommandError, call_command

    out, err = io.StringIO(), io.StringIO()
    started = time.perf_counter()
    try:
        call_command("import_conversation", sys.argv[1], stdout=out, stderr=err)
        imported = True
    except CommandError:
        imported = False
    seconds = time.perf_counter() - started
    first = (err.getvalue() or out.getvalue()).strip().splitlines()[:1]
    ids = re.findall(r"^\w+ ([0-9a-f]{32}):", out.getvalue(), re.M)
    print(
        json.dumps(
            {
                "imported": imported,
                "line": first[0] if first else "",
                "seconds": seconds,
                "peak_mb": peak_mb(),
                "conversation_ids": ids,
            }
        )
    )


if __name__ == "__main__":
    main()
