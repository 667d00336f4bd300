"""``reviews.json``: a conversation's comments, labels and verdicts in its zip, written by
the export and read back by the import, so a zip moved between servers keeps its reviews.
Comments are matched by ``uid`` and verdicts by reviewer: importing again adds nothing."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import orjson

from eventviewer.models import COMMENT_MAX_LENGTH, Comment, Conversation, ConversationLabel, Label, Verdict

NAME = "reviews.json"
VERSION = 1
MAX_BYTES = 64 * 1024 * 1024  # a reviews.json read at import, at most


def has_reviews(conversation: Conversation) -> bool:
    return conversation.comments.exists() or conversation.verdicts.exists() or conversation.conversation_labels.exists()


def reviews_file(conversation: Conversation) -> bytes:
    comments = list(conversation.comments.select_related("parent").prefetch_related("labels"))
    labels = {label.name: label for c in comments for label in c.labels.all()}
    on_conversation = list(conversation.conversation_labels.select_related("label"))
    labels.update({cl.label.name: cl.label for cl in on_conversation})
    body = {
        "version": VERSION,
        "conversation_id": conversation.conversation_id,
        "labels": [
            {"name": n, "colour": label.colour, "description": label.description} for n, label in sorted(labels.items())
        ],
        "conversation_labels": [cl.label.name for cl in on_conversation],
        "comments": [
            {
                "uid": str(c.uid),
                "event_id": c.event_id,
                "leaf": c.leaf_event_id,
                "parent": str(c.parent.uid) if c.parent else None,
                "body": c.body,
                "author": c.author,
                "labels": sorted(label.name for label in c.labels.all()),
                "resolved": c.resolved,
                "created_at": c.created_at.isoformat(),
                "updated_at": c.updated_at.isoformat(),
            }
            for c in comments
        ],
        "verdicts": [
            {
                "reviewer": v.reviewer,
                "verdict": v.outcome,
                "note": v.note,
                "created_at": v.created_at.isoformat(),
                "updated_at": v.updated_at.isoformat(),
            }
            for v in conversation.verdicts.all()
        ],
    }
    return orjson.dumps(body, option=orjson.OPT_INDENT_2)


class Bad(Exception):
    pass


def _str(item: dict[str, Any], key: str, where: str, limit: int = 700, required: bool = True) -> str:
    value = item.get(key, "")
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise Bad(f"{where}: {key!r} must be a {'non-empty ' if required else ''}string")
    if len(value) > limit:
        raise Bad(f"{where}: {key!r} is {len(value):,} characters, over the limit of {limit:,}")
    return value


def _when(item: dict[str, Any], key: str, where: str) -> datetime:
    try:
        return datetime.fromisoformat(item[key])
    except (KeyError, TypeError, ValueError):
        raise Bad(f"{where}: {key!r} must be an ISO date and time") from None


def store_reviews(conversation: Conversation, data: Any, where: str) -> list[str]:
    """Store what ``data`` (a parsed reviews.json) holds that is not here yet; the
    problems found, each naming the file and the entry (nothing is stored then: the
    caller's transaction is rolled back)."""
    try:
        _store(conversation, data, where)
    except Bad as e:
        return [str(e)]
    return []


def _store(conversation: Conversation, data: Any, where: str) -> None:
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise Bad(f'{where}: expected a JSON object with "version": {VERSION}')
    for key in ("labels", "conversation_labels", "comments", "verdicts"):
        if not isinstance(data.get(key, []), list):
            raise Bad(f"{where}: {key!r} must be a list")
    for i, item in enumerate(data.get("labels", [])):
        at = f"{where}: labels[{i}]"
        if not isinstance(item, dict):
            raise Bad(f"{at}: must be an object")
        name = _str(item, "name", at, 100)
        Label.objects.get_or_create(
            name=name,
            defaults={
                "colour": _str(item, "colour", at, 7, required=False) or "#6b7280",
                "description": _str(item, "description", at, 500, required=False),
            },
        )

    def label(name: Any, at: str) -> Label:
        found = Label.objects.filter(name=name).first() if isinstance(name, str) else None
        if found is None:
            raise Bad(f'{at}: no label {name!r} (list it under "labels")')
        return found

    for i, name in enumerate(data.get("conversation_labels", [])):
        ConversationLabel.objects.get_or_create(
            conversation=conversation,
            label=label(name, f"{where}: conversation_labels[{i}]"),
            defaults={"author": "import"},
        )
    events = set(conversation.events.values_list("event_id", flat=True))
    by_uid: dict[str, Comment] = {}
    for i, item in enumerate(data.get("comments", [])):
        at = f"{where}: comments[{i}]"
        if not isinstance(item, dict):
            raise Bad(f"{at}: must be an object")
        try:
            uid = uuid.UUID(_str(item, "uid", at, 36))
        except ValueError:
            raise Bad(f"{at}: 'uid' is not a UUID") from None
        existing = Comment.objects.filter(uid=uid).first()
        if existing is not None:
            if existing.conversation_id != conversation.pk:
                raise Bad(f"{at}: comment {uid} belongs to another conversation here")
            by_uid[str(uid)] = existing
            continue
        event_id = _str(item, "event_id", at, 255)
        if event_id not in events:
            raise Bad(f"{at}: this conversation has no event {event_id!r}")
        parent_uid = item.get("parent")
        parent = None
        if parent_uid is not None:
            parent = by_uid.get(parent_uid) if isinstance(parent_uid, str) else None
            if parent is None:
                raise Bad(f"{at}: its parent {parent_uid!r} is not a comment listed before it")
        resolved = item.get("resolved", False)
        if not isinstance(resolved, bool):
            raise Bad(f"{at}: 'resolved' must be true or false")
        names = item.get("labels", [])
        if not isinstance(names, list):
            raise Bad(f"{at}: 'labels' must be a list")
        comment = Comment.objects.create(
            uid=uid,
            conversation=conversation,
            event_id=event_id,
            leaf_event_id=_str(item, "leaf", at, 255, required=False),
            parent=parent,
            body=_str(item, "body", at, COMMENT_MAX_LENGTH, required=False),
            author=_str(item, "author", at),
            resolved=resolved,
            created_at=_when(item, "created_at", at),
            updated_at=_when(item, "updated_at", at),
        )
        comment.labels.set([label(n, at) for n in names])
        by_uid[str(uid)] = comment
    for i, item in enumerate(data.get("verdicts", [])):
        at = f"{where}: verdicts[{i}]"
        if not isinstance(item, dict):
            raise Bad(f"{at}: must be an object")
        outcome = item.get("verdict")
        if outcome not in Verdict.Outcome.values:
            raise Bad(f"{at}: 'verdict' must be one of {', '.join(Verdict.Outcome.values)}")
        Verdict.objects.get_or_create(
            conversation=conversation,
            reviewer=_str(item, "reviewer", at),
            defaults={
                "outcome": outcome,
                "note": _str(item, "note", at, COMMENT_MAX_LENGTH, required=False),
                "created_at": _when(item, "created_at", at),
                "updated_at": _when(item, "updated_at", at),
            },
        )
