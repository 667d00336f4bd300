"""System checks of our own settings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.apps import AppConfig
from django.conf import settings
from django.core.checks import CheckMessage, Tags, Warning, register


@register(Tags.security, deploy=True)
def login_is_required(app_configs: Sequence[AppConfig] | None, **kwargs: Any) -> list[CheckMessage]:
    """With the login requirement off, anyone who reaches the port reads every
    conversation and can import (and so move HEAD): fine on 127.0.0.1, not on a server."""
    if settings.DEBUG or settings.EVENTVIEWER_REQUIRE_LOGIN:
        return []
    return [
        Warning(
            "EVENTVIEWER_REQUIRE_LOGIN is off with DEBUG off: anyone who can reach this server reads every "
            "conversation and can import.",
            hint="Set EVENTVIEWER_REQUIRE_LOGIN=true, or serve on 127.0.0.1 only (as make run does).",
            id="eventviewer.W001",
        )
    ]
