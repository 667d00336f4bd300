"""Settings come from the environment; production refuses to start half-configured."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from eventviewer.settings import envbool, envint

ROOT = Path(__file__).resolve().parent.parent
PRODUCTION = {
    "DEBUG": "false",
    "SECRET_KEY": "x" * 60 + "-not-a-real-secret",
    "ALLOWED_HOSTS": "eventviewer.example.com",
}


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    # The browser tests' DJANGO_ALLOW_ASYNC_UNSAFE must not leak into a production check.
    skip = ("DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_ALLOW_ASYNC_UNSAFE")
    clean = {k: v for k, v in os.environ.items() if k not in skip}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True
    )


def test_check_deploy_is_clean_with_the_production_environment():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


@pytest.mark.parametrize("missing", ["SECRET_KEY", "ALLOWED_HOSTS"])
def test_production_needs_a_secret_key_and_hosts(missing):
    env = {k: v for k, v in PRODUCTION.items() if k != missing}
    result = manage("check", **env)
    assert result.returncode != 0 and f"{missing} must be set when DEBUG is off" in result.stderr


def test_env_helpers_refuse_junk(monkeypatch):
    monkeypatch.setenv("X_FLAG", "maybe")
    monkeypatch.setenv("X_NUMBER", "lots")
    with pytest.raises(ImproperlyConfigured, match="X_FLAG must be true or false, not 'maybe'"):
        envbool("X_FLAG", "false")
    with pytest.raises(ImproperlyConfigured, match="X_NUMBER must be an integer"):
        envint("X_NUMBER", "1")
    monkeypatch.setenv("X_FLAG", "Yes")
    assert envbool("X_FLAG", "false") is True


def test_every_environment_variable_is_in_the_configuration_table():
    source = (ROOT / "eventviewer" / "settings.py").read_text()
    read = set(re.findall(r'(?:envbool|envint|envlist|os\.getenv)\(\s*"([A-Z_]+)"', source)) | {"DATABASE_URL"}
    documented = set(re.findall(r"^\| `([A-Z_]+)` \|", (ROOT / "docs" / "configuration.md").read_text(), re.MULTILINE))
    assert len(read) > 20
    assert read - documented == set()
