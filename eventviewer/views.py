from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import orjson
from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.exceptions import BadRequest
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import Resolver404
from django.template import loader
from django.shortcuts import get_object_or_404, redirect, render
from django.templatetags.static import static
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from eventviewer import cards
from eventviewer.forms import ConversationListForm, EventForm, HeadForm, PathForm, ShareForm, UploadForm
from eventviewer.importer import ImportFailed, import_paths
from eventviewer.models import Conversation, Event, EventPayload, PathEvent, ShareLink, event_path, unpack
from eventviewer.sources import normalize_conversation_id
from eventviewer.trajectory import diagram
from eventviewer.trajectory.pairing import Mismatch
from eventviewer.trajectory.projection import Turn
from eventviewer.trajectory.reading import Reading
from eventviewer.trajectory.skeleton import latest_leaf_below

LIST_COLUMNS = [
    ("title", "Title"),
    ("status", "Status"),
    ("events", "Events"),
    ("branches", "Branches"),
    ("pending", "Pending"),
    ("mismatched", "Mismatched"),
    ("imported", "Imported"),
]
SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _get_conversation(raw_id: str) -> Conversation:
    conversation_id = normalize_conversation_id(raw_id)
    if conversation_id is None:
        raise BadRequest(f"{raw_id!r} is not a conversation id (32 hex digits, or a dashed UUID)")
    return get_object_or_404(Conversation, conversation_id=conversation_id)


def _get_share(token: str) -> ShareLink:
    """The share link for ``token``; 404 for an unknown token, 410 once revoked or expired."""
    share = ShareLink.objects.select_related("conversation").filter(token=token).first()
    if share is None:
        raise Http404("This share link does not exist.")
    if not share.is_active:
        raise _Gone()
    return share


class _Gone(Exception):
    pass


def _get_event(conversation: Conversation, event_id: str) -> Event:
    event = conversation.events.light().filter(event_id=event_id).first()
    if event is None:
        raise Http404(f"This conversation has no event {event_id!r}.")
    return event


def _checked(form: forms.Form, what: str = "query") -> forms.Form:
    """The form, or a 400 saying what is wrong with it."""
    if not form.is_valid():
        problems = "; ".join(f"{k}: {' '.join(v)}" if k != "__all__" else " ".join(v) for k, v in form.errors.items())
        raise BadRequest(f"Bad {what}: {problems}")
    return form


def _valid(form_class, data) -> dict:
    return _checked(form_class(data)).cleaned_data


@dataclass(frozen=True)
class Scope:
    """Where links point: the conversation's own pages, or a reviewer's share link."""

    conversation: Conversation
    share: ShareLink | None = None

    @property
    def base(self) -> str:
        return self.share.get_absolute_url() if self.share else self.conversation.get_absolute_url()

    @property
    def read_only(self) -> bool:
        return self.share is not None

    def url(self, **params: str | None) -> str:
        query = urlencode({k: v for k, v in params.items() if v})
        return self.base + (f"?{query}" if query else "")

    def event_url(self, event_id: str, leaf: str | None = None) -> str:
        return self.base + event_path(event_id, leaf)

    def diagram_url(self, leaf: str | None = None) -> str:
        return f"{self.base}diagram.svg" + (f"?{urlencode({'leaf': leaf})}" if leaf else "")


@dataclass
class Entry:
    """One event of a turn, as a card with its pairing state."""

    event: PathEvent
    card: cards.Card
    pending: bool = False
    mismatch: Mismatch | None = None
    result_id: str = ""  # an action's result
    answers: str = ""  # the action a result answers
    stray_text: bool = False


@dataclass
class Row:
    turn: Turn
    entries: list[Entry] = field(default_factory=list)
    index: int = 0

    @property
    def anchor_id(self) -> str:
        return self.entries[0].event.event_id


@dataclass
class Window:
    rows: list[Row]
    start: int
    end: int
    total: int

    @property
    def has_earlier(self) -> bool:
        return self.start > 0

    @property
    def has_later(self) -> bool:
        return self.end < self.total

    @property
    def later_count(self) -> int:
        return self.total - self.end


