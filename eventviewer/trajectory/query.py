"""Full-text search: what of an event is searchable, the query language, and snippets.

The index (SQLite FTS5 or PostgreSQL tsvector, see ``eventviewer.fulltext``) holds each
event's ``event_text``, split into words the way ``words`` splits them (runs of letters
and digits, case folded, and each symbol beyond ASCII, an emoji or an arrow, as a word
of its own) by both databases. A query is parsed
here into terms (a word, a "phrase", a prefix*) and written out for either database;
a snippet is cut from the event's own text and its matches marked, as plain pieces
that the page escapes.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .cards import observation_output

FIELD_CHARS = 1000  # characters taken from one field of an event
EVENT_CHARS = 2000  # characters of an event indexed in all
MAX_TERMS = 16  # terms in one query
MAX_QUERY = 200  # characters of a query
# A prefix expands over every word of the index that it starts: a short one over a good
# part of a big index's vocabulary (a search's time budget bounds the rest).
MIN_PREFIX = 3  # letters or digits before a *
MAX_PREFIXES = 4  # prefix terms in one query
SNIPPET_CHARS = 160  # characters of a snippet around its first match

_WORD = re.compile(r"[^\W_]+")
# A character beyond ASCII that is no letter, digit or space: a symbol (an emoji, an
# arrow, ✅, €), which is a word of its own, or punctuation (…, «), which separates words.
_SIGN = re.compile(r"[^\w\s\x00-\x7f]")
_WORD_OR_SIGN = re.compile(r"[^\W_]+|[^\w\s\x00-\x7f]")
# A symbol's word: letters and digits, so that FTS5's tokenizer (which splits at symbols)
# and a tsvector hold it like any other word ("sym1f680" for 🚀).
SYMBOL_WORD = "sym"
FTS5_TOKENIZER = "unicode61 remove_diacritics 0"  # diacritics kept, as PostgreSQL's 'simple' configuration does
# The same words in a text that is all ASCII (most of it), found without a regular
# expression (which costs about 0.2 µs a word): one pass over the bytes turns capitals
# into small letters and everything but letters and digits into spaces, then a split.
_ASCII_WORDS = bytes(c if chr(c).isalnum() else 32 for c in range(128)).lower() + bytes([32] * 128)
# The top-level fields that hold text a reader looks for, beyond messages, thoughts,
# actions and observations (errors, rejections, hooks, summaries, condensations).
_TEXT_FIELDS = (
    "tool_name",
    "summary",
    "error",
    "code",
    "detail",
    "rejection_reason",
    "reason",
    "hook_command",
    "stdout",
    "stderr",
)
_CONTENT_KEYS = ("text", "thinking")


def _strings(value: Any, budget: int, depth: int = 0) -> Iterator[str]:
    """The strings inside a JSON value, in order, until ``budget`` characters are out."""
    if budget <= 0 or depth > 6:
        return
    if isinstance(value, str):
        yield value[: min(budget, FIELD_CHARS)]
    elif isinstance(value, dict):
        for key, item in value.items():
            if key == "kind":  # a payload's class name: "CmdRunAction"
                continue
            for found in _strings(item, budget, depth + 1):
                budget -= len(found)
                yield found
                if budget <= 0:
                    return
    elif isinstance(value, list):
        for item in value[:50]:
            for found in _strings(item, budget, depth + 1):
                budget -= len(found)
                yield found
                if budget <= 0:
                    return


def _content(value: Any) -> Iterator[Any]:
    """The texts of a content list (messages, thoughts, tool output, thinking blocks)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value[:50]:
            if isinstance(item, dict):
                for key in _CONTENT_KEYS:
                    if isinstance(item.get(key), str):
                        yield item[key]


