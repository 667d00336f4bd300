"""The conversation list, a conversation's branch page, its diagram, and moving HEAD."""

from __future__ import annotations

from contextlib import nullcontext
from datetime import datetime, time, timedelta

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.exceptions import BadRequest
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import F, Prefetch, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from eventviewer import search, tasks
from eventviewer.forms import ConversationListForm, EventForm, HeadForm, PathForm, RawForm, ShareForm
from eventviewer.lookups import checked, get_conversation, get_event, get_leaf, refused_page, valid
from eventviewer.models import Comment, Conversation, ConversationLabel, Event, Label, Run, Verdict, read_whole
from eventviewer.scope import Scope
from eventviewer.trajectory import diagram, masking
from eventviewer.trajectory.failures import Summary, failures
from eventviewer.trajectory.reading import Reading
from eventviewer.trajectory.timeline import Axis, timeline_axis, timeline_svg
from eventviewer.trajectory.window import NotOnBranch, Span, problems_near, window
from eventviewer.views import deep
from eventviewer.views import turns as branch_turns
from eventviewer.views.branches import branch_list
from eventviewer.views.columns import sortable
from eventviewer.views.comments import filtered_by_reviews, review_cells, review_of, with_review_counts
from eventviewer.views.hits import best_hit
from eventviewer.views.problems import Reasons, problem_lines
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
REVIEW_COLUMNS = ("comments", "labels", "verdicts")
SHARE_LINKS_LISTED = 50
SVG_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def cached_diagram(scope: Scope, leaf: Event | None, reading: Reading | None = None) -> SafeString:
    """The branch diagram with ``leaf``'s branch selected. Events never change, so a
    diagram stays valid until the next import or HEAD change (``updated_at``), or comment."""
    conversation = scope.conversation
    version = f"{conversation.updated_at.timestamp()}:{conversation.comment_version}"
    key = f"diagram:{conversation.pk}:{version}:{leaf.pk if leaf else 0}:{scope.base}{scope.query({}, keep=True)}"
    svg = cache.get(key)
    if svg is None:
        if reading is None and leaf is not None and read_whole(leaf):
            reading = conversation.read_path(leaf)  # (a longer branch is drawn unselected: see views.deep)
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


def _span(conversation: Conversation, reading: Reading, turns: list, params: dict) -> Span:
    """The turns to show. An event beside the branch (a side event: a hook) is shown after
    the event it ran beside, so the window around it is that event's."""
    anchors = {k: params[k] for k in ("at", "before", "after")}
    try:
        return window(turns, settings.EVENTVIEWER_PAGE_SIZE, **anchors)
    except NotOnBranch as e:
        parent = conversation.events.filter(event_id=e.args[0]).values_list("parent__event_id", flat=True).first()
        on_branch = parent is not None and any(parent in t.event_ids for t in turns)
        if not on_branch or not params["at"]:
            raise Http404(f"Event {e.args[0]!r} is not on this branch.") from None
        return window(turns, settings.EVENTVIEWER_PAGE_SIZE, at=parent)


