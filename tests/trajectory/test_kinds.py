"""How a branch ends, the role each kind takes in the model's messages, and conversation ids."""

from __future__ import annotations

import pytest

from eventviewer.trajectory import kinds
from eventviewer.trajectory.events import Light
from eventviewer.trajectory.ids import normalize_conversation_id


@pytest.mark.parametrize(
    ("kind", "payload_kind", "is_error", "executable", "source", "outcome"),
    [
        ("UserRejectObservation", "", False, False, "environment", "rejected"),
        ("UserRejectObservation", "", True, False, "environment", "rejected"),
        ("AgentErrorEvent", "", False, False, "agent", "error"),
        ("ConversationErrorEvent", "", False, False, "environment", "error"),
        ("ObservationEvent", "TerminalObservation", True, False, "environment", "error"),
        ("ObservationEvent", "FinishObservation", True, False, "environment", "error"),
        ("ObservationEvent", "FinishObservation", False, False, "environment", "finished"),
        ("ObservationEvent", "TerminalObservation", False, False, "environment", "open"),
        ("ActionEvent", "FinishAction", False, True, "agent", "pending"),
        ("ActionEvent", "TerminalAction", False, True, "agent", "pending"),
        ("ActionEvent", "", False, False, "agent", "open"),  # an invalid call waits for nothing
        ("MessageEvent", "", False, False, "agent", "finished"),
        ("MessageEvent", "", False, False, "user", "open"),
        ("SystemPromptEvent", "", False, False, "agent", "open"),
        ("PauseEvent", "", False, True, "user", "open"),
    ],
)
def test_a_branch_ends_as_its_leaf_says(kind, payload_kind, is_error, executable, source, outcome):
    event = Light("e", kind, payload_kind=payload_kind, is_error=is_error, executable=executable, source=source)
    assert kinds.outcome(event) == outcome


@pytest.mark.parametrize(
    ("kind", "message_role", "role"),
    [
        ("SystemPromptEvent", "", "system"),
        ("ActionEvent", "", "assistant"),
        ("ObservationEvent", "", "tool"),
        ("UserRejectObservation", "", "tool"),
        ("AgentErrorEvent", "", "tool"),
        ("CondensationSummaryEvent", "", "user"),
        ("MessageEvent", "assistant", "assistant"),
        ("MessageEvent", "user", "user"),
        ("MessageEvent", "", "user"),
        ("ActionEvent", "user", "assistant"),  # only a message has a role of its own
        ("PauseEvent", "user", None),
    ],
)
def test_each_visible_kind_takes_its_role_in_the_models_messages(kind, message_role, role):
    assert kinds.role_of(kind, message_role) == role


def test_a_message_without_a_role_is_the_users():
    assert kinds.role_of(kinds.MESSAGE) == "user"


@pytest.mark.parametrize(
    ("value", "normalized"),
    [
        ("0eb8b4d7d1a14751b2b449213c4127d1", "0eb8b4d7d1a14751b2b449213c4127d1"),
        ("0EB8B4D7D1A14751B2B449213C4127D1", "0eb8b4d7d1a14751b2b449213c4127d1"),
        ("0eb8b4d7-d1a1-4751-b2b4-49213c4127d1", "0eb8b4d7d1a14751b2b449213c4127d1"),
        ("  0eb8b4d7d1a14751b2b449213c4127d1\n", "0eb8b4d7d1a14751b2b449213c4127d1"),
        ("0eb8b4d7d1a14751b2b449213c4127d", None),
        ("0eb8b4d7d1a14751b2b449213c4127d1a", None),
        ("0eb8b4d7d1a14751b2b449213c4127dg", None),
        ("x0eb8b4d7d1a14751b2b449213c4127d1", None),
        ("", None),
    ],
)
def test_a_conversation_id_is_32_hex_digits_given_with_or_without_dashes(value, normalized):
    assert normalize_conversation_id(value) == normalized
