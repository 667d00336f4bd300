"""An OpenHands agent-server's conversations, over its REST API (following them over its
WebSocket is follow.py's).

Each conversation is stored like an import, all or nothing, by the importer itself: the
server's event search returns every branch in file order (its items are byte for byte
its event files), so the tree is built here from ``parent_id`` exactly as on import, and
HEAD comes from the conversation's ``leaf_event_id``. A re-sync adds only new events.
"""

from __future__ import annotations

import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode, urlsplit

import orjson
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from eventviewer.imports.importer import Imported, import_sources, stored_state
from eventviewer.imports.sources import ConversationSource, RawEvent
from eventviewer.models import Conversation
from eventviewer.trajectory import serverstate
from eventviewer.trajectory.ids import normalize_conversation_id

PAGE = 100  # the largest page the server gives
TIMEOUT = 30  # seconds for one request, or to open the WebSocket
LIVE_FOR = timedelta(seconds=30)  # a follower's heartbeat keeps its conversation "live" this long

Frames = list[tuple[Any, bytes]]  # (parsed event, its JSON as the server sent it)


class ServerError(Exception):
    """The agent-server could not be used; the message says why."""


class Unauthorized(ServerError):
    """A missing or wrong API key."""


class Gone(ServerError):
    """The conversation is not (or no longer) on the server."""


def dashed(conversation_id: str) -> str:
    return str(uuid.UUID(conversation_id))


class AgentServer:
    """The REST API of one agent-server (``X-Session-API-Key`` when a key is given)."""

    def __init__(self, url: str, api_key: str = ""):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{url!r} is not an http:// or https:// URL")
        self.url = url.rstrip("/")
        self.api_key = api_key

    def get(self, path: str, **query: Any) -> Any:
        query = {k: v for k, v in query.items() if v not in (None, "")}
        url = self.url + path + (f"?{urlencode(query)}" if query else "")
        headers = {"Accept": "application/json"}
        if self.api_key:
            headers["X-Session-API-Key"] = self.api_key
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=TIMEOUT) as response:
                body = response.read()
        except urllib.error.HTTPError as e:
            if e.code in (401, 403):
                raise Unauthorized(self.refused(e.code)) from None
            if e.code == 404:
                raise Gone(f"{url} answered 404 Not Found") from None
            raise ServerError(f"{url} answered {e.code} {e.reason}") from None
        except (urllib.error.URLError, OSError) as e:  # refused, reset, timed out
            reason = getattr(e, "reason", None) or e
            raise ServerError(f"cannot reach the agent-server at {self.url} ({reason})") from None
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            raise ServerError(f"{url} did not answer JSON: is {self.url} an OpenHands agent-server?") from None

    def refused(self, status: int) -> str:
        if self.api_key:
            return f"the agent-server at {self.url} refused the API key ({status} Unauthorized): check --api-key"
        return (
            f"the agent-server at {self.url} needs an API key ({status} Unauthorized): "
            "pass its session API key with --api-key"
        )

    def _page(self, path: str, **query: Any) -> tuple[list, str | None]:
        found = self.get(path, limit=PAGE, **query)
        if not isinstance(found, dict) or not isinstance(found.get("items"), list):
            raise ServerError(f"{self.url}{path} answered something other than a page of items")
        return found["items"], found.get("next_page_id")

    def conversations(self) -> Iterator[dict]:
        """Every conversation's ConversationInfo, newest first."""
        page = None
        while True:
            items, page = self._page("/api/conversations/search", page_id=page)
            yield from items
            if not page:
                return

    def conversation(self, conversation_id: str) -> dict:
        try:
            info = self.get(f"/api/conversations/{dashed(conversation_id)}")
        except Gone:
            raise Gone(f"conversation {conversation_id} is not on the agent-server at {self.url}") from None
        if not isinstance(info, dict) or normalize_conversation_id(str(info.get("id", ""))) != conversation_id:
            raise ServerError(f"{self.url} answered something other than conversation {conversation_id}")
        return info

    def events(self, conversation_id: str, since: str = "") -> Frames:
        """The conversation's events in the server's order (those stamped ``since`` or
        later, when given), each with its JSON as the server writes it to its files."""
        path = f"/api/conversations/{dashed(conversation_id)}/events/search"
        events: Frames = []
        page = None
        while True:
            try:
                items, page = self._page(path, page_id=page, timestamp__gte=since)
            except Gone:
                raise Gone(f"conversation {conversation_id} is not on the agent-server at {self.url}") from None
            events += [(item, orjson.dumps(item)) for item in items]
            if not page:
                return events

    def socket_url(self, conversation_id: str, since: str) -> str:
        scheme = "wss" if self.url.startswith("https:") else "ws"
        query = {"resend_mode": "since", "after_timestamp": since} if since else {"resend_mode": "all"}
        return f"{scheme}{self.url[self.url.index(':') :]}/sockets/events/{dashed(conversation_id)}?{urlencode(query)}"


