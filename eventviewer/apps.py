from django.apps import AppConfig


class EventviewerConfig(AppConfig):
    name = "eventviewer"
    default_auto_field = "django.db.models.BigAutoField"