def _window(reading: Reading, at: str = "", before: str = "", after: str = "") -> tuple[int, int]:
    """The slice of turns to show: the newest page, or the page around ``at``,
    or the page just before ``before`` / just after ``after``."""
    size = settings.EVENTVIEWER_PAGE_SIZE
    total = len(reading.turns)
    anchor = at or before or after
    if not anchor:
        return max(0, total - size), total
    index = next((i for i, t in enumerate(reading.turns) if anchor in t.event_ids), None)
    if index is None:
        raise Http404(f"Event {anchor!r} is not on this branch.")
    if before:
        return max(0, index - size), index
    if after:
        return index + 1, min(total, index + 1 + size)
    start = max(0, min(index - size // 3, total - size))
    return start, min(total, start + size)


def _rows(reading: Reading, start: int, end: int) -> list[Row]:
    turns = reading.turns[start:end]
    pks = [e.pk for t in turns for e in t.events]
    packed = dict(EventPayload.objects.filter(pk__in=pks).values_list("pk", "packed")) if pks else {}
    pairing = reading.pairing
    pending = set(pairing.pending)
    rows = []
    for offset, turn in enumerate(turns):
        row = Row(turn, index=start + offset)
        for event in turn.events:
            eid = event.event_id
            row.entries.append(
                Entry(
                    event=event,
                    card=cards.build(orjson.loads(unpack(packed[event.pk]))),
                    pending=eid in pending,
                    mismatch=pairing.mismatched.get(eid),
                    result_id=pairing.result_for.get(eid, ""),
                    answers=pairing.answers.get(eid, ""),
                    stray_text=eid in turn.stray_text,
                )
            )
        rows.append(row)
    return rows


def _problems(reading: Reading, start: int, end: int, reach: int = 100) -> list[tuple[str, Mismatch | None, str]]:
    """The problems in and around the loaded turns, in path order, each with where it
    lies from them (before, in, after): keyboard n/p follows these past the window.
    Further ones are left out; moving the window brings them in."""
    wanted = set(reading.problem_ids)
    turn_of = {eid: i for i, turn in enumerate(reading.turns) for eid in turn.event_ids if eid in wanted}
    placed = [
        (eid, "before" if turn_of[eid] < start else ("after" if turn_of[eid] >= end else "in"))
        for eid in reading.problem_ids
    ]
    before = [p for p in placed if p[1] == "before"][-reach:]
    after = [p for p in placed if p[1] == "after"][:reach]
    near = before + [p for p in placed if p[1] == "in"] + after
    return [(eid, reading.pairing.mismatched.get(eid), where) for eid, where in near]


def _diagram(scope: Scope, leaf: Event | None, reading: Reading | None = None) -> SafeString:
    """The branch diagram with ``leaf``'s branch selected. Events never change, so a
    diagram stays valid until the next import or HEAD change (``updated_at``)."""
    conversation = scope.conversation
    key = f"diagram:{conversation.pk}:{conversation.updated_at.timestamp()}:{leaf.pk if leaf else 0}:{scope.base}"
    svg = cache.get(key)
    if svg is None:
        if reading is None and leaf is not None:
            reading = conversation.read_path(leaf)
        path = reading.path if reading else []
        problems = {}
        if reading:
            problems = {eid: "pending" for eid in reading.pairing.pending}
            problems.update({eid: "mismatched" for eid in reading.pairing.mismatched})
        svg = diagram.diagram_svg(
            conversation.skeleton,
            path=path,
            problems=problems,
            link=lambda event_id: scope.url(leaf=event_id),
            htmx_target="#workspace",
        )
        cache.set(key, svg, 3600)
    # diagram_svg builds every label from escaped text and sanitizes the SVG dot
    # returns against an allowlist of elements and attributes.
    return mark_safe(svg)


def _branches(conversation: Conversation, limit: int = 40) -> tuple[list[dict], int]:
    leaves = [n for n in conversation.skeleton.get("nodes", []) if n["leaf"]]
    leaves.sort(key=lambda n: n["seq"], reverse=True)
    return leaves[:limit], len(leaves)


def _conversation_page(request: HttpRequest, scope: Scope, params: dict) -> HttpResponse:
    conversation = scope.conversation
    leaf = _get_event(conversation, params["leaf"]) if params["leaf"] else conversation.head
    if leaf is not None and not leaf.is_tree_node:
        raise BadRequest(f"Event {leaf.event_id!r} is a {leaf.kind}, which is not on any branch.")
    reading = conversation.read_path(leaf) if leaf else None
    context = {
        "conversation": conversation,
        "scope": scope,
        "leaf": leaf,
        "reading": reading,
        "is_head": leaf is not None and leaf.pk == conversation.head_id,
    }
    if reading:
        start, end = _window(reading, params["at"], params["before"], params["after"])
        context["window"] = Window(_rows(reading, start, end), start, end, len(reading.turns))
        context["at"] = params["at"]
        if request.htmx and (params["before"] or params["after"]) and not request.htmx.history_restore_request:
            partial = "earlier" if params["before"] else "later"
            return render(request, f"conversations/detail.html#{partial}", context)
        context["problems"] = _problems(reading, start, end)
    context["diagram"] = _diagram(scope, leaf, reading)
    context["branches"], context["branch_total"] = _branches(conversation)
    if not scope.read_only and request.user.is_authenticated:
        context["share_links"] = conversation.share_links.all()[:50]
        context["share_form"] = ShareForm()
    if request.htmx and not request.htmx.history_restore_request:
        return render(request, "conversations/detail.html#workspace", context)
    return render(request, "conversations/detail.html", context)


@require_GET
@vary_on_headers("HX-Request")
def conversation_list(request: HttpRequest) -> HttpResponse:
    form = _checked(ConversationListForm(request.GET))
    conversations = Conversation.objects.all()
    q = form.cleaned_data["q"].strip()
    if q:
        match = Q(title__icontains=q)
        as_id = q.lower().replace("-", "")
        if as_id and all(c in "0123456789abcdef" for c in as_id):
            match |= Q(conversation_id__startswith=as_id)
        conversations = conversations.filter(match)
    conversations = conversations.order_by(*form.ordering()).defer("skeleton", "base_state")
    page = Paginator(conversations, settings.EVENTVIEWER_LIST_PAGE_SIZE).get_page(form.cleaned_data["page"] or 1)
    sort = form.cleaned_data["sort"] or "imported"
    direction = form.cleaned_data["dir"] or ("asc" if sort == "title" else "desc")
    columns = []
    for key, label in LIST_COLUMNS:
        natural = "asc" if key == "title" else "desc"
        flipped = {"asc": "desc", "desc": "asc"}[direction]
        columns.append((key, label, key not in ("title", "status", "imported"), flipped if key == sort else natural))
    context = {
        "page": page,
        "q": q,
        "sort": sort,
        "dir": direction,
        "columns": columns,
        "total": Conversation.objects.count(),
    }
    if request.htmx and not request.htmx.history_restore_request:
        return render(request, "conversations/list.html#table", context)
    return render(request, "conversations/list.html", context)


@require_GET
@vary_on_headers("HX-Request")
def conversation(request: HttpRequest, conversation_id: str) -> HttpResponse:
    found = _get_conversation(conversation_id)
    if conversation_id != found.conversation_id:
        query = request.GET.urlencode()
        return redirect(found.get_absolute_url() + (f"?{query}" if query else ""))
    return _conversation_page(request, Scope(found), _valid(PathForm, request.GET))


def _event_page(request: HttpRequest, scope: Scope, event_id: str) -> HttpResponse:
    conversation = scope.conversation
    event = _get_event(conversation, event_id)
    params = _valid(EventForm, request.GET)
    data = orjson.loads(unpack(EventPayload.objects.values_list("packed", flat=True).get(pk=event.pk)))
    leaf = None
    if event.is_tree_node:
        if params["leaf"]:
            leaf = params["leaf"]
        else:
            path_ids = [e.event_id for e in Event.objects.path_to(event)]
            leaf = _branch_through(conversation, event, path_ids)
    children = list(event.children.light().order_by("seq")[:100]) if event.is_tree_node else []
    parent = event.parent.event_id if event.parent_id else None
    context = {
        "conversation": conversation,
        "scope": scope,
        "event": event,
        "card": cards.build(data, full=True),
        "raw_json": cards.pretty(data),
        "leaf": leaf,
        "parent": parent,
        "children": children,
    }
    return render(request, "conversations/event.html", context)


def _branch_through(conversation: Conversation, event: Event, path_ids: list[str]) -> str:
    """The branch to show an event on: HEAD's if the event is on it, else the most
    recent leaf below the event."""
    head = conversation.head
    if head is not None and head.depth is not None and event.depth <= head.depth:
        head_path = Event.objects.path_to(head)
        if head_path[event.depth].pk == event.pk:
            return head.event_id
    return latest_leaf_below(conversation.skeleton, path_ids) or event.event_id


@require_GET
def event_detail(request: HttpRequest, conversation_id: str, event_id: str | None = None) -> HttpResponse:
    return _event_page(request, Scope(_get_conversation(conversation_id)), _event_id(request, event_id))


def _event_id(request: HttpRequest, event_id: str | None) -> str:
    """The event of an event page: in its path, or for "." and ".." in ``?id=``
    (see models.event_path)."""
    return event_id if event_id is not None else request.GET.get("id", "")


def _diagram_response(scope: Scope, request: HttpRequest) -> HttpResponse:
    params = _valid(EventForm, request.GET)
    conversation = scope.conversation
    leaf = _get_event(conversation, params["leaf"]) if params["leaf"] else conversation.head
    if leaf is not None and not leaf.is_tree_node:
        raise BadRequest(f"Event {leaf.event_id!r} is a {leaf.kind}, which is not on any branch.")
    svg = '<?xml version="1.0" encoding="UTF-8"?>\n' + str(_diagram(scope, leaf))
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    response["Content-Security-Policy"] = SVG_CSP
    response["Content-Disposition"] = f'inline; filename="{conversation.conversation_id}.svg"'
    return response


@require_GET
def diagram_svg(request: HttpRequest, conversation_id: str) -> HttpResponse:
    return _diagram_response(Scope(_get_conversation(conversation_id)), request)


@require_POST
@login_required
def set_head(request: HttpRequest, conversation_id: str) -> HttpResponse:
    conversation = _get_conversation(conversation_id)
    form = _checked(HeadForm(request.POST), "request")
    event = _get_event(conversation, form.cleaned_data["leaf"])
    if not event.is_tree_node:
        raise BadRequest(f"Event {event.event_id!r} is a {event.kind}, which is not on any branch.")
    with transaction.atomic():
        # An import of this conversation holds this lock: wait for it, then start from its result.
        conversation = Conversation.objects.select_for_update().get(pk=conversation.pk)
        conversation.head = event
        conversation.refresh_figures()
    messages.success(request, "This branch is now the conversation's default (HEAD).")
    return redirect(conversation.get_absolute_url())


@require_POST
@login_required
def share_create(request: HttpRequest, conversation_id: str) -> HttpResponse:
    conversation = _get_conversation(conversation_id)
    form = _checked(ShareForm(request.POST), "request")
    leaf_event = _get_event(conversation, form.cleaned_data["leaf"]) if form.cleaned_data["leaf"] else conversation.head
    if leaf_event is None or not leaf_event.is_tree_node:
        raise BadRequest("Pick a branch to share: this conversation has no HEAD.")
    leaf, focus = leaf_event.event_id, form.cleaned_data["focus"]
    if focus and focus not in {e.event_id for e in Event.objects.path_to(leaf_event)}:
        _get_event(conversation, focus)  # 404 for an event that does not exist at all
        raise BadRequest(f"Event {focus!r} is not on the shared branch; focus on one of its events.")
    share = ShareLink.objects.create(
        conversation=conversation,
        leaf_event_id=leaf,
        focus_event_id=focus,
        note=form.cleaned_data["note"],
        expires_at=form.expires_at(),
        created_by=request.user,
    )
    messages.success(request, f"Share link created: {request.build_absolute_uri(share.get_absolute_url())}")
    return redirect(Scope(conversation).url(leaf=leaf) + "#share")


@require_POST
@login_required
def share_revoke(request: HttpRequest, conversation_id: str, pk: int) -> HttpResponse:
    conversation = _get_conversation(conversation_id)
    share = get_object_or_404(ShareLink, pk=pk, conversation=conversation)
    if share.revoked_at is None:
        share.revoked_at = timezone.now()
        share.save(update_fields=["revoked_at"])
    messages.success(request, "Share link revoked: it no longer opens anything.")
    return redirect(conversation.get_absolute_url() + "#share")


def _shared(view):
    """Run a reviewer's view with its share link, or answer 404/410 revealing nothing."""

    def wrapper(request: HttpRequest, token: str, *args, **kwargs) -> HttpResponse:
        try:
            share = _get_share(token)
        except _Gone:
            return render(request, "share/gone.html", status=410)
        return view(request, Scope(share.conversation, share), *args, **kwargs)

    wrapper.__name__ = view.__name__
    wrapper.__doc__ = view.__doc__
    return wrapper


@require_GET
@vary_on_headers("HX-Request")
@_shared
def shared_conversation(request: HttpRequest, scope: Scope) -> HttpResponse:
    params = _valid(PathForm, request.GET)
    share = scope.share
    if not request.GET:
        params = {**params, "leaf": share.leaf_event_id, "at": share.focus_event_id}
    return _conversation_page(request, scope, params)


@require_GET
@_shared
def shared_event(request: HttpRequest, scope: Scope, event_id: str | None = None) -> HttpResponse:
    return _event_page(request, scope, _event_id(request, event_id))


@require_GET
@_shared
def shared_diagram(request: HttpRequest, scope: Scope) -> HttpResponse:
    return _diagram_response(scope, request)


@require_http_methods(["GET", "POST"])
def import_upload(request: HttpRequest) -> HttpResponse:
    if settings.EVENTVIEWER_REQUIRE_LOGIN and not request.user.is_authenticated:
        return redirect(f"{settings.LOGIN_URL}?next={request.path}")
    form = UploadForm(request.POST or None, request.FILES or None)
    problems: list[str] = []
    if request.method == "POST" and form.is_valid():
        with tempfile.TemporaryDirectory(prefix="eventviewer-upload-") as tmp:
            paths = []
            for number, upload in enumerate(form.cleaned_data["files"]):
                suffix = Path(upload.name).suffix.lower()
                target = Path(tmp) / f"upload-{number}{suffix}"
                with open(target, "wb") as out:
                    for chunk in upload.chunks():
                        out.write(chunk)
                paths.append((target, upload.name))
            try:
                results = import_paths(paths)
            except ImportFailed as e:
                problems = e.problems
            else:
                for result in results:
                    verb = "Imported" if result.created else "Updated"
                    messages.success(request, f"{verb} {result.conversation} ({result.added} new events).")
                if len(results) == 1:
                    return redirect(results[0].conversation.get_absolute_url())
                return redirect("eventviewer:conversation-list")
    status = 400 if request.method == "POST" else 200
    return render(request, "conversations/import.html", {"form": form, "problems": problems}, status=status)


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    return redirect(static("eventviewer/favicon.svg"), permanent=True)


ERROR_TITLES = {400: "Bad request", 403: "Forbidden", 404: "Not found"}
ERROR_MESSAGES = {
    400: "That request did not make sense.",
    403: "You are not allowed to do that.",
    404: "There is nothing at this address.",
}


def _error_page(request: HttpRequest, exception: Exception | None, status: int) -> HttpResponse:
    """Our own error page. The message is the exception's only when it is one of ours,
    written for the user (BadRequest, PermissionDenied, Http404 with a text); never the
    URL resolver's internals."""
    message = ERROR_MESSAGES[status]
    if exception is not None and not isinstance(exception, Resolver404) and exception.args:
        if isinstance(exception.args[0], str) and exception.args[0]:
            message = exception.args[0]
    context = {"status": status, "title": ERROR_TITLES[status], "message": message, **_back_link(request)}
    return render(request, "error.html", context, status=status)


def _back_link(request: HttpRequest) -> dict[str, str]:
    """Where an error page sends the reader: a reviewer back to the shared view they came
    from (they cannot open the list), everyone else to the conversations."""
    parts = request.path_info.split("/")
    if len(parts) > 3 and parts[1] == "s":
        share = ShareLink.objects.filter(token=parts[2]).first()
        if share is not None and share.is_active:
            return {"back_url": share.get_absolute_url(), "back_label": "Back to the shared conversation"}
        return {"back_url": "", "back_label": ""}
    return {"back_url": "/", "back_label": "Back to the conversations"}


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _error_page(request, exception, 400)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _error_page(request, exception, 403)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _error_page(request, exception, 404)


def server_error(request: HttpRequest) -> HttpResponse:
    # Nothing that could fail again: no context processors, no database.
    return HttpResponse(loader.get_template("500.html").render(), status=500)