def conversation_page(request: HttpRequest, scope: Scope, params: dict, walk: Walk | None = None) -> HttpResponse:
    """A branch of the conversation, for its owner's pages and for a share link; ``walk``:
    how the owner walks it (a review queue, blind)."""
    walk = walk or Walk()
    conversation = scope.conversation
    leaf = get_leaf(conversation, params["leaf"])
    if leaf is not None and not read_whole(leaf):
        return _long_branch_page(request, scope, params, leaf, walk)
    reading = conversation.read_path(leaf) if leaf else None
    view = params.get("view") or branch_turns.FULL
    scope = scope.viewing(branch_turns.view_param(view))
    context = {
        "conversation": conversation,
        "scope": scope,
        "leaf": leaf,
        "reading": reading,
        "is_head": leaf is not None and leaf.pk == conversation.head_id,
        "can_share": not scope.read_only and request.user.is_authenticated,
        "view": view,
    }
    if request.htmx and request.htmx.target == "branch-list" and not request.htmx.history_restore_request:
        context.update(branch_list(request, scope, reading))  # filtered, sorted or paged in place
        return render(request, "conversations/detail.html#branch-list", context)
    if reading:
        # What a page derives from the whole branch is kept with its reading (see branch_memo).
        def remembered(name: str, compute):
            return conversation.branch_memo(leaf.pk, f"{name}:{view}", compute)

        turns = remembered("turns", lambda: branch_turns.display_turns(reading, view))
        side = remembered("side", lambda: conversation.side_failures(list(reading.path)))
        ended = remembered("ended", lambda: conversation.run_end_errors(reading.path[-1]))
        found = remembered("found", lambda: failures(reading, side, ended))
        summary = remembered("failures", lambda: branch_turns.failure_summary(conversation, found, turns))
        if walk.query is not None and not any(params[k] for k in ("leaf", "at", "before", "after")):
            params = _at_first_failure(conversation, reading, turns, params, summary[0])
        span = _span(conversation, reading, turns, params)
        reasons = Reasons.of_branch(scope, leaf, reading)
        context["window"] = span
        context["rows"] = branch_turns.build_rows(conversation, reading, turns, span, leaf, reasons, found)
        context["at"] = params["at"]
        context["branch_usage"] = remembered("usage", lambda: conversation.usage_of(reading.path))
        context["failures"], context["first_failure"] = summary
        context["drift"] = conversation.workspace_drift(reading.path)
        context["review"] = review_of(request, scope, leaf, reading, blind=walk.blind)

        def strip() -> tuple[str, Axis | None]:
            def link(eid: str) -> str:
                return scope.url(leaf=leaf.event_id, at=eid) + f"#event-{eid}"

            marks = branch_turns.timeline_marks(reading, turns)
            return timeline_svg(marks, link), timeline_axis(marks)

        svg, context["timeline_axis"] = remembered(f"timeline:{scope.base}{scope.query({}, keep=True)}", strip)
        context["timeline"] = mark_safe(svg)  # built from escaped text only (trajectory.timeline)
        if request.htmx and (params["before"] or params["after"]) and not request.htmx.history_restore_request:
            partial = "earlier" if params["before"] else "later"
            return render(request, f"conversations/detail.html#{partial}", context)
        near = problems_near(reading, span, found=found, only=params.get("problem") or "")
        context["problems"] = problem_lines(conversation, near, reading, reasons, side, ended)
        context["problem_filter"] = params.get("problem") or ""
        context["problem_total"] = len(found.kinds)
    context["diagram"] = cached_diagram(scope, leaf, reading)
    context["legend"] = diagram.LEGEND
    context.update(branch_list(request, scope, reading))
    if context["can_share"]:
        context.update(_share_panel(conversation, leaf, params["at"]))
    context["queue"] = queue_bar(request, walk, conversation) if not scope.read_only else None
    # A queue's next and previous links load the whole page (hx-boost): another conversation
    # (app.js then focuses its first failure: the swap does not scroll, show:none).
    if request.htmx and not request.htmx.history_restore_request and not request.htmx.boosted:
        return render(request, "conversations/detail.html#workspace", context)
    return render(request, "conversations/detail.html", context)


def _at_first_failure(
    conversation: Conversation, reading: Reading, turns: list, params: dict, summary: Summary
) -> dict:
    """A queue opens a conversation at its branch's first failure (when that is on the
    turns shown: not below the branch, nor hidden by the model's view)."""
    if summary.first is None or summary.first_below:
        return params
    moved = {**params, "at": summary.first}
    try:
        _span(conversation, reading, turns, moved)
    except Http404:
        return params
    return moved


def _share_panel(conversation: Conversation, leaf: Event | None, at: str) -> dict:
    """The share panel's form and its links: those that still open, and apart from them
    the revoked and expired ones."""
    links = list(conversation.share_links.all()[:SHARE_LINKS_LISTED])
    return {
        "share_links": links,
        "active_links": [s for s in links if s.is_active],
        "ended_links": [s for s in links if not s.is_active],
        "share_form": ShareForm(initial={"leaf": leaf.event_id if leaf else "", "focus": at}),
    }


def _long_branch_page(request: HttpRequest, scope: Scope, params: dict, leaf: Event, walk: Walk) -> HttpResponse:
    """A branch too long to read whole: a window read from a stretch of it (views.deep)."""
    conversation = scope.conversation
    context = {
        "conversation": conversation,
        "scope": scope,
        "leaf": leaf,
        "is_head": leaf.pk == conversation.head_id,
        "can_share": not scope.read_only and request.user.is_authenticated,
    }
    partial = request.htmx and not request.htmx.history_restore_request
    if partial and request.htmx.target == "branch-list":
        context.update(deep.branch_list(request, scope, leaf))
        return render(request, "conversations/detail.html#branch-list", context)
    context.update(deep.page_context(request, scope, leaf, params))
    if partial and (params["before"] or params["after"]):
        return render(request, f"conversations/detail.html#{'earlier' if params['before'] else 'later'}", context)
    context["diagram"] = cached_diagram(scope, leaf)
    context["legend"] = diagram.LEGEND
    context.update(deep.branch_list(request, scope, leaf))
    if context["can_share"]:
        context.update(_share_panel(conversation, leaf, params["at"]))
    context["queue"] = queue_bar(request, walk, conversation) if not scope.read_only else None
    if partial and not request.htmx.boosted:
        return render(request, "conversations/detail.html#workspace", context)
    return render(request, "conversations/detail.html", context)


def _listed(params: dict):
    """The conversations the list's query and filters select."""
    q = params["q"].strip()
    # Sub-agents are listed under their parent; a search finds them too.
    conversations = Conversation.objects.shown().with_listed()
    if not q:
        conversations = conversations.filter(parent__isnull=True)
    if params["run"]:
        conversations = conversations.filter(instance__run__slug__in=params["run"])
    if q:
        conversations = conversations.alias(text_matches=search.conversation_matches(search.parsed(q)))
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


