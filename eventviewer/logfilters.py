"""What the log says of a request refused for what it asked: one line at INFO.

A 4xx (a bad query, a bad upload, a page that does not exist, a refused CSRF token) is
the user's error, not the server's: Django logs a BadRequest with its traceback at
WARNING, which buries the real errors. Those (5xx) keep their level and traceback."""

from __future__ import annotations

import logging


class UsersErrors(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if not isinstance(status, int) or status >= 500:
            return True
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
        # The logger let it through at its old level: it shows only where INFO does.
        return logging.getLogger(record.name).isEnabledFor(logging.INFO)
