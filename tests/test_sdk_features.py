"""SDK features on import: sub-agents under their parent, hooks beside the events they
guard, what each response cost, and event kinds eventviewer does not know yet."""

from __future__ import annotations

import html
import json
import re

import pytest

from eventviewer.imports.importer import import_paths
from eventviewer.models import Conversation, TurnUsage

from .conftest import FIXTURES, action, ev, message

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
    (child,) = import_scenario_root(
        "subagent/9045bd153bf34257918dd33313c0296c/subagents/5d35df6469664370bfd6a980a815759a"
    )
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


# --- the pages -------------------------------------------------------------------------


def page(client, url: str, **params) -> str:
    response = client.get(url, params)
    assert response.status_code == 200, response.content[:500]
    return response.content.decode()


@pytest.fixture
def site(client, open_site):
    return client


def test_the_model_view_hides_forgotten_events_and_shows_the_summary_in_their_place(site):
    (conversation,) = import_scenario_root("condense-head-before")
    full = page(site, conversation.get_absolute_url())
    model = page(site, conversation.get_absolute_url(), view="model")
    forgotten = "738d141a-1554-463d-907f-212784e58275"  # dropped by the first condensation
    assert f'id="event-{forgotten}"' in full and "forgotten by" in full
    assert f'id="event-{forgotten}"' not in model
    assert "Summary of earlier events" in model and "Summary of earlier events" not in full
    # Links on the model's view keep showing it; the switch goes back to the whole branch.
    assert "view=model" in model.split('id="turns"')[1]
    assert 'aria-current="page" title="What the model was sent' in model


def test_every_link_of_the_model_view_keeps_it_and_its_messages_export_is_the_models(site):
    (conversation,) = import_scenario_root("condense-head-before")
    base = conversation.get_absolute_url()
    model = page(site, base, view="model")
    # Forms carry the view in a hidden field (asserted below); their own URLs are the base.
    anchors = re.sub(r"<form\b[^>]*>", "", model)
    links = {html.unescape(h) for h in re.findall(r'(?:href|hx-get)="(' + re.escape(base) + r'[^"#]*)', anchors)}
    kept = {h for h in links if re.search(r"[?&]view=model(&|$)", h)}
    # Only the switch to the whole branch leaves it; the live poll sends it from app.js.
    assert {h for h in links - kept if "/live/" not in h} == {h for h in links if "view=full" in h}, links - kept
    assert any(h.startswith(base + "export/") for h in kept) and any(h.startswith(base + "files/") for h in kept)
    assert any(h.startswith(base + "compare/") for h in kept) and any(h.startswith(base + "events/") for h in kept)
    assert '<input type="hidden" name="view" value="model">' in model  # the search box and the branch filter
    export = next(h for h in kept if "format=messages" in h)
    messages = json.loads(b"".join(site.get(export).streaming_content))
    whole = json.loads(b"".join(site.get(export.replace("view=model", "view=full")).streaming_content))
    assert len(messages) < len(whole)


def test_a_condensation_lists_the_ranges_it_dropped_as_links(site):
    (conversation,) = import_scenario_root("condense-head-before")
    html = page(site, conversation.get_absolute_url())
    assert "Dropped: " in html and "(18 events)" in html


def test_hooks_show_beside_the_events_they_guarded(site):
    (conversation,) = import_scenario_root("hooks")
    html = page(site, conversation.get_absolute_url())
    assert "<span>1 branch</span>" in html
    assert "PreToolUse hook on terminal" in html and "rm is not allowed by project policy" in html
    assert 'class="turn role-none unseen side"' in html


def test_a_task_call_links_to_its_sub_agent_and_back(site):
    import_scenario_root("subagent")
    parent = Conversation.objects.get(conversation_id="9045bd153bf34257918dd33313c0296c")
    child = parent.subagents.get(title="Count the lines of README.md.")
    html = page(site, parent.get_absolute_url())
    assert html.count(f'href="{child.get_absolute_url()}"') >= 2  # from the call and from its result
    child_html = page(site, child.get_absolute_url())
    assert "Sub-agent of" in child_html and f"#event-{child.parent_call_id}" in child_html


