"""Search inside a conversation (its page, a share link's and the JSON API's): the
events whose text matches, best first, grouped by the branch each opens on, each
with its snippet and a link to the event on that branch with the words marked."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import BadRequest
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from eventviewer import fulltext
from eventviewer.forms import SearchForm
from eventviewer.lookups import checked, get_conversation, get_leaf, get_page, refused_page
from eventviewer.models import Conversation, Event
from eventviewer.scope import PageScope, SharedScope
from eventviewer.trajectory import kinds
from eventviewer.trajectory.query import Query
from eventviewer.views import HtmxHttpRequest
from eventviewer.views.hits import Hit, hits_of
from eventviewer.views.share import shared_view

PER_PAGE = 50


@dataclass
class Group:
    leaf: str
    label: str
    head: bool
    hits: list[Hit] = field(default_factory=list)


@dataclass
class Results:
    query: Query
    total: int
    more: bool  # over fulltext.MAX_HITS matches: ``total`` counts the first ones
    page: int
    pages: int
    hits: list[Hit]

    def groups(self, conversation: Conversation) -> list[Group]:
        """The page's hits by branch: HEAD's first, then in the order of their best hit."""
        labels = {node["id"]: node.get("label", "") for node in conversation.skeleton.get("nodes", [])}
        head = conversation.skeleton.get("head")
        found: dict[str, Group] = {}
        for hit in sorted(self.hits, key=lambda h: h.leaf != head):
            if hit.leaf not in found:
                found[hit.leaf] = Group(hit.leaf, labels.get(hit.leaf, ""), hit.leaf == head)
            found[hit.leaf].hits.append(hit)
        return list(found.values())


NO_FILTERS = {"q": "", "kind": "", "tool": "", "problems": False, "leaf": "", "branch": "", "page": None, "view": ""}


def run_search(scope: PageScope, params: dict[str, Any]) -> Results:
    conversation = scope.conversation
    query = fulltext.parsed(params["q"])
    with fulltext.budget():
        pks = fulltext.hits(conversation.pk, query, params["kind"], params["tool"], params["problems"])
    if params["branch"] == "this":
        leaf = get_leaf(conversation, params["leaf"])
        on_branch = {e.pk for e in Event.objects.path_to(leaf)} if leaf else set()
        pks = [pk for pk in pks if pk in on_branch]
    more = len(pks) > fulltext.MAX_HITS
    pks = pks[: fulltext.MAX_HITS]
    page = get_page(pks, PER_PAGE, params["page"], "the results fill {pages}.")
    hits = hits_of(scope, query, list(page.object_list), params["leaf"] if params["branch"] == "this" else "")
    return Results(query, len(pks), more, page.number, page.paginator.num_pages, hits)


def search_page(request: HtmxHttpRequest, scope: PageScope) -> HttpResponse:
    """The search page; a search it refuses (a bad query or filter) is said on it, next to
    the box holding what was typed, with status 400."""
    conversation = scope.conversation
    form = SearchForm(request.GET)
    refused = ""
    try:
        params = checked(form).cleaned_data
    except BadRequest as error:
        refused = str(error)
        # What was typed stays in the box; the filters that were valid stay set.
        params = {**NO_FILTERS, **form.cleaned_data, "q": request.GET.get("q", "")}
    scope = scope.viewing(params["view"])
    context = {"conversation": conversation, "scope": scope, "params": params, "kinds": sorted(kinds.KINDS)}
    if params["q"].strip() and not refused:
        try:
            results = run_search(scope, params)
        except BadRequest as error:  # the words themselves (fulltext.parsed)
            refused = str(error)
    if params["q"].strip() and not refused:
        keep = {k: params[k] for k in ("q", "kind", "tool", "leaf", "branch")}
        keep["problems"] = "1" if params["problems"] else ""
        context.update(
            results=results,
            groups=results.groups(conversation),
            previous_url=scope.page_url("search/", **keep, page=str(results.page - 1)) if results.page > 1 else None,
            next_url=scope.page_url("search/", **keep, page=str(results.page + 1))
            if results.page < results.pages
            else None,
        )
    context["refused"] = refused
    response = render(request, "conversations/search.html", context, status=400 if refused else 200)
    return refused_page(request, response, refused) if refused else response


@require_safe
def conversation_search(request: HtmxHttpRequest, conversation_id: str) -> HttpResponse:
    return search_page(request, PageScope(get_conversation(conversation_id)))


@require_safe
@shared_view
def shared_search(request: HtmxHttpRequest, scope: SharedScope) -> HttpResponse:
    return search_page(request, scope)