def event_text(data: Any, limit: int = EVENT_CHARS) -> str:
    """What a reader can search of one event's JSON, bounded: message text, thoughts and
    reasoning, the tool, its arguments or command, the output, error texts."""
    if not isinstance(data, dict):
        return ""
    pieces: list[str] = []
    budget = limit

    def take(value: Any) -> None:
        nonlocal budget
        if type(value) is str:  # most are: no need to walk it
            if budget > 0:
                text = value[: min(budget, FIELD_CHARS)]
                pieces.append(text)
                budget -= len(text) + 1
            return
        if value is None:
            return
        for text in _strings(value, budget):
            if budget <= 0:
                return
            text = text[:budget]
            pieces.append(text)
            budget -= len(text) + 1

    message = data.get("llm_message")
    if isinstance(message, dict):
        for text in _content(message.get("content")):
            take(text)
        take(message.get("reasoning_content"))
    for key in _TEXT_FIELDS:
        if key in data:
            take(data[key])
    for text in _content(data.get("thought")):
        take(text)
    take(data.get("reasoning_content"))
    for text in _content(data.get("thinking_blocks")):
        take(text)
    action = data.get("action")
    if isinstance(action, dict):
        take(action)
    elif isinstance(data.get("tool_call"), dict):  # an invalid call: what the model wrote
        take(data["tool_call"].get("arguments"))
    observation = data.get("observation")
    if isinstance(observation, dict):
        take(observation.get("command"))
        if observation.get("content"):
            for text in _content(observation.get("content")):
                take(text)
        else:  # an observation of another shape: its output under fields of its own (stdout …)
            take(observation_output(observation))
        take(observation.get("error"))
    text = "\n".join(pieces)
    return text.replace("\x00", " ") if "\x00" in text else text  # PostgreSQL refuses NUL


def words(text: str) -> list[str]:
    """The words of a text as the index holds them."""
    if text.isascii():
        return text.encode().translate(_ASCII_WORDS).decode().split()
    text = text.lower()
    if _SIGN.search(text) is None:  # letters, digits, spaces and ASCII punctuation only
        return _WORD.findall(text)
    found = []
    for word in _WORD_OR_SIGN.findall(text):
        if word.isalnum():
            found.append(word)
        elif unicodedata.category(word)[0] == "S":
            found.append(f"{SYMBOL_WORD}{ord(word):x}")
    return found


def _symbol_word(match: re.Match[str]) -> str:
    sign = match.group()
    folded = sign.lower()  # as ``words`` folds it before it looks for symbols (Ⓐ: ⓐ)
    if len(folded) == 1 and unicodedata.category(folded)[0] == "S":
        return f" {SYMBOL_WORD}{ord(folded):x} "
    return sign


def fts5_body(text: str) -> str:
    """The text as SQLite's FTS5 indexes it: its symbols written as their words, so that
    FTS5's tokenizer finds in it what ``words`` finds (the text a page shows is the
    event's own, never this)."""
    return text if text.isascii() else _SIGN.sub(_symbol_word, text)


MAX_LEXEME_BYTES = 2047  # PostgreSQL ignores longer words (to_tsvector) or refuses them (a tsvector)
MAX_POSITION = 16383  # the largest word position a tsvector holds
MAX_POSITIONS = 255  # positions kept per word, as to_tsvector keeps them


def tsvector(text: str) -> str:
    """The words of ``text`` (``words``: as queries split them) with their positions, as a
    PostgreSQL tsvector literal, ``'word':1,5 'other':2``. Made here rather than by
    ``to_tsvector`` in the database: PostgreSQL's parser and regular expressions cost it
    about five times what this costs a parser worker, and the index then splits words
    exactly as a query does. Words hold letters and digits only: nothing to quote."""
    found = words(text)
    if found and len(max(found, key=len)) * 4 > MAX_LEXEME_BYTES:  # rare: a word that may be too long
        # A word too long for PostgreSQL takes no position, as to_tsvector skips it.
        found = [w for w in found if len(w) * 4 <= MAX_LEXEME_BYTES or len(w.encode()) <= MAX_LEXEME_BYTES]
    # Each word's positions, already written out: this runs for every event a
    # PostgreSQL import indexes, and formatting numbers one by one cost half its time.
    numbers = _NUMBERS if len(found) < len(_NUMBERS) else [str(n) for n in range(MAX_POSITION + 1)]
    positions: dict[str, list[str]] = {}
    for n, word in enumerate(found[:MAX_POSITION], start=1):
        at = positions.get(word)
        if at is None:
            positions[word] = [numbers[n]]
        elif len(at) < MAX_POSITIONS:
            at.append(numbers[n])
    return " ".join(["'" + word + "':" + ",".join(at) for word, at in positions.items()])


