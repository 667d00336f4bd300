"""Following conversations of an agent-server while their agents work: a catch-up over
REST, then each one's WebSocket frames as they come, stored like every sync
(agentserver.store).

Any number of conversations cost the same few resources: one event loop holds every
WebSocket, and a fixed few worker threads make every REST call and every write, each
with its own database connection (a thread and a connection per conversation ran out of
both at 1,500 conversations)."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar

import orjson
from django.conf import settings
from django.db import DatabaseError, connections
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from eventviewer.imports.agentserver import (
    LIVE_FOR,
    AgentServer,
    Frames,
    Gone,
    OverLimit,
    Redirected,
    ServerError,
    Unauthorized,
    described,
    followed,
    origin,
    store,
)
from eventviewer.imports.importer import ImportFailed
from eventviewer.models import Conversation
from eventviewer.trajectory import kinds
from eventviewer.trajectory.ids import normalize_conversation_id

WORKERS = 4  # threads (and database connections) for REST calls and writes, however many conversations
HEARTBEAT = 10  # seconds: the longest a follower waits before checking on the conversation
QUIET = 0.2  # seconds without a frame before the frames received are stored
BATCH = 250  # frames stored at once at most
MAX_QUEUE = 4  # frames the WebSocket holds unread, each up to EVENTVIEWER_MAX_EVENT_BYTES
BACKOFF = (1, 2, 4, 8, 10)  # seconds between reconnection attempts
POLL_EVERY = 2  # seconds, when the WebSocket cannot be used
LIST_EVERY = 2  # seconds between looks for new conversations while following a whole server
NOT_STORED = {"StreamingDeltaEvent"}  # pushed over the WebSocket, never written to the log
FULL_STATE = "full_state"  # a state update the server pushes (not persisted) with its whole state
STATE_KEYS = ("execution_status", "leaf_event_id")  # what of a state update is taken as it is
STATS = "stats"  # a state update's key when the figures change: the REST API has them whole
CLOSED_UNAUTHORIZED, CLOSED_NOT_FOUND = 4001, 4004  # the server's WebSocket close codes
CLOSED_TOO_BIG = 1009  # ours, when a frame is over max_size

Say = Callable[[str], None]
T = TypeVar("T")


class Workers:
    """A fixed number of threads for blocking work, each closing its database
    connection when it stops."""

    def __init__(self, count: int):
        self.jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.threads = [threading.Thread(target=self._work, name=f"follow-worker-{i}") for i in range(count)]
        for thread in self.threads:
            thread.start()

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self.jobs.put((function, args, loop, future))
        return await future

    def _work(self) -> None:
        try:
            while (job := self.jobs.get()) is not None:
                function, args, loop, future = job
                if future.cancelled():  # its follower stopped while it waited
                    continue
                try:
                    result, error = function(*args), None
                except BaseException as e:  # handed to the follower awaiting it
                    result, error = None, e
                loop.call_soon_threadsafe(_settle, future, result, error)
        finally:
            connections.close_all()  # this thread's

    def close(self) -> None:
        for _ in self.threads:
            self.jobs.put(None)
        for thread in self.threads:
            thread.join()


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


class Follow:
    """Follows conversations of one server until ``stop`` is set; following the whole
    server (``follow_new``), new conversations are picked up as they appear."""

    def __init__(self, server: AgentServer, say: Say, stop: threading.Event):
        self.server, self.say, self.stop = server, say, stop
        self.refused: list[str] = []  # conversations no longer followed because of a limit or a redirect
        self.followed: set[str] = set()
        self.stopping = False
        # SQLite has one writer at a time: workers writing at once would only make each
        # other wait (or fail at once, on an in-memory database).
        self.writing: AbstractContextManager[Any] = (
            threading.Lock() if connections["default"].vendor == "sqlite" else nullcontext()
        )

    def run(self, ids: list[str], follow_new: bool) -> None:
        asyncio.run(self._main(ids, follow_new))

    async def _main(self, ids: list[str], follow_new: bool) -> None:
        self.workers = Workers(WORKERS)
        tasks: dict[str, asyncio.Task[None]] = {}

        def start(conversation_id: str) -> None:
            self.followed.add(conversation_id)
            tasks[conversation_id] = asyncio.create_task(Follower(self, conversation_id).run())

        try:
            for conversation_id in ids:
                start(conversation_id)
            self.say(f"following {self.server.url}; Ctrl-C stops")
            waited = 0.0
            while not self.stop.is_set():
                await asyncio.sleep(0.2)
                waited += 0.2
                if not follow_new:
                    if all(task.done() for task in tasks.values()):
                        break  # every conversation named is gone from the server
                    continue
                if waited >= LIST_EVERY:
                    waited = 0.0
                    try:
                        for conversation_id in await self.workers.run(listed, self.server):
                            if conversation_id not in tasks:
                                start(conversation_id)
                    except ServerError:
                        pass  # each follower reports the server's trouble itself
        finally:
            self.stopping = True
            while pending := [task for task in tasks.values() if not task.done()]:
                for task in pending:
                    task.cancel()
                await asyncio.wait(pending, timeout=5)
            try:
                await self.workers.run(not_live, list(tasks), self.say)
            finally:
                self.workers.close()


def listed(server: AgentServer) -> list[str]:
    """The ids of every conversation on the server."""
    return [i for info in server.conversations() if (i := normalize_conversation_id(str(info.get("id", ""))))]


def not_live(conversation_ids: list[str], say: Say) -> None:
    for attempt in range(5):
        try:
            Conversation.objects.filter(conversation_id__in=conversation_ids).update(live_until=None)
            return
        except DatabaseError as e:
            if attempt == 4:
                say(f"still shown live for up to {LIVE_FOR.seconds} s ({e})")
            threading.Event().wait(0.2)


class Follower:
    """Keeps one conversation up to date until it is cancelled or the conversation is
    gone: a catch-up over REST, then the WebSocket's frames as they come (reconnecting
    with back-off, polling when the WebSocket cannot be used)."""

    def __init__(self, follow: Follow, conversation_id: str):
        self.follow, self.server, self.say = follow, follow.server, follow.say
        self.conversation_id = conversation_id
        self.info: dict[str, Any] = {}
        self.since = ""  # the timestamp of the last event stored
        self.polling = False
        self.stats_changed = False

    async def work(self, function: Callable[..., T], *args: Any) -> T:
        return await self.follow.workers.run(function, *args)

    async def run(self) -> None:
        cid = self.conversation_id
        failures = 0
        problems = refused = ""
        while not self.follow.stopping:
            try:
                await self.work(self.catch_up)
                failures = 0
                if refused:
                    self.say(f"{cid}: the agent-server accepts the API key again")
                    refused = ""
                if self.polling:
                    await self.poll()
                else:
                    await self.listen()
            except Gone as e:
                await self._end(f"{e} (deleted?)")
                return
            except (OverLimit, Redirected) as e:
                self.follow.refused.append(cid)
                await self._end(f"refused: {e}")
                return
            except Unauthorized as e:
                # The key may be changed back (or the server restarted with it): keep
                # trying, and say so, rather than follow less without a word.
                if not refused:
                    self.say(f"{cid}: {e}; trying again every {BACKOFF[-1]} s at most, until it is accepted")
                refused = str(e)
                await self._back_off(failures, "")
                failures += 1
            except ImportFailed as e:
                if str(e) != problems:  # once, not at every attempt
                    self.say(f"{cid}: nothing stored, the server's events do not import:\n{e}")
                problems = str(e)
                await self._back_off(failures, "")
                failures += 1
            except (ServerError, ConnectionClosed, InvalidHandshake, OSError) as e:
                await self._back_off(failures, _reason(e))
                failures += 1
            except DatabaseError as e:
                await self._back_off(failures, f"the database failed ({e})")
                failures += 1

    async def _end(self, why: str) -> None:
        kept = await self.work(self._kept)
        self.say(f"{self.conversation_id}: {why}; stopped following it. {kept}")
        await self.work(not_live, [self.conversation_id], self.say)

    async def _back_off(self, failures: int, reason: str) -> None:
        wait = BACKOFF[min(failures, len(BACKOFF) - 1)]
        if reason:
            self.say(f"{self.conversation_id}: {reason}; trying again in {wait} s")
        await asyncio.sleep(wait)

    def _kept(self) -> str:
        count = Conversation.objects.filter(conversation_id=self.conversation_id).values_list("event_count", flat=True)
        return f"The {count.first() or 0} events stored here are kept."

    def catch_up(self) -> None:
        """Everything the server holds now (after a reconnection too: nothing is missed)."""
        self.info = self.server.conversation(self.conversation_id)
        events = self.server.events(self.conversation_id)
        try:
            self._store(events)
            self.since = max(self.since, events.latest)
        finally:
            events.close()

    def _store(self, events: Any) -> None:
        with self.follow.writing:
            imported = store(self.server, self.info, events, live=True)
        if imported is not None:
            self.say(described(imported, self.conversation_id))

    async def listen(self) -> None:
        url = self.server.socket_url(self.conversation_id, self.since)
        _, host, port = origin(url)
        try:
            # An explicit host and port: the library then refuses a redirect to
            # another origin, which would get the key sent in the first frame.
            socket = await connect(
                url,
                host=host,
                port=port,
                open_timeout=settings.EVENTVIEWER_SYNC_TIMEOUT,
                close_timeout=2,
                max_size=settings.EVENTVIEWER_MAX_EVENT_BYTES,
                max_queue=MAX_QUEUE,
            )
        except ValueError as e:
            raise Redirected(
                f"the agent-server's WebSocket {e}: refused (the API key goes to no other server)"
            ) from None
        except InvalidHandshake as e:
            # The REST API answers (the catch-up just worked) but the WebSocket does not.
            self.say(f"{self.conversation_id}: no WebSocket ({_reason(e)}); polling every {POLL_EVERY} s instead")
            self.polling = True
            return
        async with socket:
            if self.server.api_key:
                await socket.send(orjson.dumps({"type": "auth", "session_api_key": self.server.api_key}).decode())
            self.say(f"{self.conversation_id}: following live")
            frames: Frames = []
            size = 0
            try:
                while not self.follow.stopping:
                    try:
                        # asyncio.timeout, not wait_for: 3.11's wait_for can swallow a cancellation.
                        async with asyncio.timeout(QUIET if frames else HEARTBEAT):
                            frame = await socket.recv()
                    except TimeoutError:
                        if frames:
                            await self.work(self._store_frames, frames)
                            frames, size = [], 0
                        else:
                            await self.work(self.heartbeat)
                        continue
                    raw = frame.encode() if isinstance(frame, str) else frame
                    try:
                        data = orjson.loads(raw)
                    except orjson.JSONDecodeError:
                        raise ServerError("the agent-server sent a frame that is not JSON") from None
                    kind = data.get("kind") if isinstance(data, dict) else None
                    if kind == kinds.STATE_UPDATE and data.get("key") == FULL_STATE:
                        self._take_state(data.get("value"))
                        await self.work(self._store_frames, frames)
                        frames, size = [], 0
                    elif kind not in NOT_STORED:
                        frames.append((data, raw))
                        size += len(raw)
                        if len(frames) >= BATCH or size >= settings.EVENTVIEWER_SYNC_MAX_ANSWER_BYTES:
                            await self.work(self._store_frames, frames)
                            frames, size = [], 0
            except ConnectionClosed as e:
                if frames:
                    await self.work(self._store_frames, frames)
                if e.sent is not None and e.sent.code == CLOSED_TOO_BIG:
                    raise OverLimit(
                        f"the agent-server sent a frame over the limit of {settings.EVENTVIEWER_MAX_EVENT_BYTES:,} "
                        "bytes (EVENTVIEWER_MAX_EVENT_BYTES)"
                    ) from None
                code = e.rcvd.code if e.rcvd else None
                if code == CLOSED_UNAUTHORIZED:
                    raise Unauthorized(self.server.refused(401)) from None
                if code == CLOSED_NOT_FOUND:
                    raise Gone(f"conversation {self.conversation_id} is not on the agent-server") from None
                raise

    def _take_state(self, value: Any) -> None:
        if isinstance(value, dict):
            for key in STATE_KEYS:
                if value.get(key):
                    self.info[key] = value[key]
            self.stats_changed = self.stats_changed or value.get(STATS) != self.info.get(STATS)

    def _store_frames(self, frames: Frames) -> None:
        """Store frames as they came. The server moves HEAD to every event it appends but
        a state update, and never says so; a state update may change the status or the
        statistics."""
        for data, _ in frames:
            if not isinstance(data, dict):
                continue
            if data.get("kind") != kinds.STATE_UPDATE:
                self.info["leaf_event_id"] = data.get("id")
            elif data.get("key") in STATE_KEYS:
                self.info[data["key"]] = data.get("value")
            elif data.get("key") == STATS:
                self.stats_changed = True
        if self.stats_changed:
            # The pushed figures lack each response's (token_usages): ask for all of them.
            self.info[STATS] = self.server.conversation(self.conversation_id).get(STATS)
            self.stats_changed = False
        try:
            self._store(frames)
        except ImportFailed:
            # Frames out of order (an event pushed live before one being resent): the
            # server's own order settles it.
            self.catch_up()
            return
        stamps = [data.get("timestamp") for data, _ in frames if isinstance(data, dict)]
        self.since = max([s for s in stamps if isinstance(s, str)] + [self.since])

    def heartbeat(self) -> None:
        """Nothing came for a while: is the conversation still there (the WebSocket stays
        open after a delete), and did its state change?"""
        info = self.server.conversation(self.conversation_id)
        if followed(info) != followed(self.info):
            self.info = info
        self._store([])

    async def poll(self) -> None:
        while not self.follow.stopping:
            await asyncio.sleep(POLL_EVERY)
            await self.work(self._poll_once)

    def _poll_once(self) -> None:
        self.info = self.server.conversation(self.conversation_id)
        events = self.server.events(self.conversation_id, since=self.since)
        try:
            self._store(events)
            self.since = max(self.since, events.latest)
        finally:
            events.close()


def _reason(error: BaseException) -> str:
    if isinstance(error, ConnectionClosed):
        return "the agent-server closed the connection" + (f" ({error.rcvd.code})" if error.rcvd else "")
    if isinstance(error, TimeoutError):
        return f"no answer within {settings.EVENTVIEWER_SYNC_TIMEOUT} s (EVENTVIEWER_SYNC_TIMEOUT)"
    return str(error) or error.__class__.__name__
