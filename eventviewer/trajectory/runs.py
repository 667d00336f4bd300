"""Evaluation runs: what an output row's fields say about its instance.

An evaluation output (``output.jsonl``, one row per instance: ``instance_id``,
``instruction``, ``history``, ``test_result``, ``metadata``, ``metrics``, ``error``) is
a run; these rules read a row's outcome (its metadata's secrets are hidden by ``masking``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import stats

RESOLVED = "resolved"
FAILED = "failed"
ERROR = "error"
EMPTY = "empty"
UNSCORED = "unscored"
# In the order the run page counts them.
OUTCOMES = (RESOLVED, FAILED, ERROR, EMPTY, UNSCORED)
OUTCOME_LABELS = {
    RESOLVED: "resolved",
    FAILED: "failed",
    ERROR: "error",
    EMPTY: "empty history",
    UNSCORED: "not scored",
}

ROW_FIELDS = ("instance_id", "history")  # what makes a JSON line an evaluation row
_GENERIC_STEMS = {"output", "outputs", "output.critic_attempt_1"}


RESOLVER_FIELDS = ("issue", "history")  # an OpenHands resolver output's row: the issue instead of an instance_id
RESOLVER_VERDICT = ("success", "result_explanation", "success_explanation", "comment_success")


def is_row(data: Any) -> bool:
    return isinstance(data, dict) and (
        all(key in data for key in ROW_FIELDS) or all(key in data for key in RESOLVER_FIELDS)
    )


def resolver_instance(issue: Any) -> str | None:
    """A resolver row's instance id, ``owner/repo#number``, from its ``issue``."""
    if not isinstance(issue, Mapping):
        return None
    owner, repo, number = issue.get("owner"), issue.get("repo"), issue.get("number")
    if not (isinstance(owner, str) and owner and isinstance(repo, str) and repo):
        return None
    if not isinstance(number, int) or isinstance(number, bool):
        return None
    return f"{owner}/{repo}#{number}"


def resolved_flag(test_result: Any) -> bool | None:
    """What ``test_result`` says of the instance: True (resolved), False (tried and not
    resolved), None (it holds no verdict, e.g. only the patch before SWE-bench scoring)."""
    if not isinstance(test_result, Mapping):
        return None
    for holder in (test_result, test_result.get("report"), test_result.get("result")):
        if isinstance(holder, Mapping) and isinstance(holder.get("resolved"), bool):
            return bool(holder["resolved"])
    if isinstance(test_result.get("success"), bool):
        return bool(test_result["success"])
    final = test_result.get("final_score")
    if isinstance(final, Mapping):
        total, result = _number(final.get("total")), _number(final.get("result"))
        if total is not None and result is not None and total > 0:
            return result >= total
    score = _number(test_result.get("score"))
    if score is not None:
        return score > 0
    return None


def outcome(test_result: Any, error: Any, history_length: int) -> str:
    """One of OUTCOMES: an error wins, then an empty history, then the verdict."""
    if isinstance(error, str) and error.strip():
        return ERROR
    if history_length == 0:
        return EMPTY
    flag = resolved_flag(test_result)
    if flag is None:
        return UNSCORED
    return RESOLVED if flag else FAILED


