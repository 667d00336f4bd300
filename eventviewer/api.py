"""The JSON API: conversations, one branch read the way the SDK reads it, evaluation runs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import wraps
from typing import Any
from urllib.parse import urlencode

import orjson
from django.conf import settings
from django.core.exceptions import BadRequest
from django.core.paginator import Paginator
from django.db.models import Exists, F, OuterRef
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from eventviewer import caches
from eventviewer.forms import PathPageForm, RunCompareForm, SearchForm
from eventviewer.lookups import get_conversation, get_leaf, valid
from eventviewer.models import Conversation, ConversationState, Event, Run
from eventviewer.scope import PageScope
from eventviewer.trajectory import patterns, runs
from eventviewer.trajectory.events import Light
from eventviewer.trajectory.model_view import SUMMARY_SUFFIX
from eventviewer.trajectory.projection import Message, messages_starting, sent
from eventviewer.views import runs as run_views
from eventviewer.views import stretch
from eventviewer.views.search import run_search

READ_AHEAD_MAX = 10_000  # events a page of a long branch reads past its end to finish its last message


def _json(body: dict[str, Any], status: int = 200) -> HttpResponse:
    """A JSON response written by orjson: a 10,000-event branch is a few hundred
    kilobytes, which the standard library's encoder takes ten times longer to write."""
    return HttpResponse(orjson.dumps(body), status=status, content_type="application/json")


def _error(status: int, message: str) -> HttpResponse:
    return _json({"error": message}, status=status)


def _read_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """GET (and HEAD) only; anything else is a JSON 405, like every other API error
    (CSRF checks would answer a POST with an HTML 403 first: these views change nothing).
    The lookups' 400s and 404s become JSON too."""

    @csrf_exempt
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method not in ("GET", "HEAD"):
            response = _error(405, f"{request.method} is not allowed here; use GET")
            response["Allow"] = "GET, HEAD"
            return response
        try:
            return view(request, *args, **kwargs)
        except BadRequest as e:
            return _error(400, str(e))
        except Http404 as e:
            return _error(404, str(e))

    return wrapper


def _conversation_json(request: HttpRequest, conversation: Conversation, has_base_state: bool) -> dict[str, Any]:
    return {
        "conversation_id": conversation.conversation_id,
        "title": conversation.title,
        "execution_status": conversation.execution_status,
        "head": conversation.skeleton.get("head"),
        # The HEAD's depth (0 for a root), as the diagram and branch list count it, and
        # the number of events on its branch.
        "head_depth": conversation.head_path_length - 1 if conversation.head_id else None,
        "head_path_length": conversation.head_path_length,
        "events": conversation.event_count,
        "branches": conversation.leaf_count,
        "pending": conversation.pending_count,
        "mismatched": conversation.mismatch_count,
        "agent": conversation.agent_kind,
        "model": conversation.model,
        "source": conversation.source,
        "imported_at": conversation.imported_at.isoformat(),
        "url": request.build_absolute_uri(conversation.get_absolute_url()),
        "path_url": request.build_absolute_uri(f"/api/conversations/{conversation.conversation_id}/path/"),
    } | (
        {"base_state_url": request.build_absolute_uri(f"{conversation.get_absolute_url()}base_state.json")}
        if has_base_state  # an events file or a V0 trajectory has none
        else {}
    )


def _message_json(message: Message, limit: int) -> dict[str, Any]:
    """A message, its ids bounded like a page: one holding more than ``limit`` events
    (adjacent user messages are merged: a branch of them is one message) lists the first
    ``limit`` and says how many it holds."""
    body: dict[str, Any] = {
        "role": message.role,
        "kind": message.kind,
        "event_ids": message.event_ids[:limit],
        "tool_call_ids": message.tool_call_ids[:limit],
    }
    if len(message.event_ids) > limit or len(message.tool_call_ids) > limit:
        body["event_count"] = len(message.event_ids)
    if message.tool_call_id:
        body["tool_call_id"] = message.tool_call_id
    return body


