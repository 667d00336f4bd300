"""Share links: creating and revoking them, and the read-only pages a reviewer sees."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_not_required, login_required
from django.core.exceptions import BadRequest
from django.http import Http404, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from eventviewer.forms import PathForm, ShareForm
from eventviewer.lookups import checked, get_conversation, get_event, valid
from eventviewer.models import Event, ShareLink
from eventviewer.scope import PageScope, Scope, SharedScope, shares
from eventviewer.views import HtmxHttpRequest
from eventviewer.views.conversations import conversation_page, diagram_response
from eventviewer.views.events import event_id_of, event_page, raw_response


@require_POST
@login_required
def share_create(request: HtmxHttpRequest, conversation_id: str) -> HttpResponse:
    conversation = get_conversation(conversation_id)
    form = checked(ShareForm(request.POST), "request")
    leaf_event = get_event(conversation, form.cleaned_data["leaf"]) if form.cleaned_data["leaf"] else conversation.head
    if leaf_event is None or not leaf_event.is_tree_node:
        raise BadRequest("Pick a branch to share: this conversation has no HEAD.")
    leaf, focus = leaf_event.event_id, form.cleaned_data["focus"]
    if focus:
        focused = get_event(conversation, focus)  # 404 for an event that does not exist at all
        depth = focused.depth
        # Asked of the leaf's ancestor at that depth (by anchors), not of the whole branch.
        if depth is None or Event.objects.at_depths(leaf_event, [depth]).get(depth) != focused.pk:
            raise BadRequest(f"Event {focus!r} is not on the shared branch; focus on one of its events.")
    share = ShareLink.objects.create(
        conversation=conversation,
        leaf_event_id=leaf,
        focus_event_id=focus,
        note=form.cleaned_data["note"],
        expires_at=form.expires_at(),
        can_comment=form.cleaned_data["can_comment"],
        created_by=request.user if request.user.is_authenticated else None,  # always a user: login_required
    )
    # Back on the branch, scrolled to the new link with its copy button (and highlighted: :target).
    return redirect(PageScope(conversation).url(leaf=leaf) + f"#share-link-{share.pk}")


@require_http_methods(["GET", "POST"])
@login_required
def share_revoke(request: HtmxHttpRequest, conversation_id: str, pk: int) -> HttpResponse:
    """GET asks for confirmation (a page, so it works without JavaScript); POST revokes."""
    conversation = get_conversation(conversation_id)
    share = get_object_or_404(ShareLink, pk=pk, conversation=conversation)
    back = PageScope(conversation).url(leaf=share.leaf_event_id) + f"#share-link-{share.pk}"
    if request.method == "GET":
        context = {"conversation": conversation, "share": share, "back": back, "scope": PageScope(conversation)}
        return render(request, "share/revoke.html", context)
    if share.revoked_at is None:
        share.revoked_at = timezone.now()
        share.save(update_fields=["revoked_at"])
    messages.success(request, "Share link revoked: it no longer opens anything.")
    return redirect(PageScope(conversation).url(leaf=share.leaf_event_id) + "#share-ended")


def shared_view(view: Callable[..., HttpResponseBase]) -> Callable[..., HttpResponseBase]:
    """Run a reviewer's view with its share link's scope, or answer 404 (unknown token)
    or 410 (revoked or expired) revealing nothing. Reviewers need no account."""

    @login_not_required
    @wraps(view)
    def wrapper(
        request: HtmxHttpRequest, token: str, *args: Any, subagent: str | None = None, **kwargs: Any
    ) -> HttpResponseBase:
        share = ShareLink.objects.select_related("conversation").filter(token=token).first()
        if share is None or share.conversation.deleting:
            raise Http404("This share link does not exist.")
        if not share.is_active:
            return render(request, "share/gone.html", {"scope": Scope(None, reviewer=True)}, status=410)
        scope = Scope.shared(share)
        if subagent is not None:  # a sub-agent of the shared conversation: reachable, nothing else is
            child = get_conversation(subagent)
            if not shares(share, child):
                raise Http404(f"There is no conversation {child.conversation_id}.")
            scope = SharedScope(child, share, reviewer=True)
        return view(request, scope, *args, **kwargs)

    return wrapper


@require_safe
@vary_on_headers("HX-Request")
@shared_view
def shared_conversation(request: HtmxHttpRequest, scope: SharedScope) -> HttpResponse:
    params = valid(PathForm, request.GET)
    share = scope.share
    if not request.GET and scope.conversation.pk == share.conversation_id:
        params = {**params, "leaf": share.leaf_event_id, "at": share.focus_event_id}
    return conversation_page(request, scope, params)


@require_safe
@vary_on_headers("HX-Request")
@shared_view
def shared_event(request: HtmxHttpRequest, scope: SharedScope, event_id: str | None = None) -> HttpResponse:
    return event_page(request, scope, event_id_of(request, event_id))


@require_safe
@shared_view
def shared_event_raw(request: HtmxHttpRequest, scope: SharedScope, event_id: str | None = None) -> HttpResponse:
    return raw_response(scope, event_id_of(request, event_id))


@require_safe
@shared_view
def shared_diagram(request: HtmxHttpRequest, scope: SharedScope) -> HttpResponse:
    return diagram_response(request, scope)
