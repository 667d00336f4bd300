"""Secrets hidden from what a reader sees of a run's metadata or a conversation's
``base_state.json``: by the name of the key that holds a value, and by the shape of a
value wherever it is (a bearer token, a provider's key, a password inside a URL,
``NAME=value`` with a secret's name).

Two directions, both tested: a secret never shows, and figures whose names merely look
alike (``max_input_tokens``, ``auth_type``, ``keyboard``) stay readable."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

MASK = "********"

# Words of a key name that make its value a secret wherever they appear in the name.
_SECRET_WORDS = frozenset(
    {
        "password",
        "passwd",
        "passphrase",
        "pwd",
        "secret",
        "secrets",
        "token",  # singular: "tokens" counts them
        "apikey",
        "authorization",
        "auth",
        "bearer",
        "cookie",
        "cookies",
        "sessionid",
        "credential",
        "credentials",
        "creds",
        "dsn",
        "signature",
        "pat",
    }
)
# Words that name a secret only as the last word of a key: "db_pass", "api_key", but not
# "pass_rate" or "key_bindings".
_SECRET_LAST_WORDS = frozenset({"pass", "key", "keys"})
# A last word that makes a key a figure or a description about a secret, not the secret.
_HARMLESS_LAST_WORDS = frozenset(
    {
        "count",
        "counts",
        "limit",
        "limits",
        "length",
        "len",
        "size",
        "type",
        "kind",
        "name",
        "names",
        "rate",
        "usage",
        "usages",
    }
)
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

_VALUE_SHAPES = (
    # Authorization header values: the scheme stays, the credentials go.
    # "token ..." is GitHub's scheme too, but also prose: its keys have a shape of their own below.
    re.compile(r"(?i)\b(bearer|basic|digest)(\s+)(?=[^\s]*\d)[A-Za-z0-9._~+/=-]{6,}"),
    # Keys with a provider's prefix (OpenAI/Anthropic sk-, GitHub, GitLab, Slack, Hugging Face, AWS, Google).
    re.compile(r"\bsk-[A-Za-z0-9_-]{8,}"),
    re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{8,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{8,}"),
    re.compile(r"\bglpat-[A-Za-z0-9_-]{8,}"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{8,}"),
    re.compile(r"\bhf_[A-Za-z0-9]{16,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"),
    # A JSON Web Token: header.payload.signature, the first two base64 JSON.
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
)
_SCHEMES = frozenset({"bearer", "basic", "token", "digest"})  # "Authorization: Bearer ..." keeps its scheme
# scheme://user:password@host: only the password goes.
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s:/?#@]*:)([^\s/?#@]+)(@)")
# NAME=value or NAME: value (an environment list, a header line), NAME a secret's name.
_ASSIGNMENT = re.compile(r"(?<!\w)([A-Za-z_][\w.-]*)(\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|[^\s,;&\"']+)")


def words(key: str) -> list[str]:
    """A key name's words, lower case: ``apiKey``, ``API_KEY``, ``x-api-key`` -> api, key."""
    return [w.lower() for w in _WORD.findall(key)]


def is_secret_key(key: str) -> bool:
    """Whether a key's name says its value is a secret (``api_key``, ``Authorization``,
    ``session_cookie``, ``proxy_pass``) rather than a figure about one (``max_input_tokens``,
    ``token_count``, ``auth_type``)."""
    found = words(key)
    if not found or found[-1] in _HARMLESS_LAST_WORDS:
        return False
    return found[-1] in _SECRET_LAST_WORDS or any(w in _SECRET_WORDS for w in found)


def masked_text(text: str) -> str:
    """``text`` with every secret-shaped part replaced by MASK."""
    if len(text) < 6:
        return text
    for shape in _VALUE_SHAPES:
        text = shape.sub(_keep_scheme, text)
    text = _URL_PASSWORD.sub(lambda m: m.group(1) + MASK + m.group(3), text)
    return _ASSIGNMENT.sub(_assignment, text)


def _keep_scheme(match: re.Match[str]) -> str:
    if match.re.groups == 2:  # an Authorization value: "Bearer ********"
        return match.group(1) + match.group(2) + MASK
    return MASK


def _assignment(match: re.Match[str]) -> str:
    name, separator, value = match.groups()
    if not is_secret_key(name) or value == MASK or value.lower() in _SCHEMES:
        return match.group(0)
    return name + separator + MASK


def masked(value: Any) -> Any:
    """``value`` with every secret hidden, at any depth: the value of a key that names a
    secret (all of it, when it is a list or an object, keeping its keys), and
    secret-shaped parts of every other string. Nulls and booleans stay (nothing to hide),
    and a number stays under a key about tokens (``per_turn_token`` counts them)."""
    if isinstance(value, Mapping):
        return {str(k): _under(str(k), v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    if isinstance(value, str):
        return masked_text(value)
    return value


def _under(key: str, value: Any) -> Any:
    if not is_secret_key(key):
        return masked(value)
    return _all_of(value, counts="token" in words(key))


def _all_of(value: Any, counts: bool) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float)) and counts:
        return value
    if isinstance(value, Mapping):
        return {str(k): _all_of(v, counts) for k, v in value.items()}
    if isinstance(value, list):
        return [_all_of(v, counts) for v in value]
    return MASK


def masked_json(text: str | bytes) -> bytes:
    """A JSON document (``base_state.json``) with its secrets masked: the same bytes when it
    holds none, so a clean file still round-trips verbatim; a document that is not JSON is
    masked as text."""
    raw = text.encode() if isinstance(text, str) else text
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return masked_text(raw.decode(errors="replace")).encode()
    hidden = masked(data)
    if hidden == data:
        return raw
    return orjson.dumps(hidden, option=orjson.OPT_INDENT_2)
