from django.db import connection
from django_tasks_db.management.commands.db_worker import Command as DatabaseWorker

from eventviewer.imports.progress import ticking
from eventviewer.tasks import reap_stopped_imports

REAP_EVERY = 15.0  # seconds between looks for imports whose worker stopped


def _reap() -> None:
    try:
        reap_stopped_imports()
    finally:
        connection.close()  # this thread's own connection


class Command(DatabaseWorker):
    help = (
        "Run background tasks (imports from the Import page, deletions): django-tasks-db's db_worker, "
        "which also marks failed the imports of any worker that stopped mid-way (killed, out of memory). "
        "Run one or more beside the web server; they may run on other machines sharing the database "
        "and EVENTVIEWER_UPLOAD_DIR."
    )

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        # The reloader runs the worker in a child process, which a signal to the
        # parent would leave running: off unless asked for, even with DEBUG on.
        parser.set_defaults(reload=False)

    def handle(self, *args, **options) -> None:
        _reap()
        with ticking(REAP_EVERY, _reap):
            super().handle(*args, **options)
