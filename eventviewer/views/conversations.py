"""The conversation list, a conversation's branch page, its diagram, and moving HEAD."""

from __future__ import annotations

from contextlib import nullcontext
from datetime import datetime, time, timedelta
from typing import Any, TypeVar, cast

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.exceptions import BadRequest
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import F, Prefetch, Q, QuerySet
from django.forms import ChoiceField
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from eventviewer import fulltext, tasks
from eventviewer.forms import ConversationListForm, EventForm, HeadForm, PathForm, RawForm, ShareForm
from eventviewer.lookups import checked, get_conversation, get_event, get_leaf, refused_page, valid
from eventviewer.models import Conversation, Event, Label, Run, read_whole
from eventviewer.scope import PageScope
from eventviewer.trajectory import diagram, masking
from eventviewer.trajectory.reading import Reading
from eventviewer.views import HtmxHttpRequest, is_partial, stretch
from eventviewer.views import turns as branch_turns
from eventviewer.views.columns import sortable
from eventviewer.views.comments import (
    REVIEW_COLUMNS,
    filtered_by_reviews,
    review_cells,
    reviewing,
    with_review_counts,
)
from eventviewer.views.hits import best_hit
from eventviewer.views.queue import Walk, queue_bar, walk_of

LIST_COLUMNS = [
    ("title", "Title"),
    ("run", "Run"),
    ("status", "Status"),
    ("events", "Events"),
    ("branches", "Branches"),
    ("pending", "Pending"),
    ("mismatched", "Mismatched"),
    ("failures", "Failures"),
    ("comments", "Comments"),
    ("labels", "Labels"),
    ("verdicts", "Verdicts"),
    ("tokens", "Tokens"),
    ("cost", "Cost"),
    ("duration", "Duration"),
    ("started", "Started"),
    ("imported", "Imported"),
]
T = TypeVar("T")
SHARE_LINKS_LISTED = 50
SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def cached_diagram(scope: PageScope, leaf: Event | None, reading: Reading | None = None) -> SafeString:
    """The branch diagram with ``leaf``'s branch selected. Events never change, so a
    diagram stays valid until the next import or HEAD change (``updated_at``), or comment."""
    conversation = scope.conversation
    version = f"{conversation.updated_at.timestamp()}:{conversation.comment_version}"
    key = f"diagram:{conversation.pk}:{version}:{leaf.pk if leaf else 0}:{scope.base}{scope.query({}, keep=True)}"
    svg: str | None = cache.get(key)
    if svg is None:
        if reading is None and leaf is not None and read_whole(leaf):
            reading = conversation.read_path(leaf)  # (a longer branch is drawn unselected: see views.stretch)
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
            event_link=(lambda event_id: scope.at_url(leaf.event_id, event_id)) if leaf else None,
            htmx_target="#workspace",
            comments=conversation.comment_counts(),
        )
        cache.set(key, svg, settings.EVENTVIEWER_DIAGRAM_CACHE_SECONDS)
    # diagram_svg builds every label from escaped text and sanitizes the SVG dot
    # returns against an allowlist of elements and attributes.
    return mark_safe(svg)