_NUMBERS = [str(n) for n in range(EVENT_CHARS + 1)]  # an indexed text's words are fewer


class QueryError(ValueError):
    """A query that cannot be searched; the message says why, for the reader."""


@dataclass(frozen=True)
class Term:
    words: tuple[str, ...]  # one word, or a phrase's words in order
    prefix: bool = False  # the last word is a prefix

    def fts5(self) -> str:
        phrase = '"' + " ".join(self.words) + '"'
        return phrase + ("*" if self.prefix else "")

    def tsquery(self, phrase: bool = True) -> str:
        parts = [f"'{w}'" for w in self.words]
        if self.prefix:
            parts[-1] += ":*"
        return "(" + (" <-> " if phrase else " & ").join(parts) + ")" if len(parts) > 1 else parts[0]


@dataclass(frozen=True)
class Query:
    text: str
    terms: tuple[Term, ...]

    def fts5(self) -> str:
        """The MATCH expression for SQLite FTS5: every term must match."""
        return " AND ".join(t.fts5() for t in self.terms)

    def tsquery(self, phrases: bool = True) -> str:
        """The ``to_tsquery('simple', …)`` text for PostgreSQL: every term must match
        (without ``phrases``, a phrase's words anywhere, for a tsvector without positions)."""
        return " & ".join(t.tsquery(phrases) for t in self.terms)

    @property
    def highlighted(self) -> list[str]:
        """Words to mark in a text; a prefix's marks every word it starts."""
        return [w for t in self.terms for w in t.words]

    @property
    def prefixes(self) -> frozenset[str]:
        return frozenset(t.words[-1] for t in self.terms if t.prefix)


_TOKEN = re.compile(r'\s*(?:"(?P<phrase>[^"]*)"(?P<pstar>\*)?|(?P<word>[^\s"]+))')


def parse_query(text: str) -> Query:
    """Words (all must match), "a phrase" (its words in a row), prefix* (a word's
    start). Anything else is a QueryError saying what is wrong."""
    text = text.strip()
    if not text:
        raise QueryError("the query is empty")
    if len(text) > MAX_QUERY:
        raise QueryError(f"the query is longer than {MAX_QUERY} characters")
    if text.count('"') % 2:
        raise QueryError('a quotation mark is not closed: write "a phrase" between two of them')
    terms: list[Term] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            break  # only trailing whitespace left
        position = match.end()
        if match["phrase"] is not None:
            found = words(match["phrase"])
            if not found:
                raise QueryError(f'the phrase "{match["phrase"]}" has no words in it')
            terms.append(Term(tuple(found), prefix=bool(match["pstar"])))
            continue
        raw = match["word"]
        prefix = raw.endswith("*")
        core = raw[:-1] if prefix else raw
        if "*" in core:
            raise QueryError(f"{raw!r}: * goes at the end of a word, for a prefix (pyt*)")
        found = words(core)
        if not found:
            if prefix:
                raise QueryError(f"{raw!r}: a prefix needs at least one letter or digit before the *")
            continue  # punctuation on its own: nothing to look for
        terms.append(Term(tuple(found), prefix=prefix))
    if not terms:
        raise QueryError("the query has no words to look for (letters or digits)")
    prefixes = [t for t in terms if t.prefix]
    for term in prefixes:
        if len(term.words[-1]) < MIN_PREFIX:
            raise QueryError(
                f"{term.words[-1]}*: a prefix needs at least {MIN_PREFIX} letters or digits before the * "
                "(a shorter one starts too many words)"
            )
    if len(prefixes) > MAX_PREFIXES:
        raise QueryError(f"the query has {len(prefixes)} prefixes (word*); at most {MAX_PREFIXES}")
    if len(terms) > MAX_TERMS:
        raise QueryError(f"the query has {len(terms)} terms; at most {MAX_TERMS}")
    return Query(text, tuple(terms))


