"""Following one conversation of an agent-server while its agent works: a catch-up over
REST, then the WebSocket's frames as they come, stored like every sync (agentserver.store)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import orjson
from django.conf import settings
from django.db import DatabaseError, connections
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.sync.client import connect

from eventviewer.imports.agentserver import (
    LIVE_FOR,
    TIMEOUT,
    AgentServer,
    Frames,
    Gone,
    ServerError,
    Unauthorized,
    described,
    head_and_status,
    store,
)
from eventviewer.imports.importer import ImportFailed
from eventviewer.models import Conversation
from eventviewer.trajectory import kinds

HEARTBEAT = 10  # seconds: the longest a follower waits before checking on the conversation
QUIET = 0.2  # seconds without a frame before the frames received are stored
BACKOFF = (1, 2, 4, 8, 10)  # seconds between reconnection attempts
POLL_EVERY = 2  # seconds, when the WebSocket cannot be used
NOT_STORED = {"StreamingDeltaEvent"}  # pushed over the WebSocket, never written to the log
FULL_STATE = "full_state"  # a state update the server pushes (not persisted) with its whole state
CLOSED_UNAUTHORIZED, CLOSED_NOT_FOUND = 4001, 4004  # the server's WebSocket close codes

Say = Callable[[str], None]


class Follower:
    """Keeps one conversation up to date until ``stop`` is set or the conversation is
    gone: a catch-up over REST, then the WebSocket's frames as they come (reconnecting
    with back-off, polling when the WebSocket cannot be used)."""

    def __init__(self, server: AgentServer, conversation_id: str, say: Say, stop: threading.Event):
        self.server, self.conversation_id, self.say, self.stop = server, conversation_id, say, stop
        self.info: dict = {}
        self.since = ""  # the timestamp of the last event stored
        self.polling = False

    def run(self) -> None:
        try:
            self._run()
        finally:
            self._not_live()
            connections.close_all()  # this thread's

    def _not_live(self) -> None:
        for attempt in range(5):
            try:
                Conversation.objects.filter(conversation_id=self.conversation_id).update(live_until=None)
                return
            except DatabaseError as e:
                if attempt == 4:
                    self.say(f"{self.conversation_id}: still shown live for up to {LIVE_FOR.seconds} s ({e})")
                time.sleep(0.2)

    def _run(self) -> None:
        cid = self.conversation_id
        failures = 0
        problems = ""
        while not self.stop.is_set():
            try:
                self.catch_up()
                failures = 0
                if self.polling:
                    self.poll()
                else:
                    self.listen()
            except Gone as e:
                self.say(f"{cid}: {e} (deleted?); stopped following it. {self._kept()}")
                return
            except Unauthorized as e:
                self.say(f"{cid}: {e}; stopped following it. {self._kept()}")
                return
            except ImportFailed as e:
                if str(e) != problems:  # once, not at every attempt
                    self.say(f"{cid}: nothing stored, the server's events do not import:\n{e}")
                problems = str(e)
                self._back_off(failures, "")
                failures += 1
            except (ServerError, ConnectionClosed, InvalidHandshake, OSError) as e:
                self._back_off(failures, _reason(e))
                failures += 1
            except DatabaseError as e:
                self._back_off(failures, f"the database failed ({e})")
                failures += 1

    def _back_off(self, failures: int, reason: str) -> None:
        wait = BACKOFF[min(failures, len(BACKOFF) - 1)]
        if reason:
            self.say(f"{self.conversation_id}: {reason}; trying again in {wait} s")
        self.stop.wait(wait)

    def _kept(self) -> str:
        count = Conversation.objects.filter(conversation_id=self.conversation_id).values_list("event_count", flat=True)
        return f"The {count.first() or 0} events stored here are kept."

    def catch_up(self) -> None:
        """Everything the server holds now (after a reconnection too: nothing is missed)."""
        self.info = self.server.conversation(self.conversation_id)
        self._store(self.server.events(self.conversation_id))

    def _store(self, events: Frames) -> None:
        imported = store(self.server, self.info, events, live=True)
        stamps = [data.get("timestamp") for data, _ in events if isinstance(data, dict)]
        self.since = max([s for s in stamps if isinstance(s, str)] + [self.since])
        if imported is not None:
            self.say(described(imported, self.conversation_id))

    def listen(self) -> None:
        try:
            socket = connect(
                self.server.socket_url(self.conversation_id, self.since),
                open_timeout=TIMEOUT,
                close_timeout=2,
                max_size=settings.EVENTVIEWER_MAX_EVENT_BYTES,
            )
        except InvalidHandshake as e:
            # The REST API answers (the catch-up just worked) but the WebSocket does not.
            self.say(f"{self.conversation_id}: no WebSocket ({_reason(e)}); polling every {POLL_EVERY} s instead")
            self.polling = True
            return
        with socket:
            if self.server.api_key:
                socket.send(orjson.dumps({"type": "auth", "session_api_key": self.server.api_key}).decode())
            self.say(f"{self.conversation_id}: following live")
            frames: Frames = []
            try:
                while not self.stop.is_set():
                    try:
                        frame = socket.recv(timeout=QUIET if frames else HEARTBEAT)
                    except TimeoutError:
                        if frames:
                            self._store_frames(frames)
                            frames = []
                        else:
                            self.heartbeat()
                        continue
                    raw = frame.encode() if isinstance(frame, str) else frame
                    try:
                        data = orjson.loads(raw)
                    except orjson.JSONDecodeError:
                        raise ServerError("the agent-server sent a frame that is not JSON") from None
                    kind = data.get("kind") if isinstance(data, dict) else None
                    if kind == kinds.STATE_UPDATE and data.get("key") == FULL_STATE:
                        self._take_state(data.get("value"))
                        self._store_frames(frames)
                        frames = []
                    elif kind not in NOT_STORED:
                        frames.append((data, raw))
                        if len(frames) >= 250:
                            self._store_frames(frames)
                            frames = []
            except ConnectionClosed as e:
                if frames:
                    self._store_frames(frames)
                code = e.rcvd.code if e.rcvd else None
                if code == CLOSED_UNAUTHORIZED:
                    raise Unauthorized(self.server.refused(401)) from None
                if code == CLOSED_NOT_FOUND:
                    raise Gone(f"conversation {self.conversation_id} is not on the agent-server") from None
                raise

    def _take_state(self, value: Any) -> None:
        if isinstance(value, dict):
            for key in ("execution_status", "leaf_event_id"):
                if value.get(key):
                    self.info[key] = value[key]

    def _store_frames(self, frames: Frames) -> None:
        """Store frames as they came. The server moves HEAD to every event it appends but
        a state update, and never says so; a state update may change the status."""
        for data, _ in frames:
            if not isinstance(data, dict):
                continue
            if data.get("kind") != kinds.STATE_UPDATE:
                self.info["leaf_event_id"] = data.get("id")
            elif data.get("key") == "execution_status":
                self.info["execution_status"] = data.get("value")
        try:
            self._store(frames)
        except ImportFailed:
            # Frames out of order (an event pushed live before one being resent): the
            # server's own order settles it.
            self.catch_up()

    def heartbeat(self) -> None:
        """Nothing came for a while: is the conversation still there (the WebSocket stays
        open after a delete), and did its state change?"""
        info = self.server.conversation(self.conversation_id)
        if head_and_status(info) != head_and_status(self.info):
            self.info = info
        self._store([])

    def poll(self) -> None:
        while not self.stop.wait(POLL_EVERY):
            self.info = self.server.conversation(self.conversation_id)
            self._store(self.server.events(self.conversation_id, since=self.since))


def _reason(error: BaseException) -> str:
    if isinstance(error, ConnectionClosed):
        return "the agent-server closed the connection" + (f" ({error.rcvd.code})" if error.rcvd else "")
    return str(error) or error.__class__.__name__