def conversation_page(
    request: HtmxHttpRequest, scope: PageScope, params: dict[str, Any], walk: Walk | None = None
) -> HttpResponse:
    """A branch of the conversation, for its owner's pages and for a share link: what it
    shows of the branch is read by ``views.stretch``; ``walk``: how the owner walks it (a
    review queue, blind)."""
    walk = walk or Walk()
    conversation = scope.conversation
    leaf = get_leaf(conversation, params["leaf"])
    # A branch read a stretch at a time has no model's view to switch to.
    view = (params.get("view") or branch_turns.FULL) if leaf is None or read_whole(leaf) else branch_turns.FULL
    scope = scope.viewing(branch_turns.view_param(view))
    context = {
        "conversation": conversation,
        "scope": scope,
        "leaf": leaf,
        "reading": None,
        "is_head": leaf is not None and leaf.pk == conversation.head_id,
        "can_share": not scope.read_only and request.user.is_authenticated,
        "view": view,
    }
    partial = is_partial(request)
    if partial and request.htmx.target == "branch-list":
        context.update(stretch.branch_list(request, scope, leaf))  # filtered, sorted or paged in place
        return render(request, "conversations/detail.html#branch-list", context)
    if leaf is not None:
        context.update(_branch_part(request, scope, leaf, params, view, walk))
        if partial and (params["before"] or params["after"]):
            return render(request, f"conversations/detail.html#{'earlier' if params['before'] else 'later'}", context)
    reading = context["reading"]
    assert reading is None or isinstance(reading, Reading)
    context["diagram"] = cached_diagram(scope, leaf, reading if reading and reading.whole else None)
    context["legend"] = diagram.LEGEND
    context.update(stretch.branch_list(request, scope, leaf))
    if context["can_share"]:
        context.update(_share_panel(conversation, leaf, params["at"]))
    context["queue"] = queue_bar(request, walk, conversation) if not scope.read_only else None
    # A queue's next and previous links load the whole page (hx-boost): another conversation
    # (app.js then focuses its first failure: the swap does not scroll, show:none).
    if partial and not request.htmx.boosted:
        return render(request, "conversations/detail.html#workspace", context)
    return render(request, "conversations/detail.html", context)


def _branch_part(
    request: HtmxHttpRequest, scope: PageScope, leaf: Event, params: dict[str, Any], view: str, walk: Walk
) -> dict[str, Any]:
    """The page's branch part. A review queue opens a conversation at its branch's first
    failure (when that is on the turns shown: not below the branch, nor hidden by the
    model's view), unless the URL names a place."""
    if walk.query is not None and not any(params[k] for k in ("leaf", "at", "before", "after")):
        first = stretch.first_failure(scope.conversation, leaf, view)
        if first:
            try:
                return stretch.page_context(request, scope, leaf, {**params, "at": first}, view, walk.blind)
            except Http404:
                pass
    return stretch.page_context(request, scope, leaf, params, view, walk.blind)


def _share_panel(conversation: Conversation, leaf: Event | None, at: str) -> dict[str, Any]:
    """The share panel's form and its links: those that still open, and apart from them
    the revoked and expired ones."""
    links = list(conversation.share_links.all()[:SHARE_LINKS_LISTED])
    return {
        "share_links": links,
        "active_links": [s for s in links if s.is_active],
        "ended_links": [s for s in links if not s.is_active],
        "share_form": ShareForm(initial={"leaf": leaf.event_id if leaf else "", "focus": at}),
    }


def _listed(params: dict[str, Any]) -> QuerySet[Conversation]:
    """The conversations the list's query and filters select."""
    q = params["q"].strip()
    # Sub-agents are listed under their parent; a search finds them too.
    conversations = Conversation.objects.shown().with_listed()
    if not q:
        conversations = conversations.filter(parent__isnull=True)
    if params["run"]:
        conversations = conversations.filter(instance__run__slug__in=params["run"])
    if q:
        conversations = conversations.alias(text_matches=fulltext.conversation_matches(fulltext.parsed(q)))
        match = Q(title__icontains=q) | Q(text_matches=True)
        as_id = q.lower().replace("-", "")
        if as_id and all(c in "0123456789abcdef" for c in as_id):
            match |= Q(conversation_id__startswith=as_id)
        conversations = conversations.filter(match)
    for name, column in (
        ("status", "listed_status"),
        ("model", "model"),
        ("agent", "agent_kind"),
        ("outcome", "instance__outcome"),
    ):
        if params[name]:
            conversations = conversations.filter(**{column: params[name]})
    if params["problems"]:
        conversations = conversations.filter(Q(pending_count__gt=0) | Q(mismatch_count__gt=0))
    if params["failures"]:
        conversations = conversations.filter(failure_count__gt=0)
    zone = timezone.get_current_timezone()
    if params["imported_from"]:
        start = datetime.combine(params["imported_from"], time.min, zone)
        conversations = conversations.filter(imported_at__gte=start)
    if params["imported_to"]:
        end = datetime.combine(params["imported_to"] + timedelta(days=1), time.min, zone)
        conversations = conversations.filter(imported_at__lt=end)
    return filtered_by_reviews(conversations, params)


