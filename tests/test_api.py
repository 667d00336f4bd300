"""The JSON API reads every conversation exactly as the SDK does."""

from __future__ import annotations

import json
import uuid

import pytest
from django.test import Client

from eventviewer.imports.importer import import_paths

from .conftest import FIXTURES, SCENARIOS, fixture_folder, message, sdk_answers
from .trajectory.sdk import CONVERSATIONS

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(client, open_site):
    return client


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_path_matches_the_sdk(api, imported, scenario):
    imported(scenario)
    answers = sdk_answers(scenario)
    body = api.get(f"/api/conversations/{answers['conversation']}/path/").json()
    assert body["conversation"] == answers["conversation"]
    assert body["leaf"] == answers["leaf"]
    assert body["path"] == answers["path"]
    assert [m["tool_call_ids"] for m in body["messages"] if m["tool_call_ids"]] == answers["tool_call_groups"]
    assert body["pending_action_ids"] == answers["pending_action_ids"]
    assert [m["id"] for m in body["mismatched_observations"]] == answers["mismatched_observation_ids"]


def test_messages_are_the_projection_in_order(api, imported):
    imported("parallel-with-invalid-call")
    body = api.get(f"/api/conversations/{fixture_folder('parallel-with-invalid-call').name}/path/").json()
    assert [(m["role"], m["kind"], len(m["event_ids"])) for m in body["messages"]] == [
        ("system", "SystemPromptEvent", 1),
        ("user", "MessageEvent", 1),
        ("assistant", "ActionEvent", 2),
        ("tool", "AgentErrorEvent", 1),
        ("assistant", "ActionEvent", 1),
        ("tool", "ObservationEvent", 1),
        ("tool", "ObservationEvent", 1),
        ("assistant", "ActionEvent", 1),
        ("tool", "ObservationEvent", 1),
        ("assistant", "ActionEvent", 1),
        ("tool", "ObservationEvent", 1),
    ]
    assert all(m["tool_call_ids"] == [] for m in body["messages"] if m["role"] != "assistant")


def test_each_leaf_gives_its_own_branch(api, imported):
    conversation = imported("branching-retries")
    leaves = [n["id"] for n in conversation.skeleton["nodes"] if n["leaf"]]
    paths = [
        api.get(f"/api/conversations/{conversation.conversation_id}/path/", {"leaf": leaf}).json()["path"]
        for leaf in leaves
    ]
    assert [p[-1] for p in paths] == leaves
    assert len({tuple(p) for p in paths}) == 3
    assert all(p[:2] == paths[0][:2] for p in paths)


def test_a_dashed_uuid_is_accepted(api, imported):
    conversation = imported("simple")
    dashed = str(uuid.UUID(conversation.conversation_id))
    assert api.get(f"/api/conversations/{dashed}/path/").json()["conversation"] == conversation.conversation_id


@pytest.mark.parametrize(
    ("url", "status", "message"),
    [
        ("/api/conversations/not-an-id/path/", 400, "is not a conversation id"),
        (f"/api/conversations/{'0' * 32}/path/", 404, "There is no conversation"),
        ("/api/conversations/{cid}/path/?leaf=nope", 404, "has no event 'nope'"),
        ("/api/conversations/{cid}/path/?leaf=" + "x" * 300, 400, "leaf:"),
        ("/api/conversations/{cid}/path/?leaf=a%00b", 400, "control characters"),
        ("/api/conversations/?page=zero", 400, "page must be a positive integer"),
        ("/api/conversations/?page=9", 404, "there is no page 9"),
    ],
)
def test_bad_requests_get_json_errors(api, imported, url, status, message):
    conversation = imported("simple")
    response = api.get(url.format(cid=conversation.conversation_id))
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    assert message in response.json()["error"]


@pytest.mark.parametrize("url", ["/api/conversations/", "/api/conversations/{id}/path/"])
def test_other_methods_get_a_json_405(imported, open_site, url):
    url = url.format(id=imported("simple").conversation_id)
    response = Client(enforce_csrf_checks=True).post(url)
    assert response.status_code == 405 and response["Allow"] == "GET, HEAD"
    assert response.json() == {"error": "POST is not allowed here; use GET"}


def test_the_list_describes_every_conversation(api, imported):
    for scenario in ("simple", "confirmation-pending"):
        imported(scenario)
    body = api.get("/api/conversations/").json()
    assert body["count"] == 2
    pending = next(c for c in body["conversations"] if c["execution_status"] == "waiting_for_confirmation")
    assert (pending["pending"], pending["events"], pending["branches"]) == (2, 6, 1)
    # The HEAD is the 6th event of a linear conversation: depth 5, as the diagram says.
    assert (pending["head_depth"], pending["head_path_length"]) == (5, 6)
    assert pending["url"].endswith(f"/c/{pending['conversation_id']}/")