@_read_only
def conversations(request: HttpRequest) -> HttpResponse:
    try:
        number = int(request.GET.get("page", "1"))
    except ValueError:
        return _error(400, "page must be a positive integer")
    if number < 1:
        return _error(400, "page must be a positive integer")
    has_state = Exists(ConversationState.objects.filter(conversation=OuterRef("pk")))
    listed = Conversation.objects.shown().annotate(has_base_state=has_state).order_by("-imported_at", "-id")
    paginator = Paginator(listed, 100)
    if number > max(paginator.num_pages, 1):
        return _error(404, f"there is no page {number}")
    page = paginator.page(number)
    return _json(
        {
            "count": paginator.count,
            "page": number,
            "next": f"?page={number + 1}" if page.has_next() else None,
            # has_base_state: the annotation above, which the stubs lose on a custom QuerySet
            "conversations": [_conversation_json(request, c, c.has_base_state) for c in page],  # type: ignore[attr-defined]
        }
    )


@_read_only
def path(request: HttpRequest, conversation_id: str) -> HttpResponse:
    """One branch, root first, a page of ``limit`` events from ``offset``: the page's
    events, the messages (and the model's view) that start in it, and its pending actions
    and mismatched results; the totals are the whole branch's."""
    conversation = get_conversation(conversation_id)
    params = valid(PathPageForm, request.GET)
    leaf = get_leaf(conversation, params["leaf"])
    offset, limit, named = params["offset"] or 0, params["limit"], bool(params["leaf"])
    # Events never change once imported: a page stays true until the next import or HEAD
    # change (updated_at), so its bytes are kept (in the default cache, bounded) for the
    # next reader of it; by the read's limit too (a branch over it is answered a page at a time).
    version = f"{conversation.pk}:{conversation.updated_at.timestamp()}:{settings.EVENTVIEWER_FULL_READ_MAX}"
    key = f"api-path:{version}:{leaf.pk if leaf else 0}:{offset}:{limit}:{named}"
    content = caches.cached(key, lambda: orjson.dumps(_path_body(conversation, leaf, offset, limit, named)))
    return HttpResponse(content, content_type="application/json")


def _path_body(conversation: Conversation, leaf: Event | None, offset: int, limit: int, named: bool) -> dict[str, Any]:
    body = {
        "conversation": conversation.conversation_id,
        "head": conversation.skeleton.get("head"),
        "leaf": leaf.event_id if leaf else None,
        "offset": offset,
        "limit": limit,
        "path_length": 0,
        "messages_total": 0,
        "view_length": 0,
        "view_messages_total": 0,
        "pending_total": 0,
        "mismatched_total": 0,
        "next": None,
        "path": [],
        "messages": [],
        "view": {"event_ids": [], "messages": []},
        "view_unhandled_condensation_request": False,
        "pending_action_ids": [],
        "mismatched_observations": [],
        "whole_branch": True,  # false: too long to read whole, figures that need all of it are null
    }
    if leaf is not None:
        body.update(_branch_page(conversation, leaf, offset, limit, named))
    return body


def _branch_page(conversation: Conversation, leaf: Event, offset: int, limit: int, named: bool) -> dict[str, Any]:
    """A page of the branch ending at ``leaf``, read as every page reads it
    (``views.stretch.read_depths``): the page's events and their pending and mismatched
    state are exact. A branch too long to read at once (EVENTVIEWER_FULL_READ_MAX) has what
    needs all of it (its messages total, the model's view, and its problem totals unless
    HEAD's, counted at import) null, and ``note`` says why."""
    reading, events, _ = stretch.read_depths(conversation, leaf, offset, offset + limit)
    length = len(reading.path) if reading.whole else (leaf.depth or 0) + 1
    page = [e.event_id for e in events]
    in_page = set(page)
    pairing = reading.pairing
    next_page = None
    if offset + limit < length:
        query = {"offset": offset + limit, "limit": limit, **({"leaf": leaf.event_id} if named else {})}
        next_page = f"?{urlencode(query)}"
    body: dict[str, Any] = {
        "path_length": length,
        "next": next_page,
        "path": page,
        "pending_action_ids": [eid for eid in pairing.pending if eid in in_page],
        "mismatched_observations": [
            {"id": eid, "code": m.code, "reason": m.reason} for eid, m in pairing.mismatched.items() if eid in in_page
        ],
        "whole_branch": reading.whole,
    }
    if reading.whole:
        # A summary in the model's view belongs to the page of the condensation that wrote it.
        in_view = {*page, *(eid + SUMMARY_SUFFIX for eid in page)}
        view = reading.view
        body.update(
            messages_total=len(reading.messages),
            view_length=len(view.events),
            view_messages_total=len(view.messages),
            pending_total=len(pairing.pending),
            mismatched_total=len(pairing.mismatched),
            messages=[_message_json(m, limit) for m in reading.messages if m.event_ids[0] in in_view],
            view={
                "event_ids": [eid for eid in view.event_ids if eid in in_view],
                "messages": [_message_json(m, limit) for m in view.messages if m.event_ids[0] in in_view],
            },
            view_unhandled_condensation_request=view.unhandled_condensation_request,
        )
        return body
    counted = leaf.pk == conversation.head_id
    body.update(
        messages_total=None,
        view_length=None,
        view_messages_total=None,
        pending_total=conversation.pending_count if counted else None,
        mismatched_total=conversation.mismatch_count if counted else None,
        messages=_messages_starting(leaf, events, offset, limit, length),
        view=None,
        view_unhandled_condensation_request=None,
        note=(
            f"This branch is {length:,} events long, over EVENTVIEWER_FULL_READ_MAX "
            f"({settings.EVENTVIEWER_FULL_READ_MAX:,}): it is read a page at a time, so what needs all of it "
            "is null: its messages total, the model's view"
            + ("" if counted else ", and its pending and mismatched totals (counted at import for HEAD's branch only)")
            + ". The page's events, the messages that start in it and their pending and mismatched state are exact"
            " (a message that runs on past what a page reads has event_count null)."
        ),
    )
    return body


