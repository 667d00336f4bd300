"""Reviews on the conversation page: the threads shown at their events, the Comments
panel, verdicts, and the forms that write them (htmx, with a plain form behind it)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import BadRequest, PermissionDenied
from django.db.models import Count, Exists, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils import timezone
from django.views.decorators.http import require_POST

from eventviewer.forms import ReviewFilters
from eventviewer.lookups import get_conversation
from eventviewer.models import Comment, ConversationLabel, Event, Label, Verdict
from eventviewer.scope import PageScope, Scope
from eventviewer.trajectory.reading import Reading
from eventviewer.trajectory.reviews import (
    AUTHOR_MAX_LENGTH,
    Note,
    Thread,
    on_branch,
    open_first,
    reviewer_name,
    threads,
)
from eventviewer.views import HtmxHttpRequest
from eventviewer.views.queue import walk_of
from eventviewer.views.reviews import Refused, _text, add_comment, set_verdict, shared_scope


@dataclass
class Shown:
    root: Comment
    replies: list[Comment]
    url: str  # its event on the branch it was written on (or the one shown)
    elsewhere: str = ""  # the leaf it was written on, when not the branch shown
    elsewhere_url: str = ""


@dataclass
class Review:
    can_comment: bool
    reviewer: bool  # a share link's reviewer: types a name
    post_url: str
    kept: str  # the query string a form's URL keeps (the page's view and queue)
    verdict_url: str
    labels_url: str
    labels: list[Label]
    on_conversation: list[ConversationLabel] = field(default_factory=list)
    at: dict[str, list[Shown]] = field(default_factory=dict)
    panel: list[Shown] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    open_count: int = 0
    total: int = 0
    blind: bool = False  # a blind review: the others' verdicts and labels hidden until one's own
    hidden: bool = False  # blind, and one's own verdict not given yet: they are hidden now
    me: int | None = None  # the user reading it
    outcomes: list[str] = field(default_factory=lambda: list(Verdict.Outcome.values))

    @property
    def agreement(self) -> str:
        outcomes = {v.outcome for v in self.verdicts}
        if len(self.verdicts) < 2:
            return ""
        return "all agree" if len(outcomes) == 1 else "reviewers disagree"


def may_comment(request: HtmxHttpRequest, scope: Scope) -> bool:
    if scope.share is not None:
        return scope.share.can_comment and scope.share.is_active
    return not scope.reviewer and request.user.is_authenticated


def review_of(
    request: HtmxHttpRequest, scope: PageScope, leaf: Event, reading: Reading, blind: bool = False
) -> Review | None:
    """What the page shows of its conversation's reviews; None for a read-only link.
    ``blind`` (a logged-in reviewer's): the others' verdicts and labels wait for one's own."""
    if scope.share is not None and not may_comment(request, scope):
        return None
    conversation = scope.conversation
    comments = {c.pk: c for c in conversation.comments.prefetch_related("labels")}
    found = threads(Note(c.pk, c.event_id, c.leaf_event_id, c.parent_id, c.resolved) for c in comments.values())
    verdicts = list(conversation.verdicts.all())
    on_conversation = list(conversation.conversation_labels.select_related("label"))
    blind = blind and scope.share is None and request.user.is_authenticated
    me = request.user.pk if blind else None
    hidden = blind and not any(v.user_id == me for v in verdicts)
    if hidden:
        verdicts = []  # none of them is one's own
        on_conversation = [cl for cl in on_conversation if cl.author == request.user.get_username()]
    review = Review(
        can_comment=may_comment(request, scope),
        reviewer=scope.share is not None,
        post_url=scope.base + "comments/",  # + a comment's pk/ to change it, then ``kept``
        kept=scope.query({}, keep=True),
        verdict_url=scope.action_url("verdict/"),
        labels_url=scope.action_url("labels/"),
        labels=list(Label.objects.all()),
        on_conversation=on_conversation,
        verdicts=verdicts,
        total=len(found),
        open_count=sum(t.open for t in found),
        blind=blind,
        hidden=hidden,
        me=me,
    )

    def shown(thread: Thread, elsewhere: str | None) -> Shown:
        root = comments[thread.root.id]
        written_on = root.leaf_event_id or leaf.event_id
        return Shown(
            root=root,
            replies=[comments[r.id] for r in thread.replies],
            url=scope.at_url(written_on, root.event_id),
            elsewhere=elsewhere or "",
            elsewhere_url=scope.url(leaf=elsewhere) if elsewhere else "",
        )

    for event_id, placed in on_branch(found, reading.position, leaf.event_id).items():
        review.at[event_id] = [shown(p.thread, p.elsewhere) for p in placed]
    review.panel = [shown(t, None) for t in open_first(found)]
    return review


def _author(request: HtmxHttpRequest, scope: Scope) -> tuple[str, int | None]:
    if scope.share is not None:
        typed = request.POST.get("author", "").strip()
        if not typed:
            raise Refused(400, "author: type your name to comment")
        if len(typed) > AUTHOR_MAX_LENGTH:
            raise Refused(400, f"author: over the limit of {AUTHOR_MAX_LENGTH} characters")
        return reviewer_name(typed, scope.share.note), None
    if not request.user.is_authenticated:
        raise PermissionDenied("Log in to comment.")
    return request.user.get_username(), request.user.pk


def _refusals(run: Callable[[], HttpResponse]) -> HttpResponse:
    try:
        return run()
    except Refused as e:
        if e.status == 400:
            raise BadRequest(str(e)) from None
        return HttpResponse(str(e), status=e.status, content_type="text/plain; charset=utf-8")


def _back(scope: Scope, leaf: str, event_id: str) -> HttpResponse:
    return redirect(scope.at_url(leaf, event_id) if event_id else scope.url(leaf=leaf), permanent=False)


def _write_comment(request: HtmxHttpRequest, scope: PageScope) -> HttpResponse:
    conversation = scope.conversation
    author, user_id = _author(request, scope)
    parent = request.POST.get("parent", "")
    data = {
        "event_id": request.POST.get("event_id", ""),
        "leaf": request.POST.get("leaf", ""),
        "body": request.POST.get("body", ""),
        "labels": request.POST.getlist("labels"),
        "parent": int(parent) if parent.isdigit() else None,
    }
    comment = add_comment(conversation, data, author, user_id, scope.share)
    return _back(scope, request.POST.get("leaf", "") or comment.leaf_event_id, comment.event_id)


def _change_comment(request: HtmxHttpRequest, scope: PageScope, pk: int) -> HttpResponse:
    conversation = scope.conversation
    comment = get_object_or_404(Comment, pk=pk, conversation=conversation)
    action = request.POST.get("action", "")
    author, user_id = _author(request, scope)
    own = (
        comment.share_id == scope.share.pk and comment.author == author
        if scope.share is not None
        else comment.user_id == user_id
    )
    if action in ("resolve", "reopen"):
        comment.resolved = action == "resolve"
        comment.save(update_fields=["resolved"])
    elif action in ("edit", "delete"):
        if not own:
            raise PermissionDenied("Only its author can edit or delete a comment.")
        if action == "delete":
            comment.delete()
        else:
            comment.body = _text(request.POST.dict(), "body", 20_000, required=True)
            comment.updated_at = timezone.now()
            comment.save(update_fields=["body", "updated_at"])
    else:
        raise Refused(400, "action: must be resolve, reopen, edit or delete")
    return _back(scope, request.POST.get("leaf", "") or comment.leaf_event_id, comment.event_id)


def _write_verdict(request: HtmxHttpRequest, scope: PageScope) -> HttpResponse:
    conversation = scope.conversation
    author, user_id = _author(request, scope)
    set_verdict(
        conversation,
        {"verdict": request.POST.get("verdict"), "note": request.POST.get("note", "")},
        author,
        user_id,
        scope.share,
    )
    return redirect(scope.url(leaf=request.POST.get("leaf", "")) + "#verdicts")


def _write_label(request: HtmxHttpRequest, scope: PageScope) -> HttpResponse:
    """A label on the whole conversation, added or taken off."""
    conversation = scope.conversation
    author, _ = _author(request, scope)
    name = request.POST.get("label", "")
    label = Label.objects.filter(name=name).first()
    if label is None:
        raise Refused(400, f"label: there is no label {name!r}")
    if request.POST.get("action") == "remove":
        ConversationLabel.objects.filter(conversation=conversation, label=label).delete()
    else:
        ConversationLabel.objects.get_or_create(conversation=conversation, label=label, defaults={"author": author})
    return redirect(scope.url(leaf=request.POST.get("leaf", "")) + "#verdicts")


def _owner(request: HtmxHttpRequest, conversation_id: str) -> PageScope:
    if not request.user.is_authenticated:
        raise PermissionDenied("Log in to comment.")
    # A form of a page walked in a review queue posts to a URL that keeps it, as its answer does.
    return PageScope(get_conversation(conversation_id)).keeping(walk_of(request.GET).keep)


@require_POST
def comment_create(request: HtmxHttpRequest, conversation_id: str) -> HttpResponse:
    return _refusals(lambda: _write_comment(request, _owner(request, conversation_id)))


@require_POST
def comment_change(request: HtmxHttpRequest, conversation_id: str, pk: int) -> HttpResponse:
    return _refusals(lambda: _change_comment(request, _owner(request, conversation_id), pk))


@require_POST
def verdict_give(request: HtmxHttpRequest, conversation_id: str) -> HttpResponse:
    return _refusals(lambda: _write_verdict(request, _owner(request, conversation_id)))


@require_POST
def conversation_label(request: HtmxHttpRequest, conversation_id: str) -> HttpResponse:
    return _refusals(lambda: _write_label(request, _owner(request, conversation_id)))


@require_POST
@login_not_required
def shared_conversation_label(request: HtmxHttpRequest, token: str, subagent: str | None = None) -> HttpResponse:
    return _refusals(lambda: _write_label(request, shared_scope(token, subagent, commenting=True)))


@require_POST
@login_not_required
def shared_comment_create(request: HtmxHttpRequest, token: str, subagent: str | None = None) -> HttpResponse:
    return _refusals(lambda: _write_comment(request, shared_scope(token, subagent, commenting=True)))


@require_POST
@login_not_required
def shared_comment_change(request: HtmxHttpRequest, token: str, pk: int, subagent: str | None = None) -> HttpResponse:
    return _refusals(lambda: _change_comment(request, shared_scope(token, subagent, commenting=True), pk))


@require_POST
@login_not_required
def shared_verdict_give(request: HtmxHttpRequest, token: str, subagent: str | None = None) -> HttpResponse:
    return _refusals(lambda: _write_verdict(request, shared_scope(token, subagent, commenting=True)))


def _counted(rows: QuerySet[Any], by: str = "conversation") -> Coalesce:
    counted = rows.order_by().values(by).annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def with_review_counts(conversations: QuerySet[Any]) -> QuerySet[Any]:
    """The review columns: open and all threads, labels (on comments or the conversation)
    and verdicts, one subquery each so that no join multiplies the rows. ``conversations``
    are conversations or a run's instances (an instance's pk is its conversation's)."""
    threads = Comment.objects.filter(conversation=OuterRef("pk"), parent__isnull=True)
    labelled = Comment.labels.through.objects.filter(comment__conversation=OuterRef("pk"))
    counted: QuerySet[Any] = conversations.annotate(
        comment_open=_counted(threads.filter(resolved=False)),
        comment_total=_counted(threads),
        label_count=_counted(labelled, "comment__conversation")
        + _counted(ConversationLabel.objects.filter(conversation=OuterRef("pk"))),
        verdict_count=_counted(Verdict.objects.filter(conversation=OuterRef("pk"))),
    )
    return counted


def filtered_by_reviews(conversations: QuerySet[Any], params: dict[str, Any]) -> QuerySet[Any]:
    """The ?label=, ?verdict= and ?comments= filters (ReviewFilters), of conversations or
    of instances, as with_review_counts."""
    mine = OuterRef("pk")
    if name := params.get("label"):
        on_comment = Comment.objects.filter(conversation=mine, labels__name=name)
        on_conversation = ConversationLabel.objects.filter(conversation=mine, label__name=name)
        conversations = conversations.filter(Q(Exists(on_comment)) | Q(Exists(on_conversation)))
    if verdict := params.get("verdict"):
        given = Verdict.objects.filter(conversation=mine)
        conversations = conversations.filter(
            ~Exists(given) if verdict == "none" else Exists(given.filter(outcome=verdict))
        )
    if comments := params.get("comments"):
        threads = Comment.objects.filter(conversation=mine, parent__isnull=True)
        found = {"open": Exists(threads.filter(resolved=False)), "any": Exists(threads), "none": ~Exists(threads)}
        conversations = conversations.filter(found[comments])
    return conversations


REVIEW_COLUMNS = ("comments", "labels", "verdicts")


def reviewing(params: dict[str, Any], sort: str) -> bool:
    """Whether a table shows its review columns: once a team reviews, or when its query
    asks for them (empty columns would take the title's room)."""
    return (
        any(params.get(k) for k in ReviewFilters.REVIEW_FILTERS)
        or sort in REVIEW_COLUMNS
        or Comment.objects.exists()
        or ConversationLabel.objects.exists()
        or Verdict.objects.exists()
    )


def review_marks(pks: Collection[int]) -> dict[int, tuple[list[str], list[str]]]:
    """Conversation pk -> its labels (on it or its comments) and its verdicts, sorted:
    read for a page's rows at once, three queries whatever their number."""
    labels: dict[int, set[str]] = {}
    for conversation_id, name in Comment.labels.through.objects.filter(comment__conversation__in=pks).values_list(
        "comment__conversation_id", "label__name"
    ):
        labels.setdefault(conversation_id, set()).add(name)
    for conversation_id, name in ConversationLabel.objects.filter(conversation__in=pks).values_list(
        "conversation_id", "label__name"
    ):
        labels.setdefault(conversation_id, set()).add(name)
    verdicts: dict[int, list[str]] = {}
    for conversation_id, outcome in Verdict.objects.filter(conversation__in=pks).values_list(
        "conversation_id", "outcome"
    ):
        verdicts.setdefault(conversation_id, []).append(outcome)
    return {pk: (sorted(labels.get(pk, ())), sorted(verdicts.get(pk, []))) for pk in pks}


def review_cells(conversations: list[Any]) -> None:  # rows of the list: Conversations, annotated here
    """Each listed conversation's labels and verdicts, read for the page's rows at once."""
    marks = review_marks([c.pk for c in conversations])
    for c in conversations:
        c.review_labels, c.review_verdicts = marks[c.pk]
