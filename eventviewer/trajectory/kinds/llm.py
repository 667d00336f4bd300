"""What the LLM calls themselves left behind: TokenEvent (the token ids of a prompt and
its response, from vLLM-style servers) and LLMCompletionLogEvent (a logged request and
response). Both are shown folded: counts and a bounded preview, never the whole log."""

from __future__ import annotations

import json
from typing import Any

from ..cards import Card, output, pretty, text_of
from .base import COMPLETION_LOG, TOKENS, Kind, register


def _count(value: Any) -> int:
    return len(value) if isinstance(value, list) else 0


def token_summary(data: dict[str, Any]) -> str:
    prompt, response = _count(data.get("prompt_token_ids")), _count(data.get("response_token_ids"))
    return f"{prompt:,} prompt and {response:,} response token ids"


def token_card(data: dict[str, Any], full: bool) -> Card:
    result = Card(kind=TOKENS, label="Token ids")
    result.facts.append(("prompt", f"{_count(data.get('prompt_token_ids')):,} tokens"))
    result.facts.append(("response", f"{_count(data.get('response_token_ids')):,} tokens"))
    return result


register(Kind(TOKENS, "Token ids", "kinds/facts.html", token_card, summarize=token_summary, side=True, folded=True))


def log_summary(data: dict[str, Any]) -> str:
    model = text_of(data.get("model_name")) or "the LLM"
    return f"completion log of {model} ({len(text_of(data.get('log_data'))):,} characters)"


def log_card(data: dict[str, Any], full: bool) -> Card:
    result = Card(kind=COMPLETION_LOG, label="Completion log")
    for key, label in (("model_name", "model"), ("usage_id", "usage"), ("filename", "file")):
        if data.get(key):
            result.facts.append((label, text_of(data.get(key))))
    log = text_of(data.get("log_data"))
    result.facts.append(("size", f"{len(log):,} characters"))
    try:
        laid_out = pretty(json.loads(log), 200_000 if full else 8_000)
    except (ValueError, RecursionError):
        laid_out = log
    result.output = output(laid_out, full)
    return result


register(
    Kind(COMPLETION_LOG, "Completion log", "kinds/log.html", log_card, summarize=log_summary, side=True, folded=True)
)
