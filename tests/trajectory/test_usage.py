"""What a run cost, per LLM response and in total, from the stats in base_state.json:
figures the stats give, and no figure (never a 0) where they give none."""

from __future__ import annotations

import json

import pytest

from eventviewer.trajectory.usage import Usage, responses, total_of, totals

from .sdk import FIXTURES


def base_state(conversation: str) -> dict:
    (file,) = (FIXTURES / conversation).glob("*/base_state.json")
    return json.loads(file.read_text())


def stats(**by_usage: dict) -> dict:
    return {"stats": {"usage_to_metrics": by_usage}}


def call(response_id: str, prompt: int = 10, completion: int = 5, **more: object) -> dict:
    return {"response_id": response_id, "model": "m", "prompt_tokens": prompt, "completion_tokens": completion, **more}


def test_each_response_of_a_real_run_has_its_tokens_and_latency():
    found = responses(base_state("simple"))
    assert [u.response_id for u in found] == ["chatcmpl-1e9e103580e64fe69f3e4e6b", "chatcmpl-bf5087892f41458d9955e104"]
    first = found[0]
    assert (first.usage_id, first.model) == ("agent", "openai/fixture-model")
    assert (first.prompt_tokens, first.completion_tokens, first.total_tokens) == (6528, 88, 6616)
    assert (first.cache_read_tokens, first.cache_write_tokens, first.reasoning_tokens) == (0, 0, 0)
    assert first.latency == pytest.approx(0.01977252960205078)
    assert first.cost is None  # the SDK wrote no costs: no figure, not 0


def test_the_condensers_responses_are_named_by_its_llm():
    found = {u.response_id: u for u in responses(base_state("condensation"))}
    condenser = found["chatcmpl-af4b9af034284f3bbc445904"]
    assert (condenser.usage_id, condenser.prompt_tokens, condenser.completion_tokens) == ("condenser", 898, 49)
    assert len(found) == 14


def test_a_run_totals_every_llm():
    total = totals(base_state("condensation"))
    assert (total.prompt_tokens, total.completion_tokens) == (82541 + 1771, 873 + 91)
    assert total.total_tokens == 82541 + 1771 + 873 + 91
    assert total.cache_read_tokens == 0 and total.cost == 0.0
    assert total.latency is None and total.response_id == ""


def test_costs_are_tied_to_responses_when_there_is_one_per_response():
    state = stats(agent={"token_usages": [call("r1"), call("r2")], "costs": [{"cost": 0.5}, {"cost": 1}]})
    assert [u.cost for u in responses(state)] == [0.5, 1.0]


def test_costs_are_not_guessed_when_the_lists_differ():
    state = stats(agent={"token_usages": [call("r1"), call("r2")], "costs": [{"cost": 0.5}]})
    assert [u.cost for u in responses(state)] == [None, None]


def test_a_cost_of_the_wrong_shape_is_no_figure():
    state = stats(agent={"token_usages": [call("r1"), call("r2")], "costs": [0.5, {"cost": "1"}]})
    assert [u.cost for u in responses(state)] == [None, None]


def test_latencies_are_matched_by_response_id():
    state = stats(
        agent={
            "token_usages": [call("r1"), call("r2")],
            "response_latencies": [
                {"response_id": "r2", "latency": 2},
                {"response_id": "elsewhere", "latency": 9},
                "junk",
                {"latency": 7},
            ],
        }
    )
    assert [(u.response_id, u.latency) for u in responses(state)] == [("r1", None), ("r2", 2.0)]


def test_a_response_named_twice_keeps_its_first_figures_and_junk_is_skipped():
    state = stats(
        agent={"token_usages": [call("r1", 1)]},
        condenser={"token_usages": [call("r1", 2), {"prompt_tokens": 3}, "junk", call("", 4), call("r2", 5)]},
    )
    first, after_the_junk = responses(state)
    assert (first.usage_id, first.prompt_tokens) == ("agent", 1)
    assert (after_the_junk.usage_id, after_the_junk.prompt_tokens) == ("condenser", 5)


@pytest.mark.parametrize(
    ("value", "read"),
    [(7, 7), (0, 0), (-1, None), (True, None), (1.5, None), ("7", None), (2**63, None), (2**63 - 1, 2**63 - 1)],
)
def test_a_token_count_is_a_plain_non_negative_integer(value, read):
    (usage,) = responses(stats(agent={"token_usages": [call("r", prompt=value, reasoning_tokens=value)]}))
    assert usage.prompt_tokens == read and usage.reasoning_tokens == read


@pytest.mark.parametrize(
    ("value", "read"), [(0.25, 0.25), (0, 0.0), (3, 3.0), (-0.1, None), (True, None), ("1", None), (1e15, None)]
)
def test_a_cost_or_latency_is_a_plain_non_negative_number(value, read):
    state = stats(
        agent={
            "token_usages": [call("r")],
            "costs": [{"cost": value}],
            "response_latencies": [{"response_id": "r", "latency": value}],
        }
    )
    (usage,) = responses(state)
    assert usage.cost == read and usage.latency == read


def test_names_are_bounded():
    state = stats(**{"u" * 500: {"token_usages": [call("r", model="m" * 500)]}})
    (usage,) = responses(state)
    assert (len(usage.usage_id), len(usage.model)) == (100, 200)
    assert responses(stats(agent={"token_usages": [call("r", model=3)]}))[0].model == ""


@pytest.mark.parametrize(
    "state",
    [None, {}, {"stats": None}, {"stats": {"usage_to_metrics": []}}, stats(agent="junk"), stats(agent={})],
)
def test_a_log_without_usable_stats_has_no_figures(state):
    assert responses(state) == []
    assert totals(state) == Usage()
    assert totals(state).total_tokens is None


def test_totals_add_the_figures_there_are():
    state = stats(
        agent={"accumulated_token_usage": {"prompt_tokens": 10, "completion_tokens": 2}, "accumulated_cost": 0.5},
        condenser={"accumulated_token_usage": {"prompt_tokens": 5, "cache_read_tokens": 1}},
        other={"accumulated_token_usage": "junk", "accumulated_cost": "junk"},
    )
    total = totals(state)
    assert (total.prompt_tokens, total.completion_tokens, total.cache_read_tokens) == (15, 2, 1)
    assert total.reasoning_tokens is None and total.cost == 0.5


def test_a_total_of_responses_sums_what_they_have():
    usages = [Usage("r1", prompt_tokens=10, cost=0.5, latency=1.0), Usage("r2", prompt_tokens=5, completion_tokens=1)]
    total = total_of(usages)
    assert (total.prompt_tokens, total.completion_tokens, total.cost, total.latency) == (15, 1, 0.5, 1.0)
    assert total.cache_read_tokens is None and total.total_tokens == 16
    assert total.response_id == "" and total.model == ""
    assert total_of([]) == Usage()


def test_total_tokens_count_either_side():
    assert Usage(completion_tokens=4).total_tokens == 4
    assert Usage(prompt_tokens=4).total_tokens == 4
    assert Usage(cache_read_tokens=4).total_tokens is None
