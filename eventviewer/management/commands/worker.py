import logging
import time
from argparse import ArgumentParser
from typing import Any

from django.db import OperationalError, connection
from django_tasks_db.management.commands.db_worker import Command as DatabaseWorker
from django_tasks_db.utils import is_locked_database_exception

from eventviewer.imports.progress import ticking
from eventviewer.tasks import reap_stopped_imports

REAP_EVERY = 15.0  # seconds between looks for imports whose worker stopped
LOCKED_PAUSE = 1.0  # seconds before a worker looks again when SQLite's write lock is held
logger = logging.getLogger("eventviewer.worker")


def _reap() -> None:
    try:
        reap_stopped_imports()
    except OperationalError as e:
        if not is_locked_database_exception(e):
            raise
        logger.info("The database is locked (an import is writing): looking for stopped imports later.")
    finally:
        connection.close()  # this thread's own connection


class Command(DatabaseWorker):
    help = (
        "Run background tasks (imports from the Import page, deletions): django-tasks-db's db_worker, "
        "which also marks failed the imports of any worker that stopped mid-way (killed, out of memory). "
        "Run one or more beside the web server; they may run on other machines sharing the database "
        "and EVENTVIEWER_UPLOAD_DIR. A worker waits out a locked SQLite database (another worker's "
        "import holds the write lock until it commits) instead of exiting."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        super().add_arguments(parser)
        # The reloader runs the worker in a child process, which a signal to the
        # parent would leave running: off unless asked for, even with DEBUG on.
        parser.set_defaults(reload=False)

    def handle(self, *args: Any, **options: Any) -> None:
        _reap()
        with ticking(REAP_EVERY, _reap):
            while True:
                try:
                    super().handle(*args, **options)
                    return
                except OperationalError as e:
                    # db_worker gives up on a lock it meets while claiming a task
                    # (SQLite's timeout, 60 s): wait, then poll again.
                    if not is_locked_database_exception(e):
                        raise
                    self.stderr.write("The database is locked (an import is writing); waiting to look for tasks again.")
                    connection.close()
                    time.sleep(LOCKED_PAUSE)
