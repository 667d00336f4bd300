from django.apps import AppConfig


class EventviewerConfig(AppConfig):
    name = "eventviewer"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from eventviewer import checks  # noqa: F401  (registers them)