def _sign_of(word: str) -> str | None:
    """The symbol a symbol's word stands for ("sym1f680": 🚀), or None."""
    if not word.startswith(SYMBOL_WORD) or not 0 < len(word) - len(SYMBOL_WORD) <= 6:
        return None
    try:
        sign = chr(int(word[len(SYMBOL_WORD) :], 16))
    except ValueError:
        return None
    return sign if ord(sign) > 127 and unicodedata.category(sign)[0] == "S" else None


def _marker(query: Query) -> re.Pattern[str]:
    exact = sorted({w for w in query.highlighted if w not in query.prefixes}, key=len, reverse=True)
    signs = {w: _sign_of(w) for w in exact}
    parts = [re.escape(w) + r"(?![^\W_])" for w in exact if signs[w] is None]
    parts += [re.escape(p) + r"[^\W_]*" for p in sorted(query.prefixes, key=len, reverse=True)]
    pattern = r"(?<![^\W_])(?:" + "|".join(parts) + ")" if parts else ""
    # A symbol is a word wherever it stands, even against letters.
    symbols = [re.escape(sign) for sign in signs.values() if sign is not None]
    return re.compile("|".join([p for p in (pattern, *symbols) if p]) or "(?!)", re.IGNORECASE)


def marked(text: str, query: Query) -> list[tuple[str, bool]]:
    """``text`` in pieces, each (piece, is it a match)."""
    pieces: list[tuple[str, bool]] = []
    last = 0
    for match in _marker(query).finditer(text):
        if match.start() > last:
            pieces.append((text[last : match.start()], False))
        pieces.append((match.group(), True))
        last = match.end()
    if last < len(text):
        pieces.append((text[last:], False))
    return pieces


def snippet(text: str, query: Query, width: int = SNIPPET_CHARS) -> list[tuple[str, bool]]:
    """A window of ``text`` around its first match, made one line, its matches marked;
    "…" where it is cut."""
    flat = " ".join(text.split())
    match = _marker(query).search(flat)
    start = 0 if match is None else max(0, match.start() - width // 3)
    if start and match is not None:  # start on a word
        space = flat.find(" ", start, match.start())
        start = space + 1 if space >= 0 else start
    end = min(len(flat), start + width)
    if end < len(flat):
        space = flat.rfind(" ", start, end)
        end = space if space > start + width // 2 else end
    pieces = marked(flat[start:end], query)
    if start:
        pieces.insert(0, ("…", False))
    if end < len(flat):
        pieces.append(("…", False))
    return pieces


def branch_leaves(nodes: Sequence[tuple[int, int | None, int, bool]], head: int | None) -> dict[int, int]:
    """For each tree node (pk, parent pk, seq, is it a side event), the leaf of the branch
    a search result on it opens: HEAD's when the node is on HEAD's branch, else the most
    recent leaf below it. A side event (a hook) opens its parent's."""
    parent_of = {pk: parent for pk, parent, _, _ in nodes}
    seq_of = {pk: seq for pk, _, seq, _ in nodes}
    best: dict[int, int] = {}
    for pk, parent, _, side in sorted(nodes, key=lambda n: n[2], reverse=True):
        if side:
            continue
        leaf = best.setdefault(pk, pk)
        if parent is not None and (parent not in best or seq_of[leaf] > seq_of[best[parent]]):
            best[parent] = leaf
    node = head
    for _ in range(len(parent_of)):
        if node is None or head is None:
            break
        best[node] = head
        node = parent_of.get(node)
    for pk, parent, _, side in sorted(nodes, key=lambda n: n[2]):
        if side and parent is not None and parent in best:
            best[pk] = best[parent]
    return best