def listed_in_order(form: ConversationListForm):
    """The list's conversations in its order (a refused search raises BadRequest)."""
    found = _listed(form.cleaned_data).annotate(tokens=F("prompt_tokens") + F("completion_tokens"))
    if form.sorted_by()[0] in REVIEW_COLUMNS:
        found = with_review_counts(found)
    return found.order_by(*form.ordering())


def _choices(column: str) -> list[str]:
    """The values a filter can take: those the listed conversations have."""
    found = Conversation.objects.shown().with_listed().exclude(**{column: ""})
    found = found.order_by(column).values_list(column, flat=True)
    return list(found.distinct()[:200])


TYPING = "X-Eventviewer-Typing"  # app.js: the list's request made while its search box is typed into


@require_safe
@vary_on_headers("HX-Request", TYPING)
def conversation_list(request: HttpRequest) -> HttpResponse:
    form = checked(ConversationListForm(request.GET))
    params = form.cleaned_data
    picked = runs_named(params["run"])
    refused = ""
    try:
        conversations = _listed(params)
    except BadRequest as error:  # the search's words (search.parsed): said next to the box, 400
        if request.headers.get(TYPING):
            return HttpResponse(status=204)  # half typed: the rows stay as they are
        refused, conversations = str(error), Conversation.objects.none()
    conversations = conversations.annotate(tokens=F("prompt_tokens") + F("completion_tokens")).prefetch_related(
        Prefetch("subagents", queryset=Conversation.objects.only("conversation_id", "title", "parent_id"))
    )
    conversations = with_review_counts(conversations)
    conversations = conversations.select_related("instance__run").order_by(*form.ordering()).defer("skeleton")
    q = "" if refused else params["q"].strip()
    with search.budget() if q else nullcontext():
        page = Paginator(conversations, settings.EVENTVIEWER_LIST_PAGE_SIZE).get_page(params["page"] or 1)
        page.object_list = list(page.object_list)  # searched now, within the budget
        review_cells(page.object_list)
        if q:
            # A row found by the words of an event shows that event's snippet, linked to it.
            query = search.parsed(q)
            for c in page.object_list:
                c.hit = best_hit(Scope(c), query)
    sort, direction = form.sorted_by()
    reviewed = ("label", "verdict", "comments")
    # The review columns once a team reviews (or asks for them): empty columns take the title's room.
    reviewing = (
        any(params[k] for k in reviewed)
        or sort in REVIEW_COLUMNS
        or Comment.objects.exists()
        or ConversationLabel.objects.exists()
        or Verdict.objects.exists()
    )
    shown = [c for c in LIST_COLUMNS if reviewing or c[0] not in REVIEW_COLUMNS]
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
        "reviewing": reviewing,
        "params": params,
        "filtered": filtered,
        "statuses": _choices("listed_status"),
        "models": _choices("model"),
        "agents": _choices("agent_kind"),
        "labels": Label.objects.values_list("name", flat=True),
        "verdict_choices": ConversationListForm.base_fields["verdict"].choices,
        "comment_choices": ConversationListForm.base_fields["comments"].choices,
        "sort": sort,
        "dir": direction,
        "columns": columns,
        "total": Conversation.objects.shown().filter(parent__isnull=True).count(),
        "refused": refused,
    }
    status = 400 if refused else 200
    partial = request.htmx and not request.htmx.history_restore_request
    response = render(request, "conversations/list.html" + ("#table" if partial else ""), context, status=status)
    return refused_page(request, response, refused) if refused else response


@require_safe
@vary_on_headers("HX-Request", "HX-Boosted")
def conversation(request: HttpRequest, conversation_id: str) -> HttpResponse:
    found = get_conversation(conversation_id)
    if conversation_id != found.conversation_id:
        query = request.GET.urlencode()
        return redirect(found.get_absolute_url() + (f"?{query}" if query else ""))
    walk = walk_of(request.GET)
    return conversation_page(request, Scope(found).keeping(walk.keep), valid(PathForm, request.GET), walk)


def diagram_response(request: HttpRequest, scope: Scope) -> HttpResponse:
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
def diagram_svg(request: HttpRequest, conversation_id: str) -> HttpResponse:
    return diagram_response(request, Scope(get_conversation(conversation_id)))


@require_POST
@login_required
def set_head(request: HttpRequest, conversation_id: str) -> HttpResponse:
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
def base_state(request: HttpRequest, conversation_id: str) -> HttpResponse:
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
def delete(request: HttpRequest, conversation_id: str) -> HttpResponse:
    """Ask first (GET); then hide the conversation at once and delete it in the
    background (POST): a big one takes a while, a batch of events at a time."""
    conversation = get_conversation(conversation_id)
    if request.method != "POST":
        subagents = conversation.subagent_conversations()
        return render(request, "conversations/delete.html", {"conversation": conversation, "subagents": subagents})
    tasks.delete_in_background(Conversation.objects.filter(pk=conversation.pk))
    messages.success(request, f"Deleting {conversation} ({conversation.event_count:,} events) in the background.")
    return redirect("eventviewer:conversation-list")
