"""The default labels for the review tests: made by migration 0012, but a transactional
test (migrations, the browser) empties every table after it, labels included."""

from __future__ import annotations

import importlib

import pytest


def make_default_labels() -> None:
    from django.apps import apps

    importlib.import_module("eventviewer.migrations.0014_reviews").add_default_labels(apps, None)


@pytest.fixture(autouse=True)
def default_labels(db) -> None:
    make_default_labels()
