import csv
from collections.abc import Iterator
from typing import Any

import orjson
from django.core.management.base import BaseCommand, CommandError, CommandParser
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


class Command(BaseCommand):
    help = (
        "Write every comment, conversation label and verdict, one row each, with its conversation, "
        "event and instance id, to standard output (JSON lines or CSV)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--run", metavar="NAME", help="only this run's instances (its name or slug)")
        parser.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")

    def handle(self, *args: Any, run: str | None, format: str, **options: Any) -> None:
        where = Q()
        if run:
            found = Run.objects.filter(Q(name=run) | Q(slug=run)).first()
            if found is None:
                raise CommandError(f"--run {run}: there is no such run")
            where = Q(conversation__instance__run=found)
        rows = self._rows(where)
        if format == "csv":
            writer = csv.DictWriter(self.stdout, fieldnames=FIELDS, lineterminator="\n")
            writer.writeheader()
            for row in rows:
                writer.writerow({**row, "labels": ";".join(row["labels"])})
        else:
            for row in rows:
                self.stdout.write(orjson.dumps(row).decode())

    def _rows(self, where: Q) -> Iterator[dict[str, Any]]:
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
        for c in comments.order_by("conversation_id", "created_at", "id"):
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
        for cl in ConversationLabel.objects.filter(where).select_related("label", *related).order_by("conversation_id"):
            yield {
                **base("label", cl.conversation),
                "author": cl.author,
                "labels": [cl.label.name],
                "created_at": cl.created_at.isoformat(),
            }
        for v in Verdict.objects.filter(where).select_related(*related).order_by("conversation_id", "created_at"):
            yield {
                **base("verdict", v.conversation),
                "author": v.reviewer,
                "verdict": v.outcome,
                "text": v.note,
                "created_at": v.updated_at.isoformat(),
            }