def _messages_starting(leaf: Event, events: list[Light], offset: int, limit: int, length: int) -> list[dict[str, Any]]:
    """The messages that start in a page of a long branch, as the whole read lists them:
    the last event before the page that the model is sent says whether the page's first
    events continue its message, and the events after the page are read until the page's
    last message ends (at most READ_AHEAD_MAX of them: past that its length is not known)."""
    previous, start, back = None, offset, 64
    while previous is None and start > 0:
        earlier = Event.objects.on_branch(leaf, max(0, start - back), start)
        previous = next((e for e in reversed(earlier) if sent(e)), None)
        start, back = start - back, back * 4
    ahead: list[Light] = []
    read_to, reach = offset + limit, min(limit, READ_AHEAD_MAX)
    while True:
        ahead += Event.objects.on_branch(leaf, read_to, offset + limit + reach)
        read_to = offset + limit + reach
        found = messages_starting(previous, events, ahead, read_to >= length)
        if not found.open_end or reach >= READ_AHEAD_MAX:
            break
        reach = min(reach * 4, READ_AHEAD_MAX)
    listed = [_message_json(m, limit) for m in found.messages]
    if found.open_end:
        listed[-1]["event_count"] = None  # it goes on past what was read: how far is not known
    return listed


@_read_only
def search(request: HttpRequest, conversation_id: str) -> HttpResponse:
    """The conversation's events that match ``q``, best first, a page of 50 at a time
    (``page``), with the same filters as the search page."""
    conversation = get_conversation(conversation_id)
    params = valid(SearchForm, request.GET)
    results = run_search(PageScope(conversation), params)
    body = {
        "query": results.query.text,
        "total": results.total,
        "more": results.more,
        "page": results.page,
        "pages": results.pages,
        "next": None,
        "results": [
            {
                "event_id": hit.event.event_id,
                "leaf": hit.leaf or None,
                "kind": hit.event.kind,
                "tool_name": hit.event.tool_name,
                "failure": hit.event.failure,
                "snippet": hit.snippet_text,
                "url": request.build_absolute_uri(hit.href),
            }
            for hit in results.hits
        ],
    }
    if results.page < results.pages:
        body["next"] = "?" + urlencode({**request.GET.dict(), "page": results.page + 1})
    return _json(body)


RUN_PAGE = 100  # instances per page of /api/runs/<slug>/


def _page_number(request: HttpRequest) -> int:
    try:
        number = int(request.GET.get("page", "1"))
    except ValueError:
        raise BadRequest("page must be a positive integer") from None
    if number < 1:
        raise BadRequest("page must be a positive integer")
    return number


def _totals_json(totals: runs.Totals) -> dict[str, Any]:
    return {
        "instances": totals.instances,
        "resolved": totals.counts[runs.RESOLVED],
        "failed": totals.counts[runs.FAILED],
        "error": totals.counts[runs.ERROR],
        "not_scored": totals.not_scored,
        "resolve_rate": totals.resolve_rate,
        "tokens": int(totals.tokens.total),
        "cost": totals.cost.total,
    }


