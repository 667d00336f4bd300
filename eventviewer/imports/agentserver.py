"""An OpenHands agent-server's conversations, over its REST API (following them over its
WebSocket is follow.py's).

Each conversation is stored like an import, all or nothing, by the importer itself: the
server's event search returns every branch in file order (its items are byte for byte
its event files), so the tree is built here from ``parent_id`` exactly as on import, and
HEAD comes from the conversation's ``leaf_event_id``. A re-sync adds only new events.
"""

from __future__ import annotations

import http.client
import socket
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode, urlsplit

import orjson
from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from eventviewer.imports.importer import Imported, import_sources, stored_state
from eventviewer.imports.jsontext import READ_CHUNK
from eventviewer.imports.sources import ConversationSource, RawEvent, described_by
from eventviewer.models import Conversation
from eventviewer.trajectory import serverstate
from eventviewer.trajectory.ids import normalize_conversation_id

PAGE = 100  # the largest page the server gives
LIVE_FOR = timedelta(seconds=30)  # a follower's heartbeat keeps its conversation "live" this long
MAX_LISTED = 100_000  # conversations one listing may name
ENVELOPE = 64 * 1024  # bytes an answer of one event may hold besides the event

Frames = list[tuple[Any, bytes]]  # (parsed event, its JSON as the server sent it)


class ServerError(Exception):
    """The agent-server could not be used; the message says why."""


class Unauthorized(ServerError):
    """A missing or wrong API key."""


class Gone(ServerError):
    """The conversation is not (or no longer) on the agent-server."""


class OverLimit(ServerError):
    """The server sent more than a limit allows; the message names the limit."""


class Redirected(ServerError):
    """The server sent us to another origin, which is not followed."""


class TooLarge(OverLimit):
    """One answer over the bytes an answer may hold."""


def dashed(conversation_id: str) -> str:
    return str(uuid.UUID(conversation_id))


def origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443, "ws": 80, "wss": 443}.get(parts.scheme)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    return scheme, (parts.hostname or "").lower(), port


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follows a redirect within the server's origin only: urllib would send the API
    key along to wherever the server points."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        if origin(newurl) != origin(req.full_url):
            raise Redirected(
                f"{req.full_url} redirected to {newurl}, another origin: refused "
                "(the API key is never sent to another server; pass the URL it should be reached at)"
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


_opener = urllib.request.build_opener(_SameOrigin)


class AgentServer:
    """The REST API of one agent-server (``X-Session-API-Key`` when a key is given).
    Every answer is read within the limits: bytes (``EVENTVIEWER_SYNC_MAX_ANSWER_BYTES``),
    time to connect and between bytes (``EVENTVIEWER_SYNC_TIMEOUT``) and for the whole
    answer (``EVENTVIEWER_SYNC_ANSWER_SECONDS``)."""

    def __init__(self, url: str, api_key: str = ""):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{url!r} is not an http:// or https:// URL")
        self.url = url.rstrip("/")
        self.api_key = api_key

    def get(self, path: str, cap: int | None = None, **query: Any) -> Any:
        """The JSON answer to a GET of ``path``, at most ``cap`` bytes (default: an answer's limit)."""
        query = {k: v for k, v in query.items() if v not in (None, "")}
        url = self.url + path + (f"?{urlencode(query)}" if query else "")
        headers = {"Accept": "application/json"}
        if self.api_key:
            headers["X-Session-API-Key"] = self.api_key
        body = self._read(url, headers, settings.EVENTVIEWER_SYNC_MAX_ANSWER_BYTES if cap is None else cap)
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            raise ServerError(f"{url} did not answer JSON: is {self.url} an OpenHands agent-server?") from None

    def _read(self, url: str, headers: dict[str, str], cap: int) -> bytes:
        timeout, seconds = settings.EVENTVIEWER_SYNC_TIMEOUT, settings.EVENTVIEWER_SYNC_ANSWER_SECONDS
        deadline = time.monotonic() + seconds
        try:
            with _opener.open(urllib.request.Request(url, headers=headers), timeout=timeout) as response:
                chunks: list[bytes] = []
                size = 0
                while True:
                    # read1: what has come, never waiting for a whole buffer (a byte at a time).
                    chunk = response.read1(READ_CHUNK)
                    if not chunk:
                        return b"".join(chunks)
                    size += len(chunk)
                    if size > cap:
                        chunks.clear()  # the traceback keeps this frame
                        raise TooLarge(f"{url} answered more than {cap:,} bytes")
                    if time.monotonic() > deadline:
                        raise OverLimit(f"{url} took more than {seconds} s to answer (EVENTVIEWER_SYNC_ANSWER_SECONDS)")
                    chunks.append(chunk)
        except urllib.error.HTTPError as e:
            if e.code in (401, 403):
                raise Unauthorized(self.refused(e.code)) from None
            if e.code == 404:
                raise Gone(f"{url} answered 404 Not Found") from None
            raise ServerError(f"{url} answered {e.code} {e.reason}") from None
        except (urllib.error.URLError, OSError, http.client.HTTPException) as e:  # refused, reset, timed out
            reason = getattr(e, "reason", None) or e
            if isinstance(reason, TimeoutError | socket.timeout):
                reason = f"no answer within {timeout} s, EVENTVIEWER_SYNC_TIMEOUT"
            raise ServerError(f"cannot reach the agent-server at {self.url} ({reason})") from None

    def refused(self, status: int) -> str:
        if self.api_key:
            return f"the agent-server at {self.url} refused the API key ({status} Unauthorized): check --api-key"
        return (
            f"the agent-server at {self.url} needs an API key ({status} Unauthorized): "
            "pass its session API key with --api-key"
        )

    def _page(self, path: str, limit: int = PAGE, **query: Any) -> tuple[list[dict[str, Any]], str | None]:
        """One page; an answer over the bytes an answer may hold is asked again in smaller
        pages (down to one event, which may be as large as an event may be)."""
        cap = None if limit > 1 else settings.EVENTVIEWER_MAX_EVENT_BYTES + ENVELOPE
        while True:
            try:
                found = self.get(path, cap=cap, limit=limit, **query)
                break
            except TooLarge as e:
                if limit == 1:
                    raise OverLimit(f"{e}: one event over the limit (EVENTVIEWER_MAX_EVENT_BYTES)") from None
                if "events/search" not in path:
                    raise OverLimit(f"{e} (EVENTVIEWER_SYNC_MAX_ANSWER_BYTES)") from None
            limit //= 2  # outside the handler: the refused answer is let go of first
            if limit == 1:
                cap = settings.EVENTVIEWER_MAX_EVENT_BYTES + ENVELOPE
        if not isinstance(found, dict) or not isinstance(found.get("items"), list):
            raise ServerError(f"{self.url}{path} answered something other than a page of items")
        page = found.get("next_page_id")
        if page is not None and not isinstance(page, str):
            raise ServerError(f"{self.url}{path} answered a next_page_id that is not a string")
        return found["items"], page

    def _pages(self, path: str, **query: Any) -> Iterator[list[dict[str, Any]]]:
        """Every page, each once: a server that sends a page already sent goes round in circles."""
        page, seen = None, set()
        while True:
            items, page = self._page(path, page_id=page, **query)
            yield items
            if not page:
                return
            if page in seen:
                raise ServerError(f"{self.url}{path} sent page {page[:100]!r} twice: its pages never end")
            seen.add(page)

    def conversations(self) -> Iterator[dict[str, Any]]:
        """Every conversation's ConversationInfo, newest first."""
        listed = 0
        for items in self._pages("/api/conversations/search"):
            listed += len(items)
            if listed > MAX_LISTED:
                raise OverLimit(f"{self.url} lists more than {MAX_LISTED:,} conversations")
            yield from items

    def conversation(self, conversation_id: str) -> dict[str, Any]:
        cap = settings.EVENTVIEWER_MAX_BASE_STATE_BYTES  # what is kept of it: its base state
        try:
            info = self.get(f"/api/conversations/{dashed(conversation_id)}", cap=cap)
        except Gone:
            raise Gone(f"conversation {conversation_id} is not on the agent-server at {self.url}") from None
        except TooLarge as e:
            raise OverLimit(
                f"{e}: conversation {conversation_id}'s state over the limit (EVENTVIEWER_MAX_BASE_STATE_BYTES)"
            ) from None
        if not isinstance(info, dict) or normalize_conversation_id(str(info.get("id", ""))) != conversation_id:
            raise ServerError(f"{self.url} answered something other than conversation {conversation_id}")
        return info

    def events(self, conversation_id: str, since: str = "") -> Spool:
        """The conversation's events in the server's order (those stamped ``since`` or
        later, when given), each with its JSON as the server writes it to its files,
        within an import's limits: kept on disk, not in memory, until stored."""
        path = f"/api/conversations/{dashed(conversation_id)}/events/search"
        spool = Spool(f"{self.url}{path}")
        try:
            for items in self._pages(path, timestamp__gte=since):
                for item in items:
                    spool.add(item, orjson.dumps(item))
        except Gone:
            spool.close()
            raise Gone(f"conversation {conversation_id} is not on the agent-server at {self.url}") from None
        except BaseException:
            spool.close()
            raise
        return spool

    def socket_url(self, conversation_id: str, since: str) -> str:
        scheme = "wss" if self.url.startswith("https:") else "ws"
        query = {"resend_mode": "since", "after_timestamp": since} if since else {"resend_mode": "all"}
        return f"{scheme}{self.url[self.url.index(':') :]}/sockets/events/{dashed(conversation_id)}?{urlencode(query)}"


class Spool:
    """Events pulled from the server, in a temporary file: a conversation of the largest
    size an import takes never sits in memory. Over an import's limits (events, bytes
    per event, bytes in all) it refuses, naming the limit."""

    def __init__(self, where: str):
        self.where = where
        self.file = tempfile.TemporaryFile()
        self.ids: list[Any] = []  # each event's id, as sent
        self.size = 0
        self.latest = ""  # the latest timestamp

    def add(self, data: Any, raw: bytes) -> None:
        if len(self.ids) >= settings.EVENTVIEWER_MAX_EVENTS:
            raise OverLimit(
                f"{self.where}: more than {settings.EVENTVIEWER_MAX_EVENTS:,} events, over the limit "
                "(EVENTVIEWER_MAX_EVENTS)"
            )
        if len(raw) > settings.EVENTVIEWER_MAX_EVENT_BYTES:
            raise OverLimit(
                f"{self.where}: {_named(data)}{len(raw):,} bytes, over the limit of "
                f"{settings.EVENTVIEWER_MAX_EVENT_BYTES:,} bytes (EVENTVIEWER_MAX_EVENT_BYTES)"
            )
        self.size += len(raw)
        if self.size > settings.EVENTVIEWER_MAX_FILE_BYTES:
            raise OverLimit(
                f"{self.where}: more than {settings.EVENTVIEWER_MAX_FILE_BYTES:,} bytes of events, over the limit "
                "(EVENTVIEWER_MAX_FILE_BYTES)"
            )
        self.ids.append(data.get("id") if isinstance(data, dict) else None)
        stamp = data.get("timestamp") if isinstance(data, dict) else None
        if isinstance(stamp, str) and stamp > self.latest:
            self.latest = stamp
        self.file.write(len(raw).to_bytes(4, "big") + raw)

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[tuple[Any, bytes]]:
        self.file.seek(0)
        for _ in self.ids:
            raw = self.file.read(int.from_bytes(self.file.read(4), "big"))
            yield orjson.loads(raw), raw
        self.file.seek(0, 2)

    def close(self) -> None:
        self.file.close()


def _named(data: Any) -> str:
    if isinstance(data, dict) and isinstance(data.get("id"), str):
        return f"event {data['id'][:100]}: "
    return ""


def followed(info: dict[str, Any]) -> tuple[Any, Any, Any]:
    """What of a conversation's state the importer follows: HEAD, status and the
    statistics (tokens, cost, latency) that only the state holds."""
    return info.get("leaf_event_id"), info.get("execution_status"), info.get("stats")


Events = Frames | Spool


def store(server: AgentServer, info: dict[str, Any], events: Events, live: bool = False) -> Imported | None:
    """Store one conversation as the server describes it (``info``, its ConversationInfo
    or what the WebSocket said since) with ``events`` in the server's order: the ones
    not stored yet are appended after those that are. None when nothing changed."""
    conversation_id = normalize_conversation_id(str(info.get("id", "")))
    if conversation_id is None:
        raise ServerError(f"{server.url} named a conversation {info.get('id')!r}, which is not a conversation id")
    where = f"{server.url}/api/conversations/{dashed(conversation_id)}"
    ids = events.ids if isinstance(events, Spool) else [d.get("id") if isinstance(d, dict) else None for d, _ in events]
    with transaction.atomic():
        # Two syncs of one conversation queue here, so each event gets one position.
        conversation = Conversation.objects.select_for_update().filter(conversation_id=conversation_id).first()
        known, position = _known(conversation, [i for i in ids if isinstance(i, str)])
        seqs: list[int | None] = []  # each event's position, None for one sent twice
        seen: set[Any] = set()
        new = 0
        for event_id in ids:
            if event_id in seen:
                seqs.append(None)  # sent twice: resent on connecting, and pushed live meanwhile
                continue
            seen.add(event_id)
            seq = known.get(event_id) if isinstance(event_id, str) else None
            if seq is None:
                seq, position, new = position, position + 1, new + 1
            seqs.append(seq)
        cap = settings.EVENTVIEWER_MAX_EVENTS
        if position > cap:
            raise OverLimit(
                f"{where}: {position:,} events with the {new:,} new ones, over the limit of {cap:,} "
                "(EVENTVIEWER_MAX_EVENTS); nothing new stored"
            )
        known_state = stored_state(conversation) if conversation is not None else {}
        # Compared as stored: base_state.json as the SDK writes it (serverstate), nulls left out.
        unchanged = followed(serverstate.sdk_state(info)) == followed(serverstate.sdk_state(known_state))
        if conversation is not None and not new and unchanged:
            if live:
                Conversation.objects.filter(pk=conversation.pk).update(live_until=timezone.now() + LIVE_FOR)
            return None

        def raw_events() -> Iterator[RawEvent]:
            for seq, (data, raw) in zip(seqs, events, strict=True):
                if seq is not None:
                    event_id = data.get("id") if isinstance(data, dict) else None
                    yield RawEvent(seq, f"{where}/events/{event_id}", data, raw)

        source = ConversationSource(conversation_id, where, _events=raw_events)
        # Stored as the SDK writes base_state.json: the server's own fields are not the SDK's.
        source.set_state(info, orjson.dumps(serverstate.sdk_state(info)))
        (imported,) = import_sources([source])
        live_until = timezone.now() + LIVE_FOR if live else imported.conversation.live_until
        Conversation.objects.filter(pk=imported.conversation.pk).update(**described_by(info), live_until=live_until)
        imported.conversation.refresh_from_db()
        return imported


def _known(conversation: Conversation | None, ids: list[str]) -> tuple[dict[str, int], int]:
    """The stored positions of these events, and the next free position."""
    if conversation is None:
        return {}, 0
    stored = conversation.events
    if len(ids) <= 500:  # within any database's parameter limit
        known = dict(stored.filter(event_id__in=ids).values_list("event_id", "seq"))
    else:
        known = dict(stored.values_list("event_id", "seq"))
    last = stored.aggregate(last=Max("seq"))["last"]
    return known, 0 if last is None else last + 1


def sync(server: AgentServer, conversation_id: str) -> Imported | None:
    """Pull one conversation and store what is new (None: nothing was)."""
    info = server.conversation(conversation_id)
    events = server.events(conversation_id)
    try:
        return store(server, info, events)
    finally:
        events.close()


def described(imported: Imported | None, conversation_id: str) -> str:
    if imported is None:
        return f"{conversation_id}: nothing new"
    conversation = imported.conversation
    branches = f"{conversation.leaf_count} branch{'es' if conversation.leaf_count != 1 else ''}"
    status = f", {conversation.execution_status}" if conversation.execution_status else ""
    if not imported.added:
        return f"{conversation_id}: its state changed ({conversation.event_count} events, {branches}{status})"
    return f"{conversation_id}: {imported.added} new of {conversation.event_count} events, {branches}{status}"
