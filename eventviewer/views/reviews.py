"""Reviews over JSON: a conversation's comments and verdicts, for its owners
(``/api/conversations/<id>/comments/``) and for a share link that may comment
(``/s/<token>/api/comments/``). POSTs are CSRF-checked like every other form."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from functools import wraps
from typing import Any

import orjson
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import BadRequest
from django.db import transaction
from django.http import Http404, HttpResponse
from django.utils import timezone

from eventviewer.lookups import get_conversation
from eventviewer.models import COMMENT_MAX_LENGTH, Comment, Conversation, Event, Label, ShareLink, Verdict
from eventviewer.scope import Scope, SharedScope, shares
from eventviewer.trajectory.reviews import AUTHOR_MAX_LENGTH, Note, reviewer_name, threads
from eventviewer.views import HtmxHttpRequest

COMMENTS_PER_MINUTE = 30  # per share link and per user
REQUEST_MAX_BYTES = 4 * COMMENT_MAX_LENGTH + 64 * 1024  # the longest body in UTF-8, and the rest


class Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _json(body: dict[str, Any], status: int = 200) -> HttpResponse:
    return HttpResponse(orjson.dumps(body), status=status, content_type="application/json")


def _answers_json(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """GET or POST; every refusal (a lookup's 400 or 404 too) is JSON naming its reason."""

    @wraps(view)
    def wrapper(request: HtmxHttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method not in ("GET", "HEAD", "POST"):
            response = _json({"error": f"{request.method} is not allowed here; use GET or POST"}, status=405)
            response["Allow"] = "GET, HEAD, POST"
            return response
        try:
            return view(request, *args, **kwargs)
        except Refused as e:
            return _json({"error": str(e)}, status=e.status)
        except BadRequest as e:
            return _json({"error": str(e)}, status=400)
        except Http404 as e:
            return _json({"error": str(e)}, status=404)

    return wrapper


def comment_json(comment: Comment, replies: list[Comment]) -> dict[str, Any]:
    return {
        "id": comment.pk,
        "event_id": comment.event_id,
        "leaf": comment.leaf_event_id,
        "body": comment.body,
        "author": comment.author,
        "labels": [label.name for label in comment.labels.all()],
        "resolved": comment.resolved,
        "created_at": comment.created_at.isoformat(),
        "updated_at": comment.updated_at.isoformat(),
        "replies": [comment_json(r, []) for r in replies],
    }


def reviews_json(conversation: Conversation) -> dict[str, Any]:
    comments = {c.pk: c for c in conversation.comments.prefetch_related("labels")}
    notes = [Note(c.pk, c.event_id, c.leaf_event_id, c.parent_id, c.resolved) for c in comments.values()]
    return {
        "comments": [comment_json(comments[t.root.id], [comments[r.id] for r in t.replies]) for t in threads(notes)],
        "verdicts": [verdict_json(v) for v in conversation.verdicts.all()],
        "labels": [cl.label.name for cl in conversation.conversation_labels.select_related("label")],
    }


def _text(data: dict[str, Any], name: str, limit: int, required: bool = False) -> str:
    value = data.get(name, "")
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise Refused(400, f"{name}: must be a string")
    if len(value) > limit:
        raise Refused(400, f"{name}: {len(value):,} characters, over the limit of {limit:,}")
    if required and not value.strip():
        raise Refused(400, f"{name}: required")
    return value


def _labels(data: dict[str, Any]) -> list[Label]:
    names = data.get("labels", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise Refused(400, "labels: must be a list of label names")
    found = {label.name: label for label in Label.objects.filter(name__in=names)}
    unknown = [n for n in names if n not in found]
    if unknown:
        raise Refused(400, f"labels: there is no label {unknown[0]!r}")
    return list(found.values())


def _check_rate(user_id: int | None, share: ShareLink | None) -> None:
    since = timezone.now() - timedelta(minutes=1)
    recent = Comment.objects.filter(created_at__gte=since)
    # Without a share link the commenter is logged in: user_id is never None there.
    recent = recent.filter(share=share) if share is not None else recent.filter(user_id=user_id)  # type: ignore[misc]
    if recent.count() >= COMMENTS_PER_MINUTE:
        who = "share link" if share is not None else "user"
        raise Refused(429, f"Too many comments: at most {COMMENTS_PER_MINUTE} a minute per {who}; wait a minute.")


def add_comment(
    conversation: Conversation, data: dict[str, Any], author: str, user_id: int | None, share: ShareLink | None
) -> Comment:
    """A new comment from ``data`` (event_id, leaf, body, labels, parent), or Refused
    naming the field that is wrong."""
    event_id = _text(data, "event_id", 255)
    leaf_id = _text(data, "leaf", 255)
    body = _text(data, "body", COMMENT_MAX_LENGTH)
    labels = _labels(data)
    parent_id = data.get("parent")
    parent = None
    if parent_id is not None:
        if not isinstance(parent_id, int) or isinstance(parent_id, bool):
            raise Refused(400, "parent: must be a comment id (an integer)")
        parent = conversation.comments.filter(pk=parent_id).first()
        if parent is None:
            raise Refused(400, f"parent: this conversation has no comment {parent_id}")
        event_id, leaf_id = parent.event_id, leaf_id or parent.leaf_event_id
    if not event_id:
        raise Refused(400, "event_id: required")
    if not body.strip() and not labels:
        raise Refused(400, "body: required (or give labels)")
    event = conversation.events.light().filter(event_id=event_id).first()
    if event is None:
        raise Refused(400, f"event_id: this conversation has no event {event_id!r}")
    if leaf_id:
        leaf = conversation.events.light().filter(event_id=leaf_id).first()
        if leaf is None or not leaf.is_tree_node:
            raise Refused(400, f"leaf: {leaf_id!r} is not a branch of this conversation")
        if event.depth is not None and Event.objects.at_depths(leaf, [event.depth]).get(event.depth) != event.pk:
            raise Refused(400, f"leaf: event {event_id!r} is not on the branch ending at {leaf_id!r}")
    _check_rate(user_id, share)
    now = timezone.now()  # one moment for both: a later updated_at says "edited"
    with transaction.atomic():
        comment = Comment.objects.create(
            created_at=now,
            updated_at=now,
            conversation=conversation,
            event_id=event_id,
            leaf_event_id=leaf_id,
            parent=parent,
            body=body,
            author=author,
            user_id=user_id,
            share=share,
        )
        comment.labels.set(labels)
    return comment


def _posted(request: HtmxHttpRequest) -> dict[str, Any]:
    if len(request.body) > REQUEST_MAX_BYTES:
        raise Refused(413, f"The request is over {REQUEST_MAX_BYTES:,} bytes.")
    try:
        data = orjson.loads(request.body)
    except orjson.JSONDecodeError as e:
        raise Refused(400, f"The body is not JSON: {e}") from None
    if not isinstance(data, dict):
        raise Refused(400, "The body must be a JSON object")
    return data


def _comments(
    request: HtmxHttpRequest, conversation: Conversation, author: str, user_id: int | None, share: ShareLink | None
) -> HttpResponse:
    if request.method == "POST":
        comment = add_comment(conversation, _posted(request), author, user_id, share)
        return _json(comment_json(comment, []), status=201)
    return _json(reviews_json(conversation))


@_answers_json
def conversation_comments(request: HtmxHttpRequest, conversation_id: str) -> HttpResponse:
    conversation = get_conversation(conversation_id)
    if request.method == "POST" and not request.user.is_authenticated:
        raise Refused(403, "Log in to comment.")
    return _comments(request, conversation, request.user.get_username(), request.user.pk, None)


def shared_scope(token: str, subagent: str | None, commenting: bool) -> SharedScope:
    """The scope a share link gives a reviewer who comments, or Refused: unknown (404),
    read-only (403), revoked or expired (410); another conversation is a 404."""
    share = ShareLink.objects.select_related("conversation").filter(token=token).first()
    if share is None or share.conversation.deleting:
        raise Http404("This share link does not exist.")
    if not share.is_active:
        raise Refused(410, "This share link was revoked or has expired: it can no longer comment.")
    if commenting and not share.can_comment:
        raise Refused(403, "This share link is read-only: its reviewer may not comment.")
    if subagent is None:
        return Scope.shared(share)
    child = get_conversation(subagent)
    if not shares(share, child):
        raise Http404(f"There is no conversation {child.conversation_id}.")
    return SharedScope(child, share, reviewer=True)


@login_not_required
@_answers_json
def shared_comments(request: HtmxHttpRequest, token: str, subagent: str | None = None) -> HttpResponse:
    scope = shared_scope(token, subagent, commenting=True)
    author = ""
    if request.method == "POST":
        data = _posted(request)
        author = reviewer_name(_text(data, "author", AUTHOR_MAX_LENGTH, required=True).strip(), scope.share.note)
        comment = add_comment(scope.conversation, data, author, None, scope.share)
        return _json(comment_json(comment, []), status=201)
    return _comments(request, scope.conversation, author, None, scope.share)


def set_verdict(
    conversation: Conversation, data: dict[str, Any], reviewer: str, user_id: int | None, share: ShareLink | None
) -> Verdict:
    """The reviewer's verdict on the conversation, given or replaced."""
    outcome = data.get("verdict")
    if outcome not in Verdict.Outcome.values:
        raise Refused(400, f"verdict: must be one of {', '.join(Verdict.Outcome.values)}")
    note = _text(data, "note", COMMENT_MAX_LENGTH)
    verdict, _ = Verdict.objects.update_or_create(
        conversation=conversation,
        reviewer=reviewer,
        defaults={"outcome": outcome, "note": note, "user_id": user_id, "share": share, "updated_at": timezone.now()},
    )
    return verdict


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    return {
        "reviewer": verdict.reviewer,
        "verdict": verdict.outcome,
        "note": verdict.note,
        "updated_at": verdict.updated_at.isoformat(),
    }


@_answers_json
def conversation_verdict(request: HtmxHttpRequest, conversation_id: str) -> HttpResponse:
    conversation = get_conversation(conversation_id)
    if request.method != "POST":
        raise Refused(405, "POST a verdict here; GET comments/ lists them")
    if not request.user.is_authenticated:
        raise Refused(403, "Log in to give a verdict.")
    return _json(
        verdict_json(set_verdict(conversation, _posted(request), request.user.get_username(), request.user.pk, None))
    )


@login_not_required
@_answers_json
def shared_verdict(request: HtmxHttpRequest, token: str, subagent: str | None = None) -> HttpResponse:
    scope = shared_scope(token, subagent, commenting=True)
    if request.method != "POST":
        raise Refused(405, "POST a verdict here; GET comments/ lists them")
    data = _posted(request)
    reviewer = reviewer_name(_text(data, "author", AUTHOR_MAX_LENGTH, required=True).strip(), scope.share.note)
    return _json(verdict_json(set_verdict(scope.conversation, data, reviewer, None, scope.share)))
