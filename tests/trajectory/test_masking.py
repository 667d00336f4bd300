"""Secrets masked by key name and value shape, and harmless look-alikes kept."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from eventviewer.trajectory import masking
from eventviewer.trajectory.masking import MASK

FIXTURES = Path(__file__).parent.parent / "fixtures"

# The 13 secrets of the attack pass on run metadata (issue 22, item 13), each as it was found.
HOSTILE_METADATA = {
    "llm": {
        "api_key": "sk-proj-aaaaaaaaaaaaaaaaaaaa1",
        "Authorization": "Bearer eyJhbGciOiJIUzI1NiJ9.secret2",
        "bearer": "opaque-secret-3",
        "max_input_tokens": 128000,
        "max_output_tokens": 4096,
    },
    "db": {"pass": "hunter4", "dsn": "postgresql://admin:dsnsecret5@db.internal:5432/evals"},
    "browser": {"session_cookie": "sessionsecret6"},
    "sandbox": {"env": ["PATH=/usr/bin", "OPENAI_API_KEY=plainsecret7", "GITHUB_TOKEN=ghp_secret8aaaaaaaaaaaa"]},
    "github_token": "ghp_secret9bbbbbbbbbbbb",
    "headers": ["X-Session-Api-Key: servsecret10"],
    "aws": {"AWS_SECRET_ACCESS_KEY": "awssecret11", "accessToken": "tok12"},
    "notes": "proxy at http://proxyuser:proxysecret13@proxy:3128",
}
SECRETS = [
    "aaaaaaaaaaaaaaaaaaaa1",
    "secret2",
    "opaque-secret-3",
    "hunter4",
    "dsnsecret5",
    "sessionsecret6",
    "plainsecret7",
    "secret8",
    "secret9",
    "servsecret10",
    "awssecret11",
    "tok12",
    "proxysecret13",
]


def test_every_secret_of_the_attack_pass_is_masked():
    shown = json.dumps(masking.masked(HOSTILE_METADATA))
    assert [s for s in SECRETS if s in shown] == []


def test_what_masking_keeps_around_a_secret():
    hidden = masking.masked(HOSTILE_METADATA)
    assert hidden["llm"]["Authorization"] == MASK
    assert hidden["sandbox"]["env"] == ["PATH=/usr/bin", f"OPENAI_API_KEY={MASK}", f"GITHUB_TOKEN={MASK}"]
    assert hidden["db"]["dsn"] == MASK
    assert hidden["notes"] == f"proxy at http://proxyuser:{MASK}@proxy:3128"
    assert hidden["headers"] == [f"X-Session-Api-Key: {MASK}"]


@pytest.mark.parametrize(
    "key",
    [
        "api_key",
        "apiKey",
        "API_KEY",
        "x-api-key",
        "X-Session-Api-Key",
        "Authorization",
        "bearer",
        "pass",
        "db_pass",
        "password",
        "proxy_password",
        "session_cookie",
        "Cookie",
        "github_token",
        "accessToken",
        "refresh_token",
        "client_secret",
        "aws_secret_access_key",
        "private_key",
        "credentials",
        "sentry_dsn",
        "secret_sources",
    ],
)
def test_a_key_that_names_a_secret(key):
    assert masking.is_secret_key(key)
    assert masking.masked({key: "s3cr3t-value"}) == {key: MASK}


@pytest.mark.parametrize(
    "key",
    [
        "max_input_tokens",
        "max_output_tokens",
        "prompt_tokens",
        "cache_read_tokens",
        "token_count",
        "auth_type",
        "keyboard",
        "key_bindings",
        "pass_rate",
        "passed",
        "bypass",
        "secret_name",
        "model",
        "author",
        "max_iterations",
        "response_id",
        "tokenizer",
        "monkey",
        "accumulated_token_usage",
        "token_usages",
    ],
)
def test_a_key_that_only_looks_like_one(key):
    assert not masking.is_secret_key(key)
    assert masking.masked({key: "kept-value"}) == {key: "kept-value"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Bearer abcdef123456", f"Bearer {MASK}"),
        ("token ghp_abcdefghijklmnop", f"token {MASK}"),
        ("sk-ant-api03-abcdefghijkl", MASK),
        ("github_pat_11AAAAAAA0abcdefgh", MASK),
        ("AKIAABCDEFGHIJKLMNOP", MASK),
        ("postgresql://admin:dsnpw@db:5432/evals", f"postgresql://admin:{MASK}@db:5432/evals"),
        ("redis://:redispw@cache:6379/0", f"redis://:{MASK}@cache:6379/0"),
        ("--password=hunter2 --user=me", f"--password={MASK} --user=me"),
    ],
)
def test_a_value_shaped_like_a_secret_is_masked_where_it_stands(text, expected):
    assert masking.masked_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "https://docs.all-hands.dev/",
        "openai/fixture-model",
        "api_key",
        "task-1234",
        "http://example.com:8080/path",
        "the token budget is spent",
        "skip-this",
        "max_tokens=4096",
        "basic training",
        "Bearer of bad news",
    ],
)
def test_a_harmless_value_stays(text):
    assert masking.masked_text(text) == text


def test_nulls_booleans_and_token_counts_stay_under_secret_keys():
    hidden = masking.masked({"api_key": None, "token": True, "per_turn_token": 7158, "password": 1234})
    assert hidden == {"api_key": None, "token": True, "per_turn_token": 7158, "password": MASK}


def test_a_secret_object_keeps_its_keys_and_loses_its_values():
    registry = {"secret_sources": {"GITHUB_TOKEN": {"kind": "StaticSecret", "value": "ghp_zzzzzzzzzzzz"}}}
    assert masking.masked(registry) == {"secret_sources": {"GITHUB_TOKEN": {"kind": MASK, "value": MASK}}}


def test_a_clean_document_keeps_its_bytes_and_a_dirty_one_loses_its_secrets():
    for path in sorted(FIXTURES.rglob("base_state.json")):
        raw = path.read_bytes()
        assert masking.masked_json(raw) == raw, path
    dirty = json.dumps({"agent": {"llm": {"api_key": "sk-live-1234567890abcdef", "model": "m"}}}).encode()
    assert orjson.loads(masking.masked_json(dirty)) == {"agent": {"llm": {"api_key": MASK, "model": "m"}}}
    assert masking.masked_json(b"not json; password=hunter2") == f"not json; password={MASK}".encode()
