"""How eventviewer behaves as deployed: HEAD requests, headers on static files, the
deploy checks."""

from __future__ import annotations

import pytest

from .test_settings import PRODUCTION, manage

pytestmark = pytest.mark.django_db


@pytest.fixture
def site(client, open_site, imported):
    conversation = imported("branching-retries")
    client.conversation = conversation
    return client


@pytest.mark.parametrize(
    "path", ["/", "{c}", "{c}diagram.svg", "{c}events/{e}/", "/import/", "/api/conversations/", "/favicon.ico"]
)
def test_head_is_answered_wherever_get_is(site, path):
    conversation = site.conversation
    url = path.format(c=conversation.get_absolute_url(), e=conversation.head.event_id)
    got, head = site.get(url), site.head(url)
    assert head.status_code == got.status_code and head.status_code in (200, 301)
    assert head.content == b""


def test_a_shared_view_answers_head(site, user):
    share = site.conversation.share_links.create(created_by=user)
    for url in (share.get_absolute_url(), share.get_absolute_url() + "diagram.svg"):
        assert site.head(url).status_code == 200


STATIC_CHECK = """
import django
from django.conf import settings
django.setup()
settings.WHITENOISE_USE_FINDERS = True  # no collectstatic needed
from django.test import Client
response = Client().get("/static/eventviewer/app.css", secure=True)
print(response.status_code)
for name in ("Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options", "Referrer-Policy",
             "Strict-Transport-Security"):
    print(name, response.headers.get(name, "MISSING"))
"""


def test_static_files_carry_the_security_headers_of_pages():
    result = manage("shell", "--no-imports", "-c", STATIC_CHECK, **PRODUCTION)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "200"
    assert not [line for line in lines if "MISSING" in line], lines
    assert "Content-Security-Policy default-src 'self'" in result.stdout


@pytest.mark.slow
def test_check_deploy_warns_when_login_is_off():
    result = manage("check", "--deploy", **PRODUCTION, EVENTVIEWER_REQUIRE_LOGIN="false")
    assert "eventviewer.W001" in result.stderr + result.stdout
    assert "EVENTVIEWER_REQUIRE_LOGIN is off" in result.stderr + result.stdout
    on = manage("check", "--deploy", **PRODUCTION)
    assert "eventviewer.W001" not in on.stderr + on.stdout
