"""What a run cost: tokens, cost and latency per LLM response, from ``base_state.json``.

The SDK keeps, per LLM of the agent (``stats.usage_to_metrics``: "agent", "condenser"
…), a list of token usages and of latencies, each naming its ``response_id`` (the
``llm_response_id`` of the events that response made), and a list of costs in call
order without ids. A cost is tied to its response only when the two lists are as long
as each other. Anything the stats do not say stays None: an older log without stats
shows no figure, never a 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any


@dataclass
class Usage:
    """One LLM response's figures (or a run's totals: ``response_id`` empty)."""

    response_id: str = ""
    usage_id: str = ""
    model: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost: float | None = None
    latency: float | None = None  # seconds

    @property
    def total_tokens(self) -> int | None:
        if self.prompt_tokens is None and self.completion_tokens is None:
            return None
        return (self.prompt_tokens or 0) + (self.completion_tokens or 0)


TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
MAX_RESPONSES = 1_000_000  # a stats block naming more responses than this is not read further


def responses(state: Mapping[str, Any] | None) -> list[Usage]:
    """Each LLM response the stats name, with what they say of it, in call order."""
    found: dict[str, Usage] = {}
    for usage_id, metrics in _metrics(state):
        token_usages = _list(metrics.get("token_usages"))
        costs = _list(metrics.get("costs"))
        tied_costs = len(costs) == len(token_usages)
        for index, item in enumerate(token_usages[:MAX_RESPONSES]):
            response_id = _text(item.get("response_id")) if isinstance(item, dict) else ""
            if not response_id or response_id in found:
                continue
            usage = Usage(response_id, usage_id[:100], _text(item.get("model"))[:200])
            for name in TOKEN_FIELDS:
                setattr(usage, name, _count(item.get(name)))
            if tied_costs and isinstance(costs[index], dict):
                usage.cost = _amount(costs[index].get("cost"))
            found[response_id] = usage
        for item in _list(metrics.get("response_latencies"))[:MAX_RESPONSES]:
            if isinstance(item, dict) and _text(item.get("response_id")) in found:
                found[_text(item["response_id"])].latency = _amount(item.get("latency"))
    return list(found.values())


def totals(state: Mapping[str, Any] | None) -> Usage:
    """The run's totals over all of its LLMs: the SDK's accumulated figures."""
    total = Usage()
    for _, metrics in _metrics(state):
        accumulated = metrics.get("accumulated_token_usage")
        if isinstance(accumulated, dict):
            for name in TOKEN_FIELDS:
                total = _add(total, name, _count(accumulated.get(name)))
        total = _add(total, "cost", _amount(metrics.get("accumulated_cost")))
    return total


def total_of(usages: Iterable[Usage]) -> Usage:
    """The sum of some responses' figures (a branch's): None where none has the figure."""
    total = Usage()
    for usage in usages:
        for f in fields(Usage):
            if f.name in (*TOKEN_FIELDS, "cost", "latency"):
                total = _add(total, f.name, getattr(usage, f.name))
    return total


def _add(total: Usage, name: str, value: int | float | None) -> Usage:
    if value is not None:
        setattr(total, name, (getattr(total, name) or 0) + value)
    return total


def _metrics(state: Mapping[str, Any] | None) -> list[tuple[str, dict[str, Any]]]:
    stats = state.get("stats") if isinstance(state, Mapping) else None
    by_usage = stats.get("usage_to_metrics") if isinstance(stats, dict) else None
    if not isinstance(by_usage, dict):
        return []
    return [(str(k), v) for k, v in by_usage.items() if isinstance(v, dict)]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**63 else None


def _amount(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 <= value < 1e15 else None
