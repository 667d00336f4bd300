"""`manage.py sync`: a real agent-server's conversations copied here, as its agent wrote them."""

from __future__ import annotations

import io
import shutil
import uuid

import orjson
import pytest
from django.core.management import CommandError, call_command

from eventviewer.models import Conversation, Event

from .server import KEY, AgentServer, free_port

pytestmark = [pytest.mark.agentserver, pytest.mark.django_db]


def sync(server: AgentServer, *args: str, key: str = KEY) -> str:
    out = io.StringIO()
    call_command("sync", "--server", server.url, "--api-key", key, *args, stdout=out, stderr=out)
    return out.getvalue()


def refused(*args: str) -> str:
    before = (Conversation.objects.count(), Event.objects.count())
    with pytest.raises(CommandError) as refusal:
        call_command("sync", *args, stdout=io.StringIO(), stderr=io.StringIO())
    assert (Conversation.objects.count(), Event.objects.count()) == before
    return str(refusal.value)


def test_a_finished_conversation_is_stored_as_the_server_holds_it(agent_server, llm):
    conversation_id = agent_server.create(llm, "Say hello.")
    info = agent_server.wait_for(conversation_id)
    events = agent_server.events(conversation_id)

    out = sync(agent_server, "--conversation", conversation_id)

    assert f"synced {conversation_id}: {len(events)} new of {len(events)} events, 1 branch, finished" in out
    assert f"/c/{conversation_id}/" in out
    conversation = Conversation.objects.get(conversation_id=conversation_id)
    stored = list(conversation.events.order_by("seq"))
    assert [e.event_id for e in stored] == [e["id"] for e in events]
    assert [orjson.loads(e.payload.raw) for e in stored] == events  # the JSON as the server has it
    assert conversation.head.event_id == info["leaf_event_id"]
    assert conversation.execution_status == "finished"
    assert conversation.title == "Say hello."
    assert conversation.model == "openai/stub"
    # The terminal ran for real: its output is on the branch.
    observation = next(e for e in events if e["kind"] == "ObservationEvent" and e["tool_name"] == "terminal")
    assert "hello" in observation["observation"]["content"][0]["text"]

    again = sync(agent_server, "--conversation", conversation_id)
    assert f"unchanged {conversation_id}: nothing new" in again
    assert conversation.events.count() == len(events)


def test_a_resync_adds_only_the_new_events_and_follows_head(agent_server, llm):
    conversation_id = agent_server.create(llm, "Say hello.")
    agent_server.wait_for(conversation_id)
    sync(agent_server, "--conversation", conversation_id)
    first = list(Event.objects.order_by("seq").values_list("pk", "event_id"))

    agent_server.send(conversation_id, "Once more.")
    info = agent_server.wait_for(conversation_id)
    events = agent_server.events(conversation_id)
    out = sync(agent_server, "--conversation", conversation_id)

    added = len(events) - len(first)
    assert added > 0
    assert f"synced {conversation_id}: {added} new of {len(events)} events" in out
    now = list(Event.objects.order_by("seq").values_list("pk", "event_id"))
    assert now[: len(first)] == first  # the stored rows are kept as they were
    assert [event_id for _, event_id in now] == [e["id"] for e in events]
    assert Conversation.objects.get().head.event_id == info["leaf_event_id"]


def test_every_conversation_is_synced_and_a_fork_links_to_its_origin(agent_server, llm, client, open_site):
    origin = agent_server.create(llm, "Say hello.")
    agent_server.wait_for(origin)
    action = next(e for e in agent_server.events(origin) if e["kind"] == "ActionEvent")
    status, fork = agent_server.api(
        "POST", f"/api/conversations/{origin}/fork", {"from_event_id": action["id"], "title": "Try another way"}
    )
    assert status == 201
    fork_id = fork["id"].replace("-", "")

    out = sync(agent_server)  # no --conversation: all of them, across pages of the listing

    listed = [line for line in out.splitlines() if line.startswith("synced ")]
    assert len(listed) == Conversation.objects.count() >= 2
    forked = Conversation.objects.get(conversation_id=fork_id)
    assert forked.forked_from_conversation_id == origin
    assert forked.forked_from_event_id == action["id"]
    assert forked.head.event_id == action["id"]  # the fork's HEAD is where it was cut
    assert forked.title == "Try another way"  # the title given on the server
    assert Conversation.objects.get(conversation_id=origin).title == "Say hello."  # else the first message
    page = client.get(f"/c/{fork_id}/").content.decode()
    assert f'href="/c/{origin}/?leaf={action["id"]}"' in page
    assert "Forked from" in page


