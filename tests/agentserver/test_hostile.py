"""`sync` and `sync --follow` against servers that lie, flood, stall and redirect: every
import limit holds, the key never leaves the server's origin, and nothing half-written
stays (servers of the tests' own, see fake.py)."""

from __future__ import annotations

import io
import json
import resource
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import OperationalError
from django.db.backends.signals import connection_created

from eventviewer.models import Conversation, Event

from .conftest import Following, stored
from .fake import FakeAgentServer, HostileHTTP, chain, info, send_json
from .server import KEY, waiting

CID = "0123456789abcdef0123456789abcdef"
DASHED = str(uuid.UUID(CID))


def run_sync(url: str, *args: str, within: float = 30) -> tuple[str, BaseException | None]:
    """`manage.py sync` in a thread: what it printed and what it raised, failing (not
    hanging) when it takes longer than ``within`` seconds."""
    out = io.StringIO()
    raised: list[BaseException] = []

    def run() -> None:
        try:
            call_command("sync", "--server", url, "--api-key", KEY, *args, stdout=out, stderr=out)
        except BaseException as e:  # the test reads it
            raised.append(e)

    thread = threading.Thread(target=run, daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(within)
    assert not thread.is_alive(), f"sync still running after {within} s: {out.getvalue()[-2000:]}"
    print(f"sync took {time.monotonic() - started:.1f} s")
    return out.getvalue(), raised[0] if raised else None


def refused(url: str, *args: str, within: float = 30) -> str:
    out, error = run_sync(url, *args, within=within)
    assert isinstance(error, CommandError), out
    return f"{out}\n{error}"


def rest(events: list[dict], page: Callable | None = None) -> Callable[[BaseHTTPRequestHandler], None]:
    """Answers like an agent-server holding conversation CID, its events page by ``page``."""

    def answer(handler: BaseHTTPRequestHandler) -> None:
        path = handler.path.split("?")[0]
        if path == f"/api/conversations/{DASHED}":
            send_json(handler, info(CID, events))
        elif page is not None and path.endswith("/events/search"):
            page(handler)
        elif path.endswith("/events/search"):
            send_json(handler, {"items": events, "next_page_id": None})
        else:
            send_json(handler, {"detail": "Not Found"}, 404)

    return answer


@pytest.fixture
def hostile() -> Iterator[Callable[..., HostileHTTP]]:
    servers: list[HostileHTTP] = []

    def start(answer: Callable[[BaseHTTPRequestHandler], None]) -> HostileHTTP:
        servers.append(HostileHTTP(answer))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def unlocked(read: Callable[[], Any]) -> Any:
    """``read()``, again while a follower's write keeps SQLite's in-memory test database locked."""
    for _ in range(100):
        try:
            return read()
        except OperationalError:
            time.sleep(0.1)
    raise AssertionError("the database stayed locked")


def nothing_stored() -> bool:
    return Conversation.objects.count() == 0 and Event.objects.count() == 0


# --- redirects -------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_redirect_to_another_origin_is_refused_and_never_gets_the_key(hostile):
    thief = hostile(rest(chain(CID, 3)))

    def redirect(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(302)
        handler.send_header("Location", thief.url + handler.path)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    server = hostile(redirect)

    message = refused(server.url, "--conversation", CID)

    assert f"redirected to {thief.url}/api/conversations/{DASHED}, another origin: refused" in message
    assert thief.requests == []  # not even asked, so the key went nowhere
    assert nothing_stored()


@pytest.mark.django_db(transaction=True)
def test_a_redirect_within_the_server_is_followed(hostile):
    events = chain(CID, 3)
    answer = rest(events)

    def moved(handler: BaseHTTPRequestHandler) -> None:
        if handler.path.startswith("/old"):
            handler.send_response(307)
            handler.send_header("Location", handler.path[len("/old") :])
            handler.send_header("Content-Length", "0")
            handler.end_headers()
        else:
            answer(handler)

    server = hostile(moved)
    out, error = run_sync(server.url + "/old", "--conversation", CID)
    assert error is None, out
    assert stored(CID).event_count == 3


@pytest.mark.django_db(transaction=True)
def test_a_websocket_redirect_to_another_origin_is_refused(settings):
    thief = FakeAgentServer({CID: chain(CID, 2)})
    server = FakeAgentServer({CID: chain(CID, 2)})

    def redirect(connection, request):
        if request.path.startswith("/sockets/"):
            response = connection.respond(302, "")
            response.headers["Location"] = thief.url.replace("http", "ws") + request.path
            return response
        return server.rest(connection, request)

    server.answer = redirect  # the fake's answers, but a 302 for its WebSocket
    try:
        following = Following(server.url, "--conversation", CID)
        following.thread.join(30)
        text = following.output.text()
        assert not following.thread.is_alive(), text
        assert "cannot follow cross-origin redirect" in text and "refused (the API key goes to no other server)" in text
        assert isinstance(following.error, CommandError)  # not a silent exit 0
        assert thief.connections == 0
        assert stored(CID).event_count == 2  # what the REST API gave is kept
    finally:
        server.close()
        thief.close()


# --- limits of an answer -----------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_endless_pages_stop_at_the_event_limit(hostile, settings):
    settings.EVENTVIEWER_MAX_EVENTS = 1000
    pages = iter(range(10**9))

    def endless(handler: BaseHTTPRequestHandler) -> None:
        n = next(pages)
        send_json(handler, {"items": chain(CID, 100, start=n * 100), "next_page_id": f"page-{n + 1}"})

    server = hostile(rest(chain(CID, 1), page=endless))
    message = refused(server.url, "--conversation", CID)
    assert "more than 1,000 events, over the limit (EVENTVIEWER_MAX_EVENTS)" in message
    assert len(server.requests) <= 12
    assert nothing_stored()


@pytest.mark.django_db(transaction=True)
def test_pages_that_go_round_in_circles_are_refused(hostile):
    def circle(handler: BaseHTTPRequestHandler) -> None:
        send_json(handler, {"items": chain(CID, 2), "next_page_id": "the-same-page"})

    server = hostile(rest(chain(CID, 1), page=circle))
    message = refused(server.url, "--conversation", CID)
    assert "sent page 'the-same-page' twice: its pages never end" in message
    assert nothing_stored()


@pytest.mark.django_db(transaction=True)
def test_a_300_mb_answer_is_cut_at_the_answer_limit_and_memory_stays(hostile):
    mb = b"[" + b'"xxxxxxx",' * (1024 * 1024 // 10)

    def huge(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(300 * len(mb)))
        handler.end_headers()
        for _ in range(300):
            handler.wfile.write(mb)

    server = hostile(rest(chain(CID, 1), page=huge))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    message = refused(server.url, "--conversation", CID, within=120)
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024 - before
    print(f"peak grew by {grown} MB")
    # Asked again in smaller pages down to one event, then refused by the event's limit.
    assert "answered more than 16,842,752 bytes: one event over the limit (EVENTVIEWER_MAX_EVENT_BYTES)" in message
    assert [p.split("limit=")[1].split("&")[0] for p, _ in server.requests[1:]] == [
        "100",
        "50",
        "25",
        "12",
        "6",
        "3",
        "1",
    ]
    assert grown < 200  # MB; a whole 300 MB answer and its parse would be over 900
    assert nothing_stored()


@pytest.mark.django_db(transaction=True)
def test_a_page_too_large_for_one_answer_is_asked_for_in_smaller_pages(hostile, settings):
    settings.EVENTVIEWER_SYNC_MAX_ANSWER_BYTES = 200_000
    events = chain(CID, 40, size=20_000)  # 800 KB in all: four answers' worth

    def paged(handler: BaseHTTPRequestHandler) -> None:
        query = dict(p.split("=", 1) for p in handler.path.split("?")[1].split("&"))
        start = next((i for i, e in enumerate(events) if e["id"] == query.get("page_id")), 0)
        end = start + int(query["limit"])
        send_json(handler, {"items": events[start:end], "next_page_id": events[end]["id"] if end < 40 else None})

    server = hostile(rest(events, page=paged))
    out, error = run_sync(server.url, "--conversation", CID)
    assert error is None, out
    assert list(stored(CID).events.order_by("seq").values_list("event_id", flat=True)) == [e["id"] for e in events]


@pytest.mark.django_db(transaction=True)
def test_a_body_sent_a_byte_at_a_time_is_given_up_on(hostile, settings):
    settings.EVENTVIEWER_SYNC_ANSWER_SECONDS = 2

    def trickle(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Length", "1000000")
        handler.end_headers()
        for _ in range(10_000):
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(0.05)

    server = hostile(rest(chain(CID, 1), page=trickle))
    started = time.monotonic()
    message = refused(server.url, "--conversation", CID)
    assert "took more than 2 s to answer (EVENTVIEWER_SYNC_ANSWER_SECONDS)" in message
    assert time.monotonic() - started < 10
    assert nothing_stored()


@pytest.mark.django_db(transaction=True)
def test_a_server_that_never_answers_times_out(hostile, settings):
    settings.EVENTVIEWER_SYNC_TIMEOUT = 1

    def silent(handler: BaseHTTPRequestHandler) -> None:
        time.sleep(5)

    server = hostile(silent)
    message = refused(server.url, "--conversation", CID)
    assert f"cannot reach the agent-server at {server.url} (no answer within 1 s, EVENTVIEWER_SYNC_TIMEOUT)" in message


# --- limits of the WebSocket --------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_websocket_flood_stops_at_the_event_limit(settings):
    settings.EVENTVIEWER_MAX_EVENTS = 1000

    async def flood(socket, conversation_id):
        for event in chain(conversation_id, 20_000, start=10):
            await socket.send(json.dumps(event))

    server = FakeAgentServer({CID: chain(CID, 10)}, push=flood)
    try:
        following = Following(server.url, "--conversation", CID)
        following.thread.join(60)
        assert not following.thread.is_alive()
        text = following.output.text()
        assert "over the limit of 1,000 (EVENTVIEWER_MAX_EVENTS); nothing new stored" in text, text
        assert f"{CID}: refused:" in text and "stopped following it" in text
        assert isinstance(following.error, CommandError)
        assert stored(CID).event_count <= 1000
        assert stored(CID).events.count() == stored(CID).event_count
    finally:
        server.close()


@pytest.mark.django_db(transaction=True)
def test_frames_over_the_event_limit_are_refused_not_retried(settings):
    settings.EVENTVIEWER_MAX_EVENT_BYTES = 64 * 1024

    async def big(socket, conversation_id):
        (event,) = chain(conversation_id, 1, start=10, size=1024 * 1024)
        for _ in range(50):
            await socket.send(json.dumps(event))

    server = FakeAgentServer({CID: chain(CID, 3)}, push=big)
    try:
        following = Following(server.url, "--conversation", CID)
        following.thread.join(30)
        text = following.output.text()
        assert not following.thread.is_alive(), text
        assert "sent a frame over the limit of 65,536 bytes (EVENTVIEWER_MAX_EVENT_BYTES)" in text, text
        assert server.connections == 1  # refused, not reconnected to be flooded again
        assert isinstance(following.error, CommandError)
        assert stored(CID).event_count == 3
    finally:
        server.close()


# --- a bounded pool ---------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_following_200_conversations_keeps_threads_and_connections_bounded():
    ids = [uuid.uuid4().hex for _ in range(200)]
    server = FakeAgentServer({cid: chain(cid, 3) for cid in ids})
    opened: list[int] = []

    def count(sender, connection, **kwargs):
        opened.append(threading.get_ident())

    connection_created.connect(count)
    threads_before = threading.active_count()
    try:
        following = Following(server.url)  # the whole server
        most = 0

        def all_followed() -> bool:
            nonlocal most
            most = max(most, threading.active_count() - threads_before)
            live = {
                line.split(":")[0] for line in following.output.text().splitlines() if line.endswith(": following live")
            }
            return live == set(ids) and server.open == 200

        assert waiting(all_followed, timeout=120), following.output.text()[-3000:]
        assert unlocked(lambda: [c.is_live for c in Conversation.objects.all()]) == [True] * 200
    finally:
        following.finish(timeout=60)
        connection_created.disconnect(count)
        server.close()
    assert following.error is None
    print(f"{most} threads, {len(set(opened))} database connections for 200 conversations")
    assert most <= 8  # the command's, the event loop's, a few workers: not one per conversation
    assert len(set(opened)) <= 6
    assert not any(c.is_live for c in Conversation.objects.all())
