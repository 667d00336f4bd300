"""The pure core's tests run without Django: ``make test-pure`` runs them with
pytest-django off (``-p no:django``), and then any test that imports Django fails."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _no_django(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.config.pluginmanager.has_plugin("django"):
        yield  # the whole suite in one run: Django is there for the other tests
        return
    assert "django" not in sys.modules, "Django was imported before this pure test"
    yield
    assert "django" not in sys.modules, "this pure test imported Django"
