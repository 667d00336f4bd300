"""`manage.py sync --follow`: a real agent-server's events stored while its agent works,
through restarts and deletes, never losing what is stored."""

from __future__ import annotations

import io
import time

import pytest
from django.core.management import CommandError, call_command

from eventviewer.imports.agentserver import AgentServer, store
from eventviewer.trajectory import usage

from .conftest import stored, stored_ids
from .server import KEY, RestOnlyProxy, ScriptedLLM, finish, terminal, waiting

pytestmark = pytest.mark.agentserver


def kinds_of(events: list[dict]) -> list[str]:
    return [e["kind"] for e in events]


def test_follow_stores_events_while_the_agent_works(agent_server, follow):
    llm = ScriptedLLM([terminal("echo hello"), terminal("echo again"), finish("Done.")])
    first_call, second_call = llm.hold(0), llm.hold(1)  # the agent waits until the test has looked
    following = follow()  # the whole server: conversations that appear later too
    assert following.says("following ")
    try:
        conversation_id = agent_server.create(llm, "Say hello twice.")
        assert following.says(f"{conversation_id}: following live")  # picked up as it appeared
        first_call.set()

        # Mid-run: the first action and its result are stored, the run is not over.
        def first_result_stored() -> list[str]:
            ids = stored_ids(conversation_id)
            server_ids = [e["id"] for e in agent_server.events(conversation_id)]
            return ids if ids and ids == server_ids and "ObservationEvent" in kinds(ids) else []

        def kinds(ids: list[str]) -> list[str]:
            by_id = {e["id"]: e["kind"] for e in agent_server.events(conversation_id)}
            return [by_id[i] for i in ids]

        assert waiting(first_result_stored, timeout=60), following.output.text()
        assert agent_server.info(conversation_id)["execution_status"] == "running"
        conversation = stored(conversation_id)
        observation = [e for e in agent_server.events(conversation_id) if e["kind"] == "ObservationEvent"][-1]
        assert conversation.head.event_id == observation["id"]  # HEAD follows the run
        assert conversation.is_live

        second_call.set()
        info = agent_server.wait_for(conversation_id)
        events = agent_server.events(conversation_id)
        assert waiting(lambda: stored_ids(conversation_id) == [e["id"] for e in events], timeout=30)
        assert waiting(lambda: stored(conversation_id).execution_status == "finished", timeout=30)
        conversation = stored(conversation_id)
        assert conversation.head.event_id == info["leaf_event_id"]
        assert kinds_of(events).count("ActionEvent") == 3
    finally:
        llm.close()
    following.finish()
    assert "stopped following" in following.output.text()
    assert not stored(conversation_id).is_live
    assert following.error is None


def test_follow_reconnects_after_a_server_restart(agent_server, follow, llm):
    conversation_id = agent_server.create(llm, "Say hello.")
    agent_server.wait_for(conversation_id)
    following = follow("--conversation", conversation_id)
    assert following.says(f"{conversation_id}: following live")
    before = stored_ids(conversation_id)
    assert before == [e["id"] for e in agent_server.events(conversation_id)]

    agent_server.stop()
    # Whether the WebSocket's close or a REST call (the server refuses new connections while
    # it shuts down) is noticed first depends on timing; either way it then cannot reach it.
    assert following.says(f"cannot reach the agent-server at {agent_server.url}")
    assert "trying again in" in following.output.text()
    assert stored_ids(conversation_id) == before  # nothing stored is lost while it is down

    agent_server.start()
    # Reconnected: said a second time (a REST call made while the server was starting can
    # wait out its timeout before the next attempt).
    assert following.says(f"{conversation_id}: following live", timeout=90, times=2), following.output.text()
    agent_server.send(conversation_id, "Once more.")
    info = agent_server.wait_for(conversation_id)
    events = agent_server.events(conversation_id)
    assert waiting(lambda: stored_ids(conversation_id) == [e["id"] for e in events], timeout=30), (
        following.output.text()
    )
    assert stored_ids(conversation_id)[: len(before)] == before
    assert waiting(lambda: stored(conversation_id).head.event_id == info["leaf_event_id"], timeout=30)


def test_follow_ends_when_its_conversation_is_deleted(agent_server, follow, llm):
    conversation_id = agent_server.create(llm, "Say hello.")
    agent_server.wait_for(conversation_id)
    following = follow("--conversation", conversation_id)
    assert following.says(f"{conversation_id}: following live")
    count = len(agent_server.events(conversation_id))

    status, _ = agent_server.api("DELETE", f"/api/conversations/{conversation_id}")
    assert status == 200

    assert following.says(
        f"{conversation_id}: conversation {conversation_id} is not on the agent-server at {agent_server.url} "
        f"(deleted?); stopped following it. The {count} events stored here are kept."
    )
    following.thread.join(30)
    assert not following.thread.is_alive()  # nothing left to follow: the command ends
    assert len(stored_ids(conversation_id)) == count


