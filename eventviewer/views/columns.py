"""The header of a sortable table: each column's link flips the order of the sorted column
and opens any other in its natural order."""

from __future__ import annotations

from collections.abc import Collection


def sortable(
    columns: list[tuple[str, str]], sort: str, direction: str, ascending: Collection[str], text: Collection[str]
) -> list[tuple[str, str, bool, str]]:
    """(key, label, numeric, the order its link asks for) per column; ``ascending``: the
    columns read A to Z first, ``text``: those that are not numbers."""
    flipped = {"asc": "desc", "desc": "asc"}[direction]
    return [
        (key, label, key not in text, flipped if key == sort else ("asc" if key in ascending else "desc"))
        for key, label in columns
    ]