def storable(value: Any) -> Any:
    """``value`` without NUL characters in its strings and keys (PostgreSQL's JSON refuses them)."""
    if isinstance(value, str):
        return value.replace("\x00", "") if "\x00" in value else value
    if isinstance(value, Mapping):
        return {storable(str(k)): storable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [storable(v) for v in value]
    return value


def run_name(stem: str, folder: str) -> str:
    """A run's name from its file: the file's stem, or its folder's name when the file
    has the generic name the harness gives every run (``output.jsonl``)."""
    if stem.lower() in _GENERIC_STEMS and folder:
        return folder
    return stem


def model_of(metadata: Any, metrics: Any) -> str:
    """The model a row ran with: metadata.llm.model (SDK harness), metadata.llm_config.model
    (V0), else the metrics' model name."""
    if isinstance(metadata, Mapping):
        for key in ("llm", "llm_config"):
            llm = metadata.get(key)
            if isinstance(llm, Mapping) and isinstance(llm.get("model"), str) and llm["model"]:
                return str(llm["model"])
    if isinstance(metrics, Mapping):
        for key in ("model_name", "model"):
            if isinstance(metrics.get(key), str) and metrics[key]:
                return str(metrics[key])
    return ""


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


FIXED, BROKEN, STILL_FAILING, STILL_RESOLVED, ONLY_A, ONLY_B = (
    "fixed",
    "broken",
    "still-failing",
    "still-resolved",
    "only-a",
    "only-b",
)
# In the order a comparison counts them.
CHANGES = (FIXED, BROKEN, STILL_FAILING, STILL_RESOLVED, ONLY_A, ONLY_B)
CHANGE_LABELS = {
    FIXED: "fixed",
    BROKEN: "broken",
    STILL_FAILING: "still failing",
    STILL_RESOLVED: "still resolved",
    ONLY_A: "only in A",
    ONLY_B: "only in B",
}


def change(a: str | None, b: str | None) -> str:
    """What became of an instance from run a to run b, given its outcome in each (None:
    not in that run). Any outcome but resolved counts as failing."""
    if b is None:
        return ONLY_A
    if a is None:
        return ONLY_B
    in_a, in_b = a == RESOLVED, b == RESOLVED
    if in_a:
        return STILL_RESOLVED if in_b else BROKEN
    return FIXED if in_b else STILL_FAILING


def changes(a: Mapping[str, str], b: Mapping[str, str]) -> dict[str, str]:
    """Instance id -> its change, over the union of both runs, sorted by instance id."""
    return {i: change(a.get(i), b.get(i)) for i in sorted(a.keys() | b.keys())}


def mcnemar_p(found: Mapping[str, str]) -> float:
    """McNemar's exact p-value over the instances both runs ran (``changes``' values)."""
    values = list(found.values())
    return stats.mcnemar_exact(values.count(FIXED), values.count(BROKEN))


@dataclass(frozen=True)
class Figures:
    """One instance's figures as a run's totals read them (None: not recorded)."""

    outcome: str
    tokens: int | None = None
    cost: float | None = None
    duration: float | None = None
    turns: int = 0
    problems: int = 0  # pending actions and mismatched results on its branch


@dataclass(frozen=True)
class Sum:
    """A figure over a run: its total and median over the instances that recorded it."""

    total: float
    median: float | None
    recorded: int  # instances that recorded it


@dataclass(frozen=True)
class Totals:
    instances: int
    counts: dict[str, int]  # outcome -> instances, every outcome in OUTCOMES
    scored: int  # resolved + failed: what a resolve rate divides by
    resolve_rate: float | None  # resolved / scored
    interval: tuple[float, float] | None  # its 95% Wilson interval
    tokens: Sum
    cost: Sum
    duration: Sum
    turns: Sum
    with_problems: int  # instances with pending actions or mismatched results

    @property
    def not_scored(self) -> int:
        return self.instances - self.counts[RESOLVED] - self.counts[FAILED] - self.counts[ERROR]


def _sum(values: list[float | None]) -> Sum:
    recorded = [v for v in values if v is not None]
    return Sum(float(sum(recorded)), stats.median(recorded), len(recorded))


def totals(figures: Iterable[Figures]) -> Totals:
    """A run's totals. The resolve rate counts an error as a failure (the harness ran the
    instance and it did not resolve); empty and unscored instances hold no verdict."""
    rows = list(figures)
    counts = {key: 0 for key in OUTCOMES}
    for row in rows:
        counts[row.outcome] = counts.get(row.outcome, 0) + 1
    scored = counts[RESOLVED] + counts[FAILED] + counts[ERROR]
    return Totals(
        instances=len(rows),
        counts=counts,
        scored=scored,
        resolve_rate=counts[RESOLVED] / scored if scored else None,
        interval=stats.wilson(counts[RESOLVED], scored) if scored else None,
        tokens=_sum([r.tokens for r in rows]),
        cost=_sum([r.cost for r in rows]),
        duration=_sum([r.duration for r in rows]),
        turns=_sum([r.turns for r in rows]),
        with_problems=sum(1 for r in rows if r.problems),
    )


def disagreement(outcomes: Sequence[str | None]) -> tuple[int, int]:
    """How much the runs that ran an instance (None: not run) disagree on it: first the
    pairs of them split on resolved against not resolved, then how many outcomes they give."""
    ran = [o for o in outcomes if o is not None]
    resolved = ran.count(RESOLVED)
    return resolved * (len(ran) - resolved), len(set(ran))


def by_disagreement(rows: Mapping[str, Sequence[str | None]]) -> list[str]:
    """Instance ids, the most disagreed on first; equal ones by instance id."""
    keyed = {i: disagreement(o) for i, o in rows.items()}
    return sorted(rows, key=lambda i: (-keyed[i][0], -keyed[i][1], i))
