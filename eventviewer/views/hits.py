"""Search hits as pages show them: an event's snippet with its matches marked, and its
link on the branch it opens on (the conversation's search page, the list's rows)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from eventviewer import fulltext
from eventviewer.models import Event
from eventviewer.scope import PageScope
from eventviewer.trajectory.events import Light
from eventviewer.trajectory.query import Query, event_text, snippet


@dataclass
class Hit:
    event: Light
    leaf: str  # the leaf of the branch it opens on ("": not on any branch)
    snippet: list[tuple[str, bool]]  # pieces of text, each (text, is it a match)
    href: str

    @property
    def snippet_text(self) -> str:
        return "".join(piece for piece, _ in self.snippet)


def best_hit(scope: PageScope, query: Query) -> Hit | None:
    """The conversation's best match, for the list's row: its snippet and its link."""
    found = hits_of(scope, query, fulltext.hits(scope.conversation.pk, query, limit=1))
    return found[0] if found else None


def hits_of(scope: PageScope, query: Query, shown: list[int], leaf: str = "") -> list[Hit]:
    """The events ``shown`` (pks) as hits, each linked on ``leaf``'s branch, or else on the
    branch it opens on."""
    conversation = scope.conversation
    lights = {e.pk: e for e in Event.objects.filter(pk__in=shown).light_rows()}
    data = conversation.payloads(shown)
    leaves = conversation.search_leaves(shown)
    leaf_ids = dict(Event.objects.filter(pk__in=set(leaves.get(pk, 0) for pk in shown)).values_list("pk", "event_id"))
    hits = []
    for pk in shown:
        event = lights.get(pk)
        if event is None:  # deleted meanwhile
            continue
        on = leaf or leaf_ids.get(leaves.get(pk, 0), "")
        if on:
            href = scope.url(leaf=on, at=event.event_id, hl=query.text) + "#event-" + quote(event.event_id, safe="")
        else:
            href = scope.event_url(event.event_id)
        hits.append(Hit(event, on, snippet(event_text(data.get(pk, {})), query), href))
    return hits
