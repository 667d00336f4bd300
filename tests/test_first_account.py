"""A newcomer's first account: the login page and `make run` name a command that works as typed."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMMAND = ".venv/bin/python manage.py createsuperuser"


@pytest.mark.django_db
def test_the_login_page_names_the_command_that_makes_the_first_account(client):
    html = client.get("/accounts/login/").content.decode()
    assert f"<code>{COMMAND}</code>" in html


def test_make_run_prints_how_to_create_the_first_account():
    dry = subprocess.run(["make", "-n", "run"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    echoed = [line for line in dry.splitlines() if line.startswith("echo")]
    assert any(COMMAND in line for line in echoed), echoed


def test_the_command_works_as_typed_from_the_project_folder(tmp_path):
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'first.sqlite3'}",
        "DJANGO_SUPERUSER_PASSWORD": "a-long-first-password",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    subprocess.run([".venv/bin/python", "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    *program, _ = COMMAND.split()
    done = subprocess.run(
        [*program, "createsuperuser", "--noinput", "--username", "first", "--email", "first@example.com"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"Superuser created successfully", done.stdout)