def runs_named(slugs: list[str]) -> list[Run]:
    """The runs of the list's ``run`` filter, in the order given, or a 404 naming one that is not."""
    found = {r.slug: r for r in Run.objects.filter(slug__in=slugs)}
    for slug in slugs:
        if slug not in found:
            raise Http404(f"There is no run {slug!r}.")
    return [found[slug] for slug in slugs]


def listed_in_order(form: ConversationListForm) -> QuerySet[Conversation]:
    """The list's conversations in its order (a refused search raises BadRequest)."""
    found = _listed(form.cleaned_data).annotate(tokens=F("prompt_tokens") + F("completion_tokens"))
    if form.sorted_by()[0] in REVIEW_COLUMNS:
        found = with_review_counts(found)
    return found.order_by(*form.ordering())


def _choices(column: str) -> list[str]:
    """The values a filter can take: those the listed conversations have."""
    found = Conversation.objects.shown().with_listed().exclude(**{column: ""})
    values = found.order_by(column).values_list(column, flat=True)
    return list(values.distinct()[:200])


TYPING = "X-Eventviewer-Typing"  # app.js: the list's request made while its search box is typed into


@require_safe
@vary_on_headers("HX-Request", TYPING)
def conversation_list(request: HtmxHttpRequest) -> HttpResponse:
    form = checked(ConversationListForm(request.GET))
    params = form.cleaned_data
    picked = runs_named(params["run"])
    refused = ""
    try:
        conversations = _listed(params)
    except BadRequest as error:  # the search's words (fulltext.parsed): said next to the box, 400
        if request.headers.get(TYPING):
            return HttpResponse(status=204)  # half typed: the rows stay as they are
        refused, conversations = str(error), Conversation.objects.none()
    conversations = conversations.annotate(tokens=F("prompt_tokens") + F("completion_tokens")).prefetch_related(
        Prefetch("subagents", queryset=Conversation.objects.only("conversation_id", "title", "parent_id"))
    )
    conversations = with_review_counts(conversations)
    conversations = conversations.select_related("instance__run").order_by(*form.ordering()).defer("skeleton")
    q = "" if refused else params["q"].strip()
    with fulltext.budget() if q else nullcontext():
        page = Paginator(conversations, settings.EVENTVIEWER_LIST_PAGE_SIZE).get_page(params["page"] or 1)
        page.object_list = list(page.object_list)  # searched now, within the budget
        review_cells(page.object_list)
        if q:
            # A row found by the words of an event shows that event's snippet, linked to it.
            query = fulltext.parsed(q)
            for c in page.object_list:
                c.hit = best_hit(PageScope(c), query)  # type: ignore[attr-defined]  # for its row
    sort, direction = form.sorted_by()
    reviewed = ConversationListForm.REVIEW_FILTERS
    review_columns = reviewing(params, sort)
    shown = [c for c in LIST_COLUMNS if review_columns or c[0] not in REVIEW_COLUMNS]
    columns = sortable(
        shown, sort, direction, ascending=form.ASCENDING, text=("title", "run", "status", "started", "imported")
    )
    filtered = any(
        params[k] for k in ("q", "run", "status", "model", "agent", "outcome", "problems", "failures", *reviewed)
    ) or any(params[k] for k in ("imported_from", "imported_to"))
    context = {
        "page": page,
        "q": params["q"].strip(),
        "runs": picked,
        "reviewing": review_columns,
        "params": params,
        "filtered": filtered,
        "statuses": _choices("listed_status"),
        "models": _choices("model"),
        "agents": _choices("agent_kind"),
        "labels": Label.objects.values_list("name", flat=True),
        "verdict_choices": cast(ChoiceField, ConversationListForm.base_fields["verdict"]).choices,
        "comment_choices": cast(ChoiceField, ConversationListForm.base_fields["comments"]).choices,
        "sort": sort,
        "dir": direction,
        "columns": columns,
        "total": Conversation.objects.shown().filter(parent__isnull=True).count(),
        "refused": refused,
    }
    status = 400 if refused else 200
    partial = is_partial(request)
    response = render(request, "conversations/list.html" + ("#table" if partial else ""), context, status=status)
    return refused_page(request, response, refused) if refused else response


