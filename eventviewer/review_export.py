"""Every comment, conversation label and verdict as a row with its conversation, event and
instance id: what ``manage.py export_reviews`` writes and a run page downloads, as JSON
lines or CSV, one line at a time (the rows are read a chunk at a time as they are written)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from typing import Any

import orjson
from django.db.models import Q

from eventviewer.models import Comment, Conversation, ConversationLabel, Run, Verdict

FIELDS = [
    "type",
    "conversation_id",
    "run",
    "instance_id",
    "event_id",
    "leaf",
    "author",
    "labels",
    "verdict",
    "resolved",
    "text",
    "comment_id",
    "parent_id",
    "created_at",
]
FORMATS = ("jsonl", "csv")
CHUNK = 500  # rows read from the database at a time


def review_rows(run: Run | None = None) -> Iterator[dict[str, Any]]:
    """The rows, of ``run``'s instances only if given: comments (and replies) by
    conversation in the order written, then labels on conversations, then verdicts."""
    where = Q(conversation__deleting=False)
    if run is not None:
        where &= Q(conversation__instance__run=run)

    def base(kind: str, conversation: Conversation) -> dict[str, Any]:
        instance = getattr(conversation, "instance", None)
        return {
            **dict.fromkeys(FIELDS, ""),
            "type": kind,
            "conversation_id": conversation.conversation_id,
            "run": instance.run.name if instance else "",
            "instance_id": instance.instance_id if instance else "",
            "labels": [],
            "resolved": "",
        }

    related = ("conversation__instance__run",)
    comments = Comment.objects.filter(where).select_related(*related).prefetch_related("labels")
    for c in comments.order_by("conversation_id", "created_at", "id").iterator(chunk_size=CHUNK):
        yield {
            **base("reply" if c.parent_id else "comment", c.conversation),
            "event_id": c.event_id,
            "leaf": c.leaf_event_id,
            "author": c.author,
            "labels": sorted(label.name for label in c.labels.all()),
            "resolved": c.resolved,
            "text": c.body,
            "comment_id": c.pk,
            "parent_id": c.parent_id or "",
            "created_at": c.created_at.isoformat(),
        }
    labels = ConversationLabel.objects.filter(where).select_related("label", *related).order_by("conversation_id")
    for cl in labels.iterator(chunk_size=CHUNK):
        yield {
            **base("label", cl.conversation),
            "author": cl.author,
            "labels": [cl.label.name],
            "created_at": cl.created_at.isoformat(),
        }
    verdicts = Verdict.objects.filter(where).select_related(*related).order_by("conversation_id", "created_at")
    for v in verdicts.iterator(chunk_size=CHUNK):
        yield {
            **base("verdict", v.conversation),
            "author": v.reviewer,
            "verdict": v.outcome,
            "text": v.note,
            "created_at": v.updated_at.isoformat(),
        }


class _Line:
    """A file for csv.writer that hands back each line written."""

    def write(self, line: str) -> str:
        return line


def review_lines(rows: Iterator[dict[str, Any]], format: str) -> Iterator[str]:
    """The rows as JSON lines, or as CSV with a header (labels joined by ``;``)."""
    if format == "csv":
        writer = csv.DictWriter(_Line(), fieldnames=FIELDS, lineterminator="\n")
        yield writer.writeheader()
        for row in rows:
            yield writer.writerow({**row, "labels": ";".join(row["labels"])})
    else:
        for row in rows:
            yield orjson.dumps(row).decode() + "\n"
