"""What the SDK writes as ``base_state.json`` for a conversation an agent-server runs,
from the server's description of it (its ConversationInfo).

The server describes a conversation with its ConversationState's fields plus its own
(title, metrics, created_at, runtime_info …), and with every unset field as null; the SDK
writes only the state's fields, leaving out the unset ones. The LLM's API key is the one
difference left: the server never sends it (it writes it encrypted)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# ConversationState's fields, in the order the SDK writes them (measured against
# openhands-agent-server 1.58.2's own files: tests/agentserver/test_sync.py).
SDK_STATE_KEYS = (
    "id",
    "agent",
    "workspace",
    "persistence_dir",
    "max_iterations",
    "stuck_detection",
    "execution_status",
    "confirmation_policy",
    "security_analyzer",
    "activated_knowledge_skills",
    "activated_path_rules",
    "invoked_skills",
    "blocked_actions",
    "blocked_messages",
    "last_user_message_id",
    "leaf_event_id",
    "head_is_empty",
    "stats",
    "secret_registry",
    "hook_config",
    "tags",
    "agent_state",
)


def sdk_state(info: Mapping[str, Any]) -> dict[str, Any]:
    """The state's fields of ``info`` as the SDK writes them: the server's own fields
    and every null left out."""
    return {key: _set(info[key]) for key in SDK_STATE_KEYS if info.get(key) is not None}


def _set(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _set(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_set(v) for v in value]
    return value