def _failure_json(row: Mapping[str, Any]) -> dict[str, Any] | None:
    if not row.get("first_failure_kind"):
        return None
    return {
        "event_id": row.get("first_failure", ""),
        "kind": row["first_failure_kind"],
        "tool": row["first_failure_tool"],
        "text": row["first_failure_text"],
    }


def _instance_json(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "instance_id": row["instance_id"],
        "conversation_id": row["cid"],
        "outcome": row["outcome"],
        "turns": row["turns"],
        "tokens": row["tokens"],
        "cost": row["cost"],
        "first_failure": _failure_json(row),
    }


@_read_only
def run_list(request: HttpRequest) -> HttpResponse:
    number = _page_number(request)
    paginator = Paginator(Run.objects.order_by("-imported_at", "-id"), 100)
    if number > max(paginator.num_pages, 1):
        raise Http404(f"there is no page {number}")
    page = paginator.page(number)
    return _json(
        {
            "count": paginator.count,
            "page": number,
            "next": f"?page={number + 1}" if page.has_next() else None,
            "runs": [
                {
                    "run": run.slug,
                    "name": run.name,
                    "imported_at": run.imported_at.isoformat(),
                    "totals": _totals_json(run_views.run_totals(run.instances.filter(conversation__deleting=False))),
                    "url": request.build_absolute_uri(f"/api/runs/{run.slug}/"),
                }
                for run in page
            ],
        }
    )


@_read_only
def run_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """A run: its totals, its failure patterns, a page of its instances (``?page=``)."""
    run = Run.objects.filter(slug=slug).first()
    if run is None:
        raise Http404(f"There is no run {slug}.")
    number = _page_number(request)
    shown = run.instances.filter(conversation__deleting=False)
    totals = run_views.run_totals(shown)
    found = patterns.grouped(shown.exclude(pattern="").values_list("instance_id", "pattern"), totals.instances)
    rows = (
        shown.annotate(tokens=F("conversation__prompt_tokens") + F("conversation__completion_tokens"))
        .order_by("instance_id")
        .values(
            "instance_id",
            "outcome",
            "turns",
            "tokens",
            "first_failure",
            "first_failure_kind",
            "first_failure_tool",
            "first_failure_text",
            cid=F("conversation__conversation_id"),
            cost=F("conversation__cost"),
        )
    )
    paginator = Paginator(rows, RUN_PAGE)
    if number > max(paginator.num_pages, 1):
        raise Http404(f"there is no page {number}")
    page = paginator.page(number)
    return _json(
        {
            "run": run.slug,
            "totals": _totals_json(totals),
            "patterns": [{"signature": p.signature, "count": p.count, "instance_ids": p.instance_ids} for p in found],
            "instances": [_instance_json(row) for row in page],
            "page": number,
            "next": f"?page={number + 1}" if page.has_next() else None,
        }
    )


@_read_only
def run_compare(request: HttpRequest) -> HttpResponse:
    """Two runs over the union of their instances: each side, its change, McNemar's p."""
    params = valid(RunCompareForm, request.GET)
    a, b = (Run.objects.filter(slug=params[side]).first() for side in ("a", "b"))
    for side, run in (("a", a), ("b", b)):
        if run is None:
            raise Http404(f"There is no run {params[side]}.")
    assert a is not None and b is not None
    sides = run_views.sides_of(a, b)
    found = runs.changes(
        {i: s["a"]["outcome"] for i, s in sides.items() if "a" in s},
        {i: s["b"]["outcome"] for i, s in sides.items() if "b" in s},
    )
    values = list(found.values())
    paired = {i: c for i, c in found.items() if c not in (runs.ONLY_A, runs.ONLY_B)}
    return _json(
        {
            "a": a.slug,
            "b": b.slug,
            "counts": {c: values.count(c) for c in runs.CHANGES},
            "instances": [
                {
                    "instance_id": i,
                    "a": _instance_json(sides[i]["a"]) if "a" in sides[i] else None,
                    "b": _instance_json(sides[i]["b"]) if "b" in sides[i] else None,
                    "change": c,
                }
                for i, c in found.items()
                if not params["change"] or c == params["change"]
            ],
            "mcnemar_p": runs.mcnemar_p(paired),
        }
    )