@pytest.mark.parametrize(
    "key, message",
    [
        ("wrong-key", "refused the API key (401 Unauthorized): check --api-key"),
        ("", "needs an API key (401 Unauthorized): pass its session API key with --api-key"),
    ],
)
def test_a_wrong_or_missing_key_is_refused_clearly(agent_server, key, message):
    assert message in refused("--server", agent_server.url, "--api-key", key)


def test_a_server_that_is_down_is_named(agent_server, llm):
    conversation_id = agent_server.create(llm, "Say hello.")
    agent_server.wait_for(conversation_id)
    sync(agent_server, "--conversation", conversation_id)
    url = f"http://127.0.0.1:{free_port()}"

    message = refused("--server", url, "--api-key", KEY, "--conversation", conversation_id)

    assert f"cannot reach the agent-server at {url} (" in message
    assert "Connection refused" in message
    assert Conversation.objects.get().event_count == len(agent_server.events(conversation_id))


def test_an_unknown_conversation_is_named(agent_server):
    missing = "0" * 32
    message = refused("--server", agent_server.url, "--api-key", KEY, "--conversation", missing)
    assert message == f"conversation {missing} is not on the agent-server at {agent_server.url}"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--server", "127.0.0.1:8000"], "'127.0.0.1:8000' is not an http:// or https:// URL"),
        (["--server", "http://127.0.0.1:1", "--conversation", "nope"], "'nope' is not a conversation id"),
    ],
)
def test_bad_arguments_are_named(args, message):
    assert message in refused(*args)


def test_a_synced_conversations_base_state_is_what_the_sdk_wrote_for_it(agent_server, llm, client, open_site):
    import io
    import zipfile

    conversation_id = agent_server.create(llm, "Say hello.")
    agent_server.wait_for(conversation_id)
    sync(agent_server, "--conversation", conversation_id)
    written = orjson.loads((agent_server.root / "conversations" / conversation_id / "base_state.json").read_bytes())

    url = f"/c/{conversation_id}/"
    served = orjson.loads(client.get(f"{url}base_state.json?raw=1").content)
    # What the server never sends (the API key, which it writes encrypted) and two fields
    # it leaves out of its description are all that differ.
    del written["agent"]["llm"]["api_key"]
    assert set(written) - set(served) <= {"activated_path_rules", "head_is_empty"}
    assert served == {key: written[key] for key in served}
    assert list(served) == [key for key in written if key in served]  # in the SDK's order
    assert not {"title", "metrics", "created_at", "runtime_info"} & set(served)  # the server's own fields

    archive = zipfile.ZipFile(io.BytesIO(b"".join(client.get(f"{url}export.zip").streaming_content)))
    assert orjson.loads(archive.read(f"{conversation_id}/base_state.json")) == served


def test_an_imported_server_folder_keeps_its_title_fork_and_parent(agent_server, llm, tmp_path, client, open_site):
    origin = agent_server.create(llm, "Say hello.")
    agent_server.wait_for(origin)
    action = next(e for e in agent_server.events(origin) if e["kind"] == "ActionEvent")
    status, fork = agent_server.api(
        "POST", f"/api/conversations/{origin}/fork", {"from_event_id": action["id"], "title": "Try another way"}
    )
    assert status == 201
    fork_id = fork["id"].replace("-", "")
    workspace = agent_server.info(origin)["workspace"]  # a child shares its parent's
    child = agent_server.create(llm, "Help out.", parent_conversation_id=str(uuid.UUID(origin)), workspace=workspace)
    agent_server.wait_for(child)
    # The server's own folders (base_state.json, events/, meta.json), copied as a user would.
    for conversation_id in (origin, fork_id, child):
        shutil.copytree(agent_server.root / "conversations" / conversation_id, tmp_path / conversation_id)
    assert (tmp_path / fork_id / "meta.json").exists()

    call_command("import_conversation", str(tmp_path), stdout=io.StringIO())

    forked = Conversation.objects.get(conversation_id=fork_id)
    assert forked.title == "Try another way"  # as sync keeps it, not the first message
    assert (forked.forked_from_conversation_id, forked.forked_from_event_id) == (origin, action["id"])
    assert Conversation.objects.get(conversation_id=child).parent_conversation_id == origin
    page = client.get(f"/c/{fork_id}/").content.decode()
    assert "Forked from" in page and f'href="/c/{origin}/?leaf={action["id"]}"' in page