@require_safe
@vary_on_headers("HX-Request", "HX-Boosted")
def conversation(request: HtmxHttpRequest, conversation_id: str) -> HttpResponse:
    found = get_conversation(conversation_id)
    if conversation_id != found.conversation_id:
        query = request.GET.urlencode()
        return redirect(found.get_absolute_url() + (f"?{query}" if query else ""))
    walk = walk_of(request.GET)
    return conversation_page(request, PageScope(found).keeping(walk.keep), valid(PathForm, request.GET), walk)


def diagram_response(request: HtmxHttpRequest, scope: PageScope) -> HttpResponse:
    """The diagram alone, as a standalone SVG document."""
    params = valid(EventForm, request.GET)
    scope = scope.viewing(params["view"])
    conversation = scope.conversation
    leaf = get_leaf(conversation, params["leaf"])
    svg = '<?xml version="1.0" encoding="UTF-8"?>\n' + str(cached_diagram(scope, leaf))
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    response["Content-Security-Policy"] = SVG_CSP
    response["Content-Disposition"] = f'inline; filename="{conversation.conversation_id}.svg"'
    return response


@require_safe
def diagram_svg(request: HtmxHttpRequest, conversation_id: str) -> HttpResponse:
    return diagram_response(request, PageScope(get_conversation(conversation_id)))


@require_POST
@login_required
def set_head(request: HtmxHttpRequest, conversation_id: str) -> HttpResponse:
    conversation = get_conversation(conversation_id)
    form = checked(HeadForm(request.POST), "request")
    event = get_event(conversation, form.cleaned_data["leaf"])
    if not event.is_tree_node:
        raise BadRequest(f"Event {event.event_id!r} is a {event.kind}, which is not on any branch.")
    with transaction.atomic():
        # An import of this conversation holds this lock: wait for it, then start from its result.
        conversation = Conversation.objects.select_for_update().get(pk=conversation.pk)
        conversation.head = event
        conversation.refresh_figures()
    messages.success(request, "This branch is now the conversation's default (HEAD).")
    return redirect(conversation.get_absolute_url())


@require_safe
def base_state(request: HtmxHttpRequest, conversation_id: str) -> HttpResponse:
    """base_state.json as a download, its secrets masked unless the owner asks ``?raw=1``
    for the file as imported (a share link has no such download)."""
    conversation = get_conversation(conversation_id)
    raw = valid(RawForm, request.GET)["raw"]
    state = conversation.base_state_file()
    if state is None:
        raise Http404("This conversation was imported without a base_state.json.")
    response = HttpResponse(state if raw else masking.masked_json(state), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{conversation.conversation_id}-base_state.json"'
    return response


@require_http_methods(["GET", "HEAD", "POST"])
@login_required
def delete(request: HtmxHttpRequest, conversation_id: str) -> HttpResponse:
    """Ask first (GET); then hide the conversation at once and delete it in the
    background (POST): a big one takes a while, a batch of events at a time."""
    conversation = get_conversation(conversation_id)
    if request.method != "POST":
        subagents = conversation.subagent_conversations()
        return render(request, "conversations/delete.html", {"conversation": conversation, "subagents": subagents})
    tasks.delete_in_background(Conversation.objects.filter(pk=conversation.pk))
    messages.success(request, f"Deleting {conversation} ({conversation.event_count:,} events) in the background.")
    return redirect("eventviewer:conversation-list")
