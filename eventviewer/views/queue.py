"""Review queues: a filtered list's conversations opened one at a time, each at its first
failure, with next and previous links (trajectory.queue has the rules).

The queue is the URL: a branch page walked in one carries ``?queue=<the list's query
string>`` (and ``reviewed=1``, ``blind=1``); ``/review/?<the list's query>`` opens its
first conversation. The list's query is checked by the list's own form and selects what
the list shows, so a queue reaches no conversation the list would not."""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass
from urllib.parse import urlencode

from django.core.exceptions import BadRequest
from django.db.models import Exists, OuterRef
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_safe

from eventviewer import fulltext
from eventviewer.forms import ConversationListForm, QueueForm
from eventviewer.lookups import checked, valid
from eventviewer.models import Conversation, Verdict
from eventviewer.trajectory import queue as rules

OWN = ("queue", "reviewed", "blind")  # the queue's own parameters; the rest is the list's


@dataclass(frozen=True)
class Walk:
    """How a branch page is walked, from its URL: in a queue (``query``, the list's query
    string; None: in none), with the reviewed ones too or not, blind or not. In the URL the
    query keeps its ``?`` (``queue=?`` is the whole list's queue)."""

    query: str | None = None
    reviewed: bool = False
    blind: bool = False

    @property
    def keep(self) -> tuple[tuple[str, str], ...]:
        """The parameters every link of the page keeps (``Scope.keep``)."""
        found = (
            ("queue", "" if self.query is None else f"?{self.query}"),
            ("reviewed", "1" if self.reviewed else ""),
            ("blind", "1" if self.blind else ""),
        )
        return tuple((k, v) for k, v in found if v)

    def form(self) -> ConversationListForm:
        """The list's form over the queue's query, or a 400 naming what is wrong in it."""
        data = QueryDict(self.query or "", mutable=True)
        data.pop("page", None)  # a queue walks the whole list, not one of its pages
        return checked(ConversationListForm(data), "queue")

    def link(self, conversation_id: str, **changes: bool) -> str:
        """A conversation of the queue, opened at its first failure (no ``leaf``: see
        ``views.conversations.conversation_page``)."""
        walk = Walk(self.query, changes.get("reviewed", self.reviewed), changes.get("blind", self.blind))
        url = reverse("eventviewer:conversation", args=[conversation_id])
        return url + "?" + urlencode(walk.keep)

    @property
    def list_url(self) -> str:
        return reverse("eventviewer:conversation-list") + (f"?{self.query}" if self.query else "")


def walk_of(data: QueryDict) -> Walk:
    params = valid(QueueForm, data)
    query = params["queue"].removeprefix("?") if params["queue"] else None
    return Walk(query, params["reviewed"], params["blind"])


def queue_rows(walk: Walk, user_id: int | None) -> list[rules.QueueRow]:
    """The queue's conversations in the list's order: one query, on ids only."""
    from eventviewer.views.conversations import listed_in_order, runs_named  # (which imports this module)

    form = walk.form()
    params = form.cleaned_data
    runs_named(params["run"])
    verdicts = Verdict.objects.filter(user_id=user_id) if user_id is not None else Verdict.objects.none()
    mine = verdicts.filter(conversation=OuterRef("pk"))
    q = params["q"].strip()
    try:
        with fulltext.budget() if q else nullcontext():
            found = listed_in_order(form).annotate(mine=Exists(mine)).values_list("conversation_id", "mine")
            return [rules.QueueRow(cid, reviewed) for cid, reviewed in found]
    except BadRequest as error:  # the search's words (fulltext.parsed)
        raise BadRequest(f"Bad queue: q: {error}") from None


@dataclass(frozen=True)
class Bar:
    """The queue's line in the branch bar."""

    place: rules.Place
    walk: Walk
    next_url: str
    previous_url: str
    toggle_url: str  # the same conversation with the reviewed ones walked too, or not


def queue_bar(request: HttpRequest, walk: Walk, conversation: Conversation) -> Bar | None:
    if walk.query is None or not request.user.is_authenticated:
        return None
    rows = queue_rows(walk, request.user.pk)
    place = rules.place(rows, conversation.conversation_id, walk.reviewed)
    return Bar(
        place,
        walk,
        next_url=walk.link(place.next) if place.next else "",
        previous_url=walk.link(place.previous) if place.previous else "",
        toggle_url=walk.link(conversation.conversation_id, reviewed=not walk.reviewed),
    )


@require_safe
def review_queue(request: HttpRequest) -> HttpResponse:
    """``/review/?<the list's query>``: the queue's first conversation still to review
    (any first, with ``reviewed=1``)."""
    own = valid(QueueForm, {k: request.GET[k] for k in ("reviewed", "blind") if k in request.GET})
    data = QueryDict(mutable=True)  # the list's query, without its empty fields (a submitted form's)
    for k, values in request.GET.lists():
        if k not in (*OWN, "page") and any(values):
            data.setlist(k, [v for v in values if v])
    walk = Walk(data.urlencode(), own["reviewed"], own["blind"])
    rows = queue_rows(walk, request.user.pk)
    first = rules.first(rows, walk.reviewed)
    if first is not None:
        return redirect(walk.link(first))
    again = data.copy()
    again.update({"reviewed": "1", **({"blind": "1"} if walk.blind else {})})
    context = {"walk": walk, "total": len(rows), "again": f"{request.path}?{again.urlencode()}"}
    return render(request, "reviews/queue_done.html", context)
