"""Behind nginx (EVENTVIEWER_PROXY_COUNT=1) the login lockout counts failures by the
address nginx saw, so one client's bad passwords lock out that client, not everyone."""

from __future__ import annotations

import pytest

from eventviewer.middleware import forwarded_client

NGINX = "127.0.0.1"
ATTACKER, READER = "203.0.113.5", "198.51.100.7"


@pytest.mark.parametrize(
    ("remote", "forwarded", "proxies", "expected"),
    [
        (NGINX, ATTACKER, 0, NGINX),  # no proxy configured: the header is anyone's to write
        (NGINX, ATTACKER, 1, ATTACKER),
        (NGINX, f"{READER}, {ATTACKER}", 1, ATTACKER),  # the client wrote the left part itself
        (NGINX, f"{ATTACKER}, 10.0.0.2", 2, ATTACKER),  # a load balancer, then nginx
        (NGINX, "", 1, NGINX),  # no header: misconfigured, the connecting address stands
        (NGINX, ATTACKER, 2, NGINX),  # fewer entries than proxies
        (NGINX, "not-an-address", 1, NGINX),
        (NGINX, " 2001:db8::1 ", 1, "2001:db8::1"),
    ],
)
def test_the_client_is_the_entry_the_nearest_proxies_appended(remote, forwarded, proxies, expected):
    assert forwarded_client(remote, forwarded, proxies) == expected


def login(client, user, password: str, address: str, forwarded: str | None = None):
    return client.post(
        "/accounts/login/",
        {"username": user.username, "password": password},
        REMOTE_ADDR=NGINX,
        HTTP_X_FORWARDED_FOR=forwarded or address,
    )


def test_behind_nginx_bad_passwords_lock_out_their_sender_only(client, user, settings):
    settings.AXES_FAILURE_LIMIT = 3
    settings.EVENTVIEWER_PROXY_COUNT = 1
    for _ in range(3):
        # The attacker also writes the reader's address into the header: it is not believed.
        response = login(client, user, "wrong", ATTACKER, forwarded=f"{READER}, {ATTACKER}")
    assert response.status_code == 429
    assert login(client, user, "a-long-test-password", ATTACKER).status_code == 429
    assert login(client, user, "a-long-test-password", READER).status_code == 302


def test_without_a_proxy_count_the_header_is_ignored(client, user, settings):
    settings.AXES_FAILURE_LIMIT = 3
    settings.EVENTVIEWER_PROXY_COUNT = 0
    for _ in range(3):
        login(client, user, "wrong", ATTACKER)
    assert login(client, user, "a-long-test-password", READER).status_code == 429
