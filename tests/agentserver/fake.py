"""Agent-servers of the tests' own on 127.0.0.1, real sockets: a small one that speaks the
REST API and the WebSocket as 1.58.2 does (enough to sync and follow), and plain HTTP
servers whose answers a test writes byte by byte, to be as hostile as a server can be."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Awaitable, Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from websockets.asyncio.server import ServerConnection, serve
from websockets.http11 import Request, Response

from .server import KEY


def chain(conversation_id: str, count: int, start: int = 0, size: int = 0) -> list[dict]:
    """``count`` events, each the child of the one before (a message, then actions'
    thoughts), ``size`` bytes of text each."""
    events = []
    for n in range(start, start + count):
        role = "user" if n == 0 else "assistant"
        events.append(
            {
                "id": f"{conversation_id[:8]}-{n:08d}",
                "timestamp": f"2026-12-01T10:00:00.{n:06d}",
                "source": "user" if n == 0 else "agent",
                "parent_id": None if n == 0 else f"{conversation_id[:8]}-{n - 1:08d}",
                "llm_message": {"role": role, "content": [{"type": "text", "text": f"m{n} " + "x" * size}]},
                "kind": "MessageEvent",
            }
        )
    return events


def info(conversation_id: str, events: list[dict], **fields: Any) -> dict:
    return {
        "id": str(uuid.UUID(conversation_id)),
        "execution_status": "idle",
        "leaf_event_id": events[-1]["id"] if events else None,
        "title": None,
        **fields,
    }


Push = Callable[[ServerConnection, str], Awaitable[None]]


class FakeAgentServer:
    """REST (listing, a conversation, its events by pages of ``limit``) and the
    WebSocket (a full_state frame, every event, then ``push``), from ``conversations``
    (id -> events). Its own thread and event loop; ``connections`` counts WebSockets."""

    def __init__(self, conversations: dict[str, list[dict]], push: Push | None = None, key: str = KEY):
        self.conversations, self.push, self.key = conversations, push, key
        self.connections = 0
        self.open = 0
        self.answer = self.rest  # a test may put a hostile one in front
        self.loop = asyncio.new_event_loop()
        started = threading.Event()
        self.thread = threading.Thread(target=self._serve, args=(started,), daemon=True)
        self.thread.start()
        started.wait(10)
        self.url = f"http://127.0.0.1:{self.port}"

    def _serve(self, started: threading.Event) -> None:
        async def main() -> None:
            self.stopping = asyncio.Event()
            async with serve(
                self._socket, "127.0.0.1", 0, process_request=lambda c, r: self.answer(c, r), max_size=None
            ) as server:
                self.port = server.sockets[0].getsockname()[1]
                started.set()
                await self.stopping.wait()

        self.loop.run_until_complete(main())

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stopping.set)
        self.thread.join(10)

    def info(self, conversation_id: str) -> dict:
        return info(conversation_id, self.conversations[conversation_id])

    def rest(self, connection: ServerConnection, request: Request) -> Response | None:
        parts = urlsplit(request.path)
        if parts.path.startswith("/sockets/"):
            return None
        if request.headers.get("X-Session-API-Key") != self.key:
            return connection.respond(401, '{"detail":"Unauthorized"}')
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        path = parts.path.strip("/").split("/")
        if path == ["api", "conversations", "search"]:
            return self._json(connection, {"items": [self.info(c) for c in self.conversations], "next_page_id": None})
        conversation_id = uuid.UUID(path[2]).hex if len(path) > 2 else ""
        if conversation_id not in self.conversations:
            return connection.respond(404, '{"detail":"Not Found"}')
        events = self.conversations[conversation_id]
        if len(path) == 3:
            return self._json(connection, self.info(conversation_id))
        start = next((i for i, e in enumerate(events) if e["id"] == query.get("page_id")), 0)
        limit = int(query.get("limit", 100))
        page = events[start : start + limit]
        following = events[start + limit]["id"] if start + limit < len(events) else None
        return self._json(connection, {"items": page, "next_page_id": following})

    def _json(self, connection: ServerConnection, data: Any) -> Response:
        return connection.respond(200, json.dumps(data))

    async def _socket(self, socket: ServerConnection) -> None:
        self.connections += 1
        self.open += 1
        try:
            conversation_id = uuid.UUID(urlsplit(socket.request.path).path.split("/")[-1]).hex
            auth = json.loads(await socket.recv())
            if auth.get("session_api_key") != self.key:
                await socket.close(4001, "Authentication failed")
                return
            full = {"kind": "ConversationStateUpdateEvent", "key": "full_state", "value": self.info(conversation_id)}
            await socket.send(json.dumps(full))
            for event in self.conversations[conversation_id]:
                await socket.send(json.dumps(event))
            if self.push is not None:
                await self.push(socket, conversation_id)
            await socket.wait_closed()
        finally:
            self.open -= 1


Answer = Callable[[BaseHTTPRequestHandler], None]


class HostileHTTP:
    """A plain HTTP server whose every GET is answered by ``answer(handler)``, writing
    to the socket as it likes; ``requests`` keeps each request's path and headers."""

    def __init__(self, answer: Answer):
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.sent = 0  # bytes the answers got out
        hostile = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802 (the http.server API)
                hostile.requests.append((self.path, dict(self.headers.items())))
                try:
                    answer(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client hung up: what a client within its limits does

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def send_json(handler: BaseHTTPRequestHandler, data: Any, status: int = 200) -> None:
    body = json.dumps(data).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