def test_the_api_needs_a_login_when_required(client, imported, settings):
    settings.EVENTVIEWER_REQUIRE_LOGIN = True
    conversation = imported("simple")
    for url in ("/api/conversations/", f"/api/conversations/{conversation.conversation_id}/path/"):
        response = client.get(url)
        assert response.status_code == 401
        assert response.json() == {"error": "authentication required: log in first"}


@pytest.mark.parametrize("relpath", CONVERSATIONS)
def test_the_messages_and_the_model_view_match_the_sdk(api, relpath):
    scenario = relpath.split("/")[0]
    import_paths([(FIXTURES / scenario, scenario)])
    answers = json.loads((FIXTURES / "sdk-answers" / f"{relpath.split('/')[-1]}.json").read_text())
    body = api.get(f"/api/conversations/{answers['conversation']}/path/").json()
    assert (body["leaf"], body["path"]) == (answers["leaf"], answers["path"])
    assert [{k: v for k, v in m.items() if k != "kind"} for m in body["messages"]] == answers["path_messages"]
    assert body["pending_action_ids"] == answers["pending_action_ids"]
    view = body["view"]
    assert view["event_ids"] == answers["view_event_ids"]
    assert [{k: v for k, v in m.items() if k != "kind"} for m in view["messages"]] == answers["view_messages"]
    assert body["view_unhandled_condensation_request"] == answers["view_unhandled_condensation_request"]


def test_the_path_comes_in_pages_with_totals(api, imported, settings):
    conversation = imported("long-300")
    url = f"/api/conversations/{conversation.conversation_id}/path/"
    whole = api.get(f"{url}?limit=10000").json()
    assert whole["path_length"] == len(whole["path"]) == conversation.head_path_length and whole["next"] is None
    pages, query = [], "?limit=70"
    while query:
        page = api.get(url + query).json()
        assert page["path_length"] == whole["path_length"]
        assert page["messages_total"] == len(whole["messages"])
        assert page["pending_total"] == len(whole["pending_action_ids"])
        assert page["mismatched_total"] == len(whole["mismatched_observations"])
        assert len(page["path"]) <= 70
        pages.append(page)
        query = page["next"]
    assert [e for p in pages for e in p["path"]] == whole["path"]
    assert [m for p in pages for m in p["messages"]] == whole["messages"]
    assert len(pages) == -(-whole["path_length"] // 70)
    assert pages[1]["offset"] == 70 and pages[1]["limit"] == 70
    settings.EVENTVIEWER_API_PATH_LIMIT = 50
    assert len(api.get(url).json()["path"]) == 50


@pytest.mark.parametrize(
    ("query", "message"), [("?offset=-1", "offset"), ("?limit=0", "limit"), ("?limit=10001", "at most 10,000")]
)
def test_bad_pages_are_json_400s(api, imported, query, message):
    conversation = imported("simple")
    response = api.get(f"/api/conversations/{conversation.conversation_id}/path/{query}")
    assert response.status_code == 400 and message in response.json()["error"]


def test_a_message_longer_than_a_page_lists_a_page_of_its_ids(api, folder, db):
    from eventviewer.imports.importer import import_paths

    events = [message("m0", None, "go")] + [message(f"m{i}", f"m{i - 1}", "more") for i in range(1, 30)]
    (result,) = import_paths([(folder(events), "t")])
    body = api.get(f"/api/conversations/{result.conversation.conversation_id}/path/?limit=10").json()
    (merged,) = body["messages"]
    assert merged["event_ids"] == [f"m{i}" for i in range(10)] and merged["event_count"] == 30
    assert body["messages_total"] == 1 and body["path"] == merged["event_ids"]


def test_the_list_gives_a_base_state_url_only_where_one_was_imported(api, imported):
    from .conftest import run_import
    from .test_sources import V0_TRAJECTORY

    folder = imported("simple")
    run_import(V0_TRAJECTORY)  # a V0 trajectory: events only
    listed = {c["conversation_id"]: c for c in api.get("/api/conversations/").json()["conversations"]}
    assert len(listed) == 2
    with_state = listed.pop(folder.conversation_id)
    assert api.get(with_state["base_state_url"]).status_code == 200
    ((_, without),) = listed.items()
    assert "base_state_url" not in without
    assert api.get(f"{without['url']}base_state.json").status_code == 404
