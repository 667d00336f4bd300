"""SDK features on import: sub-agents under their parent, hooks beside the events they
guard, what each response cost, and event kinds eventviewer does not know yet."""

from __future__ import annotations

import pytest

from eventviewer.imports.importer import import_paths
from eventviewer.models import Conversation, TurnUsage

from .conftest import FIXTURES, ev, message

pytestmark = pytest.mark.django_db


def import_scenario_root(scenario: str) -> list[Conversation]:
    return [r.conversation for r in import_paths([(FIXTURES / scenario, scenario)])]


def test_sub_agents_import_under_their_parent_linked_to_the_task_calls():
    import_scenario_root("subagent")
    parent = Conversation.objects.get(conversation_id="9045bd153bf34257918dd33313c0296c")
    children = {c.title: c for c in parent.subagents.all()}
    assert set(children) == {"Count the lines of README.md.", "List the files in the workspace."}
    calls = {c.parent_call_id: c for c in children.values()}
    prompts = {
        e.event_id: e.summary for e in parent.events.filter(kind="ActionEvent", tool_name="task").order_by("seq")
    }
    assert set(calls) == set(prompts)
    assert all(child.parent_id == parent.pk for child in children.values())
    assert Conversation.objects.filter(parent__isnull=True).count() == 1


def test_importing_a_sub_agent_alone_imports_it_without_a_parent():
    (child,) = import_scenario_root("subagent/9045bd153bf34257918dd33313c0296c/subagents/5d35df6469664370bfd6a980a815759a")
    assert child.parent is None and child.parent_call_id == ""


def test_hooks_beside_events_are_not_branches():
    (conversation,) = import_scenario_root("hooks")
    assert conversation.leaf_count == 1
    assert sum(n["side"] + (n["run"] or {}).get("side", 0) for n in conversation.skeleton["nodes"]) == 8


def test_each_response_cost_is_stored_by_its_response_id():
    (conversation,) = import_scenario_root("tokens-and-logs")
    usages = {u.response_id: u for u in TurnUsage.objects.filter(conversation=conversation)}
    assert set(usages) == {"chatcmpl-543b9cb75ee5417f88039032", "chatcmpl-2f024b2f99bc426b8e007e37"}
    first = usages["chatcmpl-543b9cb75ee5417f88039032"]
    assert (first.prompt_tokens, first.completion_tokens, first.usage_id) == (6525, 122, "agent")
    assert first.latency == pytest.approx(0.0204405784)
    assert first.cost is None  # the stats list no cost for it: absent, not 0
    assert (conversation.prompt_tokens, conversation.completion_tokens, conversation.cost) == (13391, 183, 0.0)
    assert conversation.duration is not None and conversation.duration > 0


def test_a_conversation_without_stats_has_no_figures(folder):
    path = folder([message("m1", None, "hi")], base_state={"execution_status": "finished"})
    (result,) = import_paths([(path, "x")])
    conversation = result.conversation
    assert conversation.prompt_tokens is None and conversation.cost is None
    assert not TurnUsage.objects.filter(conversation=conversation).exists()


def test_an_event_of_a_kind_eventviewer_does_not_know_imports_and_shows(folder, client, open_site):
    future = ev("f1", "QuantumEntanglementEvent", "m1", spin="up", detail={"a": 1})
    path = folder([message("m1", None, "hi"), future])
    (result,) = import_paths([(path, "x")])
    html = client.get(result.conversation.get_absolute_url()).content.decode()
    assert "QuantumEntanglement" in html and "&quot;spin&quot;: &quot;up&quot;" in html