def test_follow_with_a_wrong_key_stops_at_once(agent_server, follow):
    started = time.monotonic()
    following = follow(key="wrong-key")
    following.thread.join(30)
    assert isinstance(following.error, CommandError)
    assert "refused the API key (401 Unauthorized)" in str(following.error)
    assert time.monotonic() - started < 30


def test_follow_polls_when_the_websocket_is_refused(agent_server, follow, llm):
    proxy = RestOnlyProxy(agent_server.url)
    try:
        conversation_id = agent_server.create(llm)  # idle until it gets a message
        following = follow("--conversation", conversation_id, url=proxy.url)
        assert following.says(f"{conversation_id}: no WebSocket (")
        assert following.says("polling every 2 s instead")

        agent_server.send(conversation_id, "Say hello.")
        info = agent_server.wait_for(conversation_id)
        events = agent_server.events(conversation_id)
        assert waiting(lambda: stored_ids(conversation_id) == [e["id"] for e in events], timeout=30)
        assert waiting(lambda: stored(conversation_id).head.event_id == info["leaf_event_id"], timeout=30)
        assert waiting(lambda: stored(conversation_id).execution_status == "finished", timeout=30)
    finally:
        proxy.close()


def test_follow_keeps_tokens_and_cost_current_and_a_later_sync_too(agent_server, follow):
    llm = ScriptedLLM([terminal("echo hello"), terminal("echo again"), finish("Done.")])
    try:
        conversation_id = agent_server.create(llm)  # idle: followed before it runs
        following = follow("--conversation", conversation_id)
        assert following.says(f"{conversation_id}: following live")
        assert stored(conversation_id).prompt_tokens is None  # no LLM call yet

        agent_server.send(conversation_id, "Say hello twice.")
        info = agent_server.wait_for(conversation_id)
        server = usage.totals(info)
        assert server.prompt_tokens == 30 and server.completion_tokens == 15  # 3 calls of 10 + 5

        def current() -> bool:
            conversation = stored(conversation_id)
            return (conversation.prompt_tokens, conversation.completion_tokens) == (30, 15)

        assert waiting(current, timeout=30), following.output.text()
        assert stored(conversation_id).usages.count() == len(usage.responses(info))  # each response's figures
        following.finish()
        assert following.output.text().count("its state changed") <= 3  # not at every heartbeat

        out = io.StringIO()
        call_command(
            "sync", "--server", agent_server.url, "--api-key", KEY, "--conversation", conversation_id, stdout=out
        )
        assert f"unchanged {conversation_id}: nothing new" in out.getvalue()  # the figures were current already
        assert current()
    finally:
        llm.close()


@pytest.mark.django_db
def test_a_later_sync_updates_figures_that_changed_without_new_events(agent_server, llm):
    conversation_id = agent_server.create(llm, "Say hello.")
    info = agent_server.wait_for(conversation_id)
    stale = {**info, "stats": None}  # as a follower stored it before the run's figures came
    server = AgentServer(agent_server.url, KEY)
    store(server, stale, server.events(conversation_id))
    assert stored(conversation_id).prompt_tokens is None

    out = io.StringIO()
    call_command("sync", "--server", agent_server.url, "--api-key", KEY, "--conversation", conversation_id, stdout=out)

    assert f"synced {conversation_id}: its state changed" in out.getvalue()
    assert stored(conversation_id).prompt_tokens == usage.totals(info).prompt_tokens == 20
    assert stored(conversation_id).usages.count() == len(usage.responses(info))


def test_follow_waits_out_a_refused_key_and_resumes_when_it_is_accepted_again(agent_server, follow, llm):
    conversation_id = agent_server.create(llm, "Say hello.")
    agent_server.wait_for(conversation_id)
    following = follow("--conversation", conversation_id)
    assert following.says(f"{conversation_id}: following live")
    before = stored_ids(conversation_id)

    agent_server.key = "sk-changed"
    try:
        agent_server.restart()
        assert following.says("refused the API key (401 Unauthorized): check --api-key; trying again", timeout=60)
        assert following.thread.is_alive()  # not stopped, and not following less without a word
        assert stored_ids(conversation_id) == before
    finally:
        agent_server.key = KEY
        agent_server.restart()
    assert following.says(f"{conversation_id}: the agent-server accepts the API key again", timeout=60)
    assert following.says(f"{conversation_id}: following live", timeout=30)
    agent_server.send(conversation_id, "Once more.")
    info = agent_server.wait_for(conversation_id)
    events = agent_server.events(conversation_id)
    assert waiting(lambda: stored_ids(conversation_id) == [e["id"] for e in events], timeout=30)
    assert waiting(lambda: stored(conversation_id).head.event_id == info["leaf_event_id"], timeout=30)
