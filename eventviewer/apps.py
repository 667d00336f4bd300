from typing import Any

from django.apps import AppConfig
from django.db import OperationalError, connection


class EventviewerConfig(AppConfig):
    name = "eventviewer"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.conf import settings
        from django.contrib.auth.signals import user_logged_in

        from eventviewer import checks  # noqa: F401  (registers them)

        if settings.SQLITE:
            user_logged_in.disconnect(dispatch_uid="update_last_login")
            user_logged_in.connect(last_login_unless_locked, dispatch_uid="update_last_login")


def last_login_unless_locked(sender: Any, user: Any, **kwargs: Any) -> None:
    """Django's last_login update, given up at once while an import holds SQLite's write
    lock: a login must not wait minutes (or fail) for a figure nothing here reads."""
    from django.conf import settings
    from django.contrib.auth.models import update_last_login

    with connection.cursor() as cursor:
        cursor.execute("PRAGMA busy_timeout = 0")
    try:
        update_last_login(sender, user, **kwargs)
    except OperationalError:
        pass  # "database is locked": the next login records it
    finally:
        timeout_ms = int(settings.DATABASES["default"]["OPTIONS"]["timeout"] * 1000)
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA busy_timeout = {timeout_ms}")
