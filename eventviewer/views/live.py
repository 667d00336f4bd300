"""Following a conversation while it is written: its page asks every few seconds what
changed (templates/conversations/_live.html). When nothing did, the answer is one small
query and a 204; otherwise the turns to draw again and the new ones, and the diagram, for
the page to merge without moving its reader (static/eventviewer/app.js, which also redraws
the page's counts from a fresh copy of the page). Comments count as a change too: the
answer then carries the branch's comment threads, for the cards."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from eventviewer.forms import LiveForm
from eventviewer.lookups import get_conversation, get_leaf, valid
from eventviewer.models import Conversation
from eventviewer.scope import PageScope, SharedScope
from eventviewer.trajectory.failures import failures
from eventviewer.trajectory.growth import growth
from eventviewer.trajectory.window import Span
from eventviewer.views import HtmxHttpRequest, turns
from eventviewer.views.comments import review_of
from eventviewer.views.conversations import cached_diagram
from eventviewer.views.problems import Reasons
from eventviewer.views.queue import Walk, walk_of
from eventviewer.views.share import shared_view

# All the "nothing new" answer reads.
VERSION_FIELDS = ("id", "conversation_id", "updated_at", "live_until")


def live_response(
    request: HtmxHttpRequest, scope: PageScope, params: dict[str, Any], walk: Walk | None = None
) -> HttpResponse:
    walk = walk or Walk()
    conversation = scope.conversation
    scope = scope.viewing(params["view"]).keeping(walk.keep)
    context: dict[str, Any] = {"conversation": conversation, "scope": scope}
    leaf = get_leaf(conversation, params["leaf"])
    shown = params["shown"]
    if leaf is None:
        return render(request, "conversations/_live.html#live", context)
    if not shown:
        # The page had no branch to show (an empty HEAD): now it has one, and no reader to move.
        response = render(request, "conversations/_live.html#live", context)
        response["HX-Refresh"] = "true"
        return response
    reading = conversation.read_path(leaf)
    context.update(leaf=leaf, reading=reading)
    grown = growth(reading, shown, params["turn"] if params["turn"] is not None else len(reading.turns))
    if grown is None:
        # Following HEAD, which moved to another branch: the page keeps its own.
        context["live_head_moved"] = True
        shown_event = conversation.events.light().filter(event_id=shown, depth__isnull=False).first()
        context["live_diagram"] = cached_diagram(scope, shown_event or leaf)
        return render(request, "conversations/_live.html#live", context)
    context["live_diagram"] = cached_diagram(scope, leaf, reading)
    # The comment threads of the branch, for the page to put on its cards (comments by others).
    context["review"] = review_of(request, scope, leaf, reading, blind=walk.blind)
    if context["review"] is not None:
        context["live_comments"] = [{"event": {"event_id": event_id}} for event_id in context["review"].at]
    total = len(reading.turns)
    if params["turn"] is not None and grown.new_events:
        if total - grown.start <= settings.EVENTVIEWER_PAGE_SIZE:
            span = Span(grown.start, total, total)
            found = failures(reading, conversation.side_failures(list(reading.path)))
            context["live_rows"] = turns.build_rows(
                conversation, reading, reading.turns, span, leaf, Reasons.of_branch(scope, leaf, reading), found
            )
            context["live_growth"] = grown
        else:
            context["live_too_many"] = grown.new_events
    return render(request, "conversations/_live.html#live", context)


@require_safe
def conversation_live(request: HtmxHttpRequest, conversation_id: str) -> HttpResponse:
    params = valid(LiveForm, request.GET)
    found = get_conversation(conversation_id, Conversation.objects.only(*VERSION_FIELDS).with_comment_figures())
    if params["v"] == found.live_version:
        return HttpResponse(status=204)
    conversation = Conversation.objects.get(pk=found.pk)
    return live_response(request, PageScope(conversation), params, walk_of(request.GET))


@require_safe
@shared_view
def shared_live(request: HtmxHttpRequest, scope: SharedScope) -> HttpResponse:
    params = valid(LiveForm, request.GET)
    if params["v"] == scope.conversation.live_version:
        return HttpResponse(status=204)
    return live_response(request, scope, {**params, "leaf": params["leaf"] or scope.share.leaf_event_id})
