"""The pure code reads every SDK fixture exactly as SDK 1.58.2 does."""

import pytest

from eventviewer.trajectory.reading import read

from .sdk import SCENARIOS, load


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_it_finds_the_sdk_head_and_path(scenario):
    loaded = load(scenario)
    assert loaded.head == loaded.answers["leaf"]
    assert [e.event_id for e in loaded.path()] == loaded.answers["path"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_it_groups_tool_calls_as_events_to_messages_does(scenario):
    loaded = load(scenario)
    reading = read(loaded.path())
    assert [t.tool_call_ids for t in reading.messages if t.tool_call_ids] == loaded.answers["tool_call_groups"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_it_finds_the_unmatched_actions_the_sdk_finds(scenario):
    loaded = load(scenario)
    reading = read(loaded.path())
    assert reading.pairing.pending == loaded.answers["pending_action_ids"]
    assert list(reading.pairing.mismatched) == loaded.answers["mismatched_observation_ids"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_action_on_the_path_is_one_tool_call(scenario):
    path = load(scenario).path()
    reading = read(path)
    assert reading.tool_call_count == sum(1 for e in path if e.kind == "ActionEvent")
