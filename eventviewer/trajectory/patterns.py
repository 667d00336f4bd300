"""Failure patterns of an evaluation run: its failing instances grouped by what went
wrong first.

An instance's signature is its first failure's kind and tool with its error line's
volatile parts (timestamps, paths, hex ids, quoted values, numbers) taken out, so that
"No module named 'requests'" in /tmp/a and "No module named 'numpy'" in /work/b are one
pattern. A failed instance with no failure event is signed by how it stopped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .failures import LABELS
from .kinds import EXIT_CODE_FAILURE

FINISHED_UNPASSED = "finished without passing tests"
OUT_OF_TURNS = "ran out of turns"
EMPTY_HISTORY = "empty history"
SIGNATURE_CHARS = 300  # what the instance row stores
EXAMPLES = 2
FINISH_ACTIONS = ("FinishAction",)  # a last action's kind that says the agent said it was done

# A traceback's last line names the exception; that is the line that says what went wrong.
_EXCEPTION = re.compile(r"^\s*(?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Fault|Failure)\b")
_ERROR_WORD = re.compile(r"error|fail|not found|denied|cannot|can't|unable|invalid|no such", re.IGNORECASE)
_VOLATILE = [
    # timestamps first: their digits and colons would otherwise read as numbers
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"), "<time>"),
    (re.compile(r"\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<time>"),
    (re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`"), "<name>"),
    (re.compile(r"(?:[A-Za-z]:\\|~?/|\.{1,2}/)[^\s:,;'\"()\[\]]*|\b[\w.-]+(?:/[\w.-]+)+/?"), "<path>"),
    (re.compile(r"\b[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b"), "<hex>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b"), "<hex>"),
    (re.compile(r"(?<![\w<])[-+]?\d+(?:\.\d+)?(?![\w>])"), "<n>"),
]
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class FirstFailure:
    """An instance's first failing event, as stored on its row."""

    event_id: str
    kind: str  # failures.CODES
    tool: str
    text: str  # what it said, the whole text (the error line is picked here)
    exit_code: int | None = None


@dataclass(frozen=True)
class Pattern:
    signature: str
    count: int
    share: float  # of the run's instances
    examples: list[str]  # the first instance ids, sorted
    instance_ids: list[str]


def error_line(text: str) -> str:
    """The line of ``text`` that says what went wrong: a traceback's last exception
    line, else the first line with an error word, else the first line."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    for line in reversed(lines):
        if _EXCEPTION.match(line):
            return line
    at = next((i for i, line in enumerate(lines) if _ERROR_WORD.search(line)), 0)
    # "ERROR:" on a line of its own heads the line that says which error
    if lines[at].endswith(":") and at + 1 < len(lines):
        return f"{lines[at]} {lines[at + 1]}"
    return lines[at]


def normalised(line: str) -> str:
    """``line`` with its volatile parts replaced by placeholders, spaces collapsed."""
    for pattern, placeholder in _VOLATILE:
        line = pattern.sub(placeholder, line)
    return _SPACES.sub(" ", line).strip()


def signature(outcome: str, first: FirstFailure | None, finished: bool, error: str = "") -> str:
    """The pattern of an instance that did not resolve (outcome failed, error or empty);
    "" for the others. ``finished``: its last action was a finish."""
    if outcome not in ("failed", "error", "empty"):
        return ""
    if first is not None:
        text = normalised(error_line(first.text))
        if first.kind == EXIT_CODE_FAILURE and first.exit_code is not None:
            head = f"{first.tool or 'command'} exit {first.exit_code}"
        else:
            head = " ".join(part for part in (first.tool, LABELS.get(first.kind, first.kind)) if part)
        found = f"{head}: {text}" if text else head
    elif outcome == "empty":
        found = EMPTY_HISTORY
    elif outcome == "error":
        text = normalised(error_line(error))
        found = f"run error: {text}" if text else "run error"
    else:
        found = FINISHED_UNPASSED if finished else OUT_OF_TURNS
    return found[:SIGNATURE_CHARS]


def grouped(signed: Iterable[tuple[str, str | None]], instances: int) -> list[Pattern]:
    """(instance id, signature) pairs grouped by signature, the biggest group first
    (ties by signature); unsigned instances are left out. ``instances``: the run's size."""
    groups: dict[str, list[str]] = {}
    for instance_id, sign in signed:
        if sign:
            groups.setdefault(sign, []).append(instance_id)
    found = []
    for sign, ids in groups.items():
        ids.sort()
        found.append(Pattern(sign, len(ids), len(ids) / instances if instances else 0.0, ids[:EXAMPLES], ids))
    found.sort(key=lambda p: (-p.count, p.signature))
    return found