def head_and_status(info: dict) -> tuple:
    """What of a conversation's state the importer follows: HEAD and status."""
    return info.get("leaf_event_id"), info.get("execution_status")


def store(server: AgentServer, info: dict, events: Frames, live: bool = False) -> Imported | None:
    """Store one conversation as the server describes it (``info``, its ConversationInfo
    or what the WebSocket said since) with ``events`` in the server's order: the ones
    not stored yet are appended after those that are. None when nothing changed."""
    conversation_id = normalize_conversation_id(str(info.get("id", "")))
    if conversation_id is None:
        raise ServerError(f"{server.url} named a conversation {info.get('id')!r}, which is not a conversation id")
    where = f"{server.url}/api/conversations/{dashed(conversation_id)}"
    with transaction.atomic():
        # Two syncs of one conversation queue here, so each event gets one position.
        conversation = Conversation.objects.select_for_update().filter(conversation_id=conversation_id).first()
        known, position = _known(conversation, events)
        raw_events, seen, new = [], set(), 0
        for data, raw in events:
            event_id = data.get("id") if isinstance(data, dict) else None
            if event_id in seen:
                continue  # sent twice: resent on connecting, and pushed live meanwhile
            seen.add(event_id)
            seq = known.get(event_id) if isinstance(event_id, str) else None
            if seq is None:
                seq, position, new = position, position + 1, new + 1
            raw_events.append(RawEvent(seq, f"{where}/events/{event_id}", data, raw))
        known_state = stored_state(conversation) if conversation is not None else {}
        if conversation is not None and not new and head_and_status(info) == head_and_status(known_state):
            if live:
                Conversation.objects.filter(pk=conversation.pk).update(live_until=timezone.now() + LIVE_FOR)
            return None
        source = ConversationSource(conversation_id, where, _events=lambda: iter(raw_events))
        # Stored as the SDK writes base_state.json: the server's own fields are not the SDK's.
        source.set_state(info, orjson.dumps(serverstate.sdk_state(info)))
        (imported,) = import_sources([source])
        live_until = timezone.now() + LIVE_FOR if live else imported.conversation.live_until
        Conversation.objects.filter(pk=imported.conversation.pk).update(**_described_by(info), live_until=live_until)
        imported.conversation.refresh_from_db()
        return imported


def _described_by(info: dict) -> dict[str, str]:
    """The Conversation fields the server's description sets: the title given on the
    server (else the importer's, the first user message) and where it comes from."""

    def conversation_id(key: str) -> str:
        return normalize_conversation_id(str(info.get(key) or "")) or ""

    fields = {
        "forked_from_conversation_id": conversation_id("forked_from_conversation_id"),
        "forked_from_event_id": str(info.get("forked_from_event_id") or "")[:255],
        "parent_conversation_id": conversation_id("parent_conversation_id"),
    }
    title = info.get("title")
    if isinstance(title, str) and title.strip():
        fields["title"] = title.replace("\x00", "").strip()[:300]
    return fields


def _known(conversation: Conversation | None, events: Frames) -> tuple[dict[str, int], int]:
    """The stored positions of these events, and the next free position."""
    if conversation is None:
        return {}, 0
    ids = [data["id"] for data, _ in events if isinstance(data, dict) and isinstance(data.get("id"), str)]
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
    return store(server, info, server.events(conversation_id))


def described(imported: Imported | None, conversation_id: str) -> str:
    if imported is None:
        return f"{conversation_id}: nothing new"
    conversation = imported.conversation
    branches = f"{conversation.leaf_count} branch{'es' if conversation.leaf_count != 1 else ''}"
    status = f", {conversation.execution_status}" if conversation.execution_status else ""
    return f"{conversation_id}: {imported.added} new of {conversation.event_count} events, {branches}{status}"