def test_the_list_folds_sub_agents_under_their_parent(site):
    import_scenario_root("subagent")
    html = page(site, "/")
    assert html.count('class="title-cell"') == 1
    assert "Count the lines of README.md." in html.split("2 sub-agents")[1]


def test_each_turn_says_what_it_cost_and_the_header_the_run(site):
    (conversation,) = import_scenario_root("tokens-and-logs")
    html = page(site, conversation.get_absolute_url())
    assert "6,525 in" in html and "122 out" in html  # the first response's tokens
    assert "13.4k prompt" in html and "$0.00" in html  # the run's


def test_figures_that_were_not_recorded_are_not_shown(site, folder):
    path = folder([message("m1", None, "hi")], base_state={"execution_status": "finished"})
    (result,) = import_paths([(path, "x")])
    html = page(site, result.conversation.get_absolute_url())
    assert "prompt</span>" not in html and " in</span>" not in html and "$" not in html


def test_images_in_messages_and_observations_show(site):
    conversations = import_scenario_root("multimodal")
    conversation = next(c for c in conversations if c.event_count == 5)
    html = page(site, conversation.get_absolute_url())
    assert html.count('<img src="data:image/png;base64,') == 2


def test_a_share_link_opens_the_sub_agents_and_nothing_else(client, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    from eventviewer.models import ShareLink

    import_scenario_root("subagent")
    (other,) = import_scenario_root("simple")
    parent = Conversation.objects.get(conversation_id="9045bd153bf34257918dd33313c0296c")
    child = parent.subagents.first()
    share = ShareLink.objects.create(conversation=parent)
    base = share.get_absolute_url()
    html = page(client, base)
    assert f'href="{base}sub/{child.conversation_id}/"' in html
    child_html = page(client, f"{base}sub/{child.conversation_id}/")
    assert f'href="{base}?at=' in child_html  # back to the parent's call, inside the share
    assert client.get(f"{base}sub/{other.conversation_id}/").status_code == 404
    assert client.get(f"{base}sub/{child.conversation_id}/diagram.svg").status_code == 200


def test_the_branch_says_how_many_failures_of_each_kind_and_which_came_first(site):
    (conversation,) = import_scenario_root("errors")
    html = page(site, conversation.get_absolute_url())
    summary = html.split('class="failure-summary"')[1].split("</p>")[0]
    for label in ("1 conversation error", "3 agent errors", "1 tool error", "3 invalid calls"):
        assert label in summary
    assert "turn 3, search_files: invalid call" in summary


def test_a_link_to_a_hook_beside_the_branch_opens_the_branch_around_it(site):
    (conversation,) = import_scenario_root("hooks")
    hook = "91e1aaf2-4d01-4c3f-993a-9ea1c03799a2"  # PreToolUse, beside the first action
    html = page(site, conversation.get_absolute_url(), leaf=conversation.head.event_id, at=hook)
    assert f'id="event-{hook}"' in html
    assert site.get(conversation.get_absolute_url(), {"before": hook}).status_code == 404


def test_cards_of_huge_events_show_their_first_items_and_say_how_many_more(site, folder):
    tools = [{"name": f"tool{i}", "description": "d"} for i in range(1000)]
    thought = [{"type": "text", "text": f"part{i}"} for i in range(1000)]
    events = [
        ev("s", "SystemPromptEvent", None, tools=tools, system_prompt={"type": "text", "text": "be good"}),
        message("m1", "s", "hi"),
        ev("k", "FromTheFuture", "m1", **{f"key{i}": i for i in range(1000)}),
        {**action("a1", "k", "c1"), "thought": thought},
    ]
    (result,) = import_paths([(folder(events), "huge")])
    html = page(site, result.conversation.get_absolute_url())
    assert "tool199<" in html and "tool200<" not in html and "800 more not shown here" in html
    assert "key199" in html and "key200" not in html and html.count("800 more not shown here") == 2
    assert "part199" in html and "part200" not in html and "800 more parts" in html
