"""The recursive queries that read a branch without reading its conversation: a
leaf's ancestors, a stretch of its branch, the events at some depths of it, its whole
path. Raw SQL: the ORM has no recursive query, and walking the parents one query at a
time would cost a round trip per event. Asked through ``Event.objects`` (the table is
the Event model's), and row conversion for the Light columns they read."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from django.db import connection

from eventviewer.trajectory.events import Light
from eventviewer.trajectory.tree import ANCHOR_SPACING

if TYPE_CHECKING:
    from eventviewer.models import Event


def columns_of(row_type: type[NamedTuple]) -> tuple[str, ...]:
    """The Event columns that hold a row type's fields (Light's, or a part of them), in its order."""
    return tuple({"pk": "id", "parent_pk": "parent_id"}.get(name, name) for name in row_type._fields)


LIGHT_COLUMNS = columns_of(Light)
_FLAGS = [i for i, name in enumerate(Light._fields) if isinstance(Light._field_defaults.get(name), bool)]


def light_row(row: Sequence[Any]) -> Light:
    """A Light from the LIGHT_COLUMNS of a database row (SQLite returns flags as 0/1)."""
    if type(row[_FLAGS[0]]) is not bool:
        flagged = list(row)
        for i in _FLAGS:
            flagged[i] = bool(flagged[i])
        return Light._make(flagged)
    return Light._make(row)


def ancestors(table: str, leaf: Event, down_to: int) -> dict[int, int]:
    """The pks of ``leaf`` and its ancestors down to depth ``down_to``, by depth: one
    recursive query, as long as the distance (see ``path_to``)."""
    sql = f"""
        WITH RECURSIVE chain(id, depth) AS (
            SELECT id, depth FROM {table} WHERE id = %s
            UNION ALL
            SELECT p.parent_id, chain.depth - 1 FROM {table} p JOIN chain ON p.id = chain.id
            WHERE p.parent_id IS NOT NULL AND chain.depth > %s
        )
        SELECT depth, id FROM chain
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [leaf.pk, down_to])
        return dict(cursor.fetchall())


def on_branch(table: str, leaf: Light | Event, start: int, stop: int) -> list[Light]:
    """The events at depths ``start`` to ``stop - 1`` of the branch ending at ``leaf``,
    root first, without reading the rest of the branch: one recursive query hops from
    anchor to anchor down to the last wanted depth, then walks parents (fewer than
    ANCHOR_SPACING steps, plus the events wanted). Where an anchor is not known it
    walks parents all the way, like ``path_to``."""
    depth = leaf.depth or 0
    last = min(stop - 1, depth)
    if start > last:
        return []
    columns = ", ".join(f"e.{connection.ops.quote_name(c)}" for c in LIGHT_COLUMNS)
    k = ANCHOR_SPACING
    hop = f"(e.anchor IS NOT NULL AND ((chain.depth - 1) / {k}) * {k} >= %s)"
    sql = f"""
        WITH RECURSIVE chain(id, depth) AS (
            SELECT id, depth FROM {table} WHERE id = %s
            UNION ALL
            SELECT CASE WHEN {hop} THEN e.anchor ELSE e.parent_id END,
                   CASE WHEN {hop} THEN ((chain.depth - 1) / {k}) * {k} ELSE chain.depth - 1 END
            FROM {table} e JOIN chain ON e.id = chain.id
            WHERE e.parent_id IS NOT NULL AND chain.depth > %s
        )
        SELECT {columns} FROM chain JOIN {table} e ON e.id = chain.id
        WHERE chain.depth <= %s ORDER BY chain.depth
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [leaf.pk, last, last, start, last])
        rows = [light_row(row) for row in cursor.fetchall()]
    return rows


def at_depths(table: str, leaf: Light | Event, depths: Iterable[int]) -> dict[int, int]:
    """The pks of the events at these depths of the branch ending at ``leaf``, by depth
    (one ``on_branch`` query each, from the one found just below)."""
    found: dict[int, int] = {}
    current: Light | Event = leaf
    for depth in sorted({d for d in depths if 0 <= d <= (leaf.depth or 0)}, reverse=True):
        at = on_branch(table, current, depth, depth + 1)
        if not at:
            break
        found[depth] = at[0].pk
        current = at[0]
    return found


def path_to(table: str, leaf: Event) -> list[Light]:
    """The root-first path to ``leaf`` in one recursive query, O(depth): the rest
    of the conversation is never read, nor any payload."""
    columns = ", ".join(f"e.{connection.ops.quote_name(c)}" for c in LIGHT_COLUMNS)
    # Raw SQL: the ORM has no recursive query, and walking the parents one query
    # at a time would cost a round trip per event.
    sql = f"""
        WITH RECURSIVE chain(id, n) AS (
            SELECT id, 0 FROM {table} WHERE id = %s
            UNION ALL
            SELECT p.parent_id, chain.n + 1 FROM {table} p JOIN chain ON p.id = chain.id
            WHERE p.parent_id IS NOT NULL AND chain.n <= %s
        )
        SELECT {columns} FROM chain JOIN {table} e ON e.id = chain.id ORDER BY chain.n DESC
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [leaf.pk, leaf.depth or 0])
        rows = cursor.fetchall()
    return [light_row(row) for row in rows]
