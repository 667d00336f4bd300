"""What a terminal command writes, read best effort: redirections (``> f``, ``>> f``,
``&> f``), ``tee``, ``rm``, ``mv``, ``cp``, ``touch``, ``sed -i`` and here-documents
(``cat > f <<EOF``), with relative paths resolved against the working directory where it
is known (and followed through ``cd``). Anything else a command runs is either a known
read (``ls``, ``cat``, ``grep``, ``git status`` …) or *unknown*: it may have changed files
in ways this cannot tell."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

MAX_COMMAND_CHARS = 100_000  # a longer command is not parsed: it is a command of unknown effect

# Commands that only read (with no redirection to a file): running them changes nothing.
READS = frozenset(
    "ls ll cat head tail grep egrep fgrep rg ag find pwd echo printf wc which whereis whoami env printenv "
    "date cd pushd popd true false test [ sleep stat file du df tree sort uniq cut tr diff cmp less more nl "
    "basename dirname realpath readlink type id uname hostname ps history jq awk column xxd od md5sum "
    "sha256sum sha1sum seq yes export set unset source . alias".split()
)
GIT_READS = frozenset("status log diff show rev-parse ls-files blame describe shortlog grep remote".split())
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "|&", ";;", "{", "}"})
_WRITE_REDIRECTS = {">": "write", ">|": "write", "&>": "write", ">>": "append", "&>>": "append"}
_HEREDOC = re.compile(r"<<(-?)[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_.-]*)\2")
# A token: blanks, an operator (a run of ; & | ( ) < >), or a word made of unquoted
# characters, 'single-quoted' and "double-quoted" parts and \-escaped characters; any
# other character is a quote left open.
_TOKEN = re.compile(
    r"""(?P<blank>\s+)|(?P<op>[;&|()<>]+)|(?P<word>(?:[^\s;&|()<>'"\\]+|'[^']*'|"(?:[^"\\]|\\.)*"|\\.)+)|(?P<bad>.)""",
    re.DOTALL,
)
_SPECIAL = re.compile(r"""[;&|()<>'"\\]""")  # what makes a command more than plain words
_QUOTES = re.compile(r"""['"\\]""")
_QUOTED = re.compile(r"""'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)""", re.DOTALL)
_DOUBLE_ESCAPE = re.compile(r"""\\([$`"\\\n])""")  # what a backslash escapes inside double quotes
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")  # FOO=bar before a command
_NOT_FILES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")


class Write(NamedTuple):
    """One file a command wrote, appended to, deleted or moved, as far as it can be read."""

    op: str  # "write", "append", "delete", "move", "edit" (in place), "touch"
    path: str
    content: str | None = None  # what was written, when the command says (a here-document, an echo)
    source: str = ""  # a move's origin


@dataclass
class Shell:
    """What a terminal command did to files, read best effort."""

    writes: list[Write] = field(default_factory=list)
    unknown: bool = False  # part of it may have changed files in ways not recognised
    cwd: str = ""  # the working directory it ended in, as far as its ``cd``s tell


def read_command(command: str, cwd: str = "") -> Shell:
    """The files ``command`` writes, run from ``cwd`` ("" when unknown: paths stay as written)."""
    shell = Shell(cwd=cwd)
    if len(command) > MAX_COMMAND_CHARS:
        shell.unknown = True
        return shell
    text = command.replace("\\\n", " ") if "\\\n" in command else command
    text, bodies = _cut_heredocs(text) if "<<" in text else (text, {})
    tokens = _tokens(text.replace("\n", " ; ") if "\n" in text else text)
    if tokens is None:  # an unbalanced quote: not something to guess at
        shell.unknown = True
        return shell
    segment: list[tuple[str, bool]] = []
    for token, operator in [*tokens, (";", True)]:
        if (operator and token in _SEPARATORS) or (not operator and token in ("{", "}")):
            if segment:
                _read_simple(segment, bodies, shell)
            segment = []
        else:
            segment.append((token, operator))
    return shell


def _tokens(text: str) -> list[tuple[str, bool]] | None:
    """The words and operators of a command line, each word unquoted, as a POSIX shell
    splits them (without expanding anything); None when a quote is left open.

    Not ``shlex.shlex(punctuation_chars=True)``: it gives a quoted ``'>'`` or ``";"`` back
    as the same string as the operator, so ``echo '>' x`` would read as a redirection to
    ``x`` (tests/trajectory/test_shell.py has the cases)."""
    if not _SPECIAL.search(text):  # most commands: plain words
        return [(word, False) for word in text.split()]
    found: list[tuple[str, bool]] = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup
        if kind == "bad":
            return None
        if kind == "op":
            found.append((match.group(), True))
        elif kind == "word":
            word = match.group()
            found.append((_QUOTED.sub(_unquoted, word) if _QUOTES.search(word) else word, False))
    return found


def _unquoted(match: re.Match[str]) -> str:
    single, double, escaped = match.groups()
    if single is not None:
        return str(single)
    if double is not None:
        return _DOUBLE_ESCAPE.sub(r"\1", str(double))
    return str(escaped)


def _cut_heredocs(command: str) -> tuple[str, dict[str, str]]:
    """The command without its here-documents' bodies, each operator replaced by a
    placeholder word; and each placeholder's body."""
    lines = command.split("\n")
    out: list[str] = []
    bodies: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        found = list(_HEREDOC.finditer(line))
        i += 1
        for number, match in enumerate(found):
            strip_tabs, delimiter = match.group(1) == "-", match.group(3)
            body: list[str] = []
            while i < len(lines) and (lines[i].lstrip("\t") if strip_tabs else lines[i]) != delimiter:
                body.append(lines[i].lstrip("\t") if strip_tabs else lines[i])
                i += 1
            i += 1  # the delimiter line
            name = f"__heredoc_{len(bodies)}_{number}__"
            bodies[name] = "".join(b + "\n" for b in body)
            line = line.replace(match.group(0), f"<< {name}", 1)
        out.append(line)
    return "\n".join(out), bodies


def _read_simple(tokens: list[tuple[str, bool]], bodies: Mapping[str, str], shell: Shell) -> None:
    """One simple command (its words, each with whether it is an operator): its
    redirections, then what its program does. A quoted ``'>'`` is a word, not one."""
    words = [word for word, _ in tokens]
    args: list[str] = []
    redirects: list[tuple[str, str]] = []
    stdin = None
    i = 0 if any(operator for _, operator in tokens) else len(words)
    if i:
        args = list(words)  # no redirection: all of it is the command
    while i < len(words):
        word, operator = tokens[i]
        target = words[i + 1] if i + 1 < len(words) else ""
        if not operator:
            args.append(word)
            i += 1
        elif word in _WRITE_REDIRECTS or word == ">&":
            if args and args[-1].isdigit() and word in (">", ">>"):
                args.pop()  # "2> file": the descriptor, not an argument
            if word == ">&" and (target.isdigit() or target == "-"):
                pass  # 2>&1: a descriptor, no file
            elif target:
                redirects.append(("write" if word == ">&" else _WRITE_REDIRECTS[word], target))
            i += 2
        elif word in ("<", "<<", "<<<", "<>", "<&"):
            stdin = bodies.get(target) if word == "<<" else None
            i += 2
        else:
            args.append(word)
            i += 1
    while args and _ASSIGNMENT.match(args[0]):
        args.pop(0)  # FOO=bar cmd
    while args and args[0] in ("sudo", "command", "time", "nohup", "exec", "builtin"):
        args.pop(0)
    program = posixpath.basename(args[0]) if args else ""
    content = _output_of(program, args[1:], stdin)
    for op, target in redirects:
        if target not in _NOT_FILES:
            shell.writes.append(Write(op, _resolve(shell.cwd, target), content))
    if program:
        _run(program, args[1:], stdin, shell)


def _output_of(program: str, args: list[str], stdin: str | None) -> str | None:
    """What a command prints, when it is plain enough to tell: ``cat`` of a
    here-document, ``echo`` of plain words."""
    if program == "cat" and not args and stdin is not None:
        return stdin
    if program == "echo" and not any(a.startswith("-") for a in args[:1]):
        return " ".join(args) + "\n"
    return None


def _run(program: str, args: list[str], stdin: str | None, shell: Shell) -> None:
    operands = [a for a in args if not a.startswith("-") or a == "-"]
    known = _PROGRAMS.get(program)
    if known is not None and known(args, operands, stdin, shell):
        return
    if program not in READS and not (args and all(a in ("--version", "-V", "--help") for a in args)):
        shell.unknown = True


# What each program that may write files does, read from (its arguments, its operands,
# its stdin, the shell so far); False: not a call this recognises (``mv`` of one operand).
Program = Callable[[list[str], list[str], str | None, Shell], bool]


def _cd(args: list[str], operands: list[str], stdin: str | None, shell: Shell) -> bool:
    target = operands[0] if operands else "~"
    if target.startswith("/"):
        shell.cwd = posixpath.normpath(target)
    else:
        shell.cwd = "" if target.startswith(("~", "$", "-")) or not shell.cwd else _resolve(shell.cwd, target)
    return True


def _rm(args: list[str], operands: list[str], stdin: str | None, shell: Shell) -> bool:
    shell.writes.extend(Write("delete", _resolve(shell.cwd, p)) for p in operands)
    return True


def _mv(args: list[str], operands: list[str], stdin: str | None, shell: Shell) -> bool:
    if len(operands) < 2:
        return False
    *sources, target = operands
    for source in sources:
        shell.writes.append(Write("move", _resolve(shell.cwd, target), source=_resolve(shell.cwd, source)))
    return True


def _cp(args: list[str], operands: list[str], stdin: str | None, shell: Shell) -> bool:
    if len(operands) < 2:
        return False
    shell.writes.append(Write("write", _resolve(shell.cwd, operands[-1])))
    return True


def _touch(args: list[str], operands: list[str], stdin: str | None, shell: Shell) -> bool:
    shell.writes.extend(Write("touch", _resolve(shell.cwd, p)) for p in operands)
    return True


def _tee(args: list[str], operands: list[str], stdin: str | None, shell: Shell) -> bool:
    op = "append" if any(a in ("-a", "--append") for a in args) else "write"
    shell.writes.extend(Write(op, _resolve(shell.cwd, p), stdin) for p in operands if p != "-")
    return True


def _sed(args: list[str], operands: list[str], stdin: str | None, shell: Shell) -> bool:
    if not any(a == "-i" or a.startswith(("-i", "--in-place")) for a in args):
        return False
    files = _sed_files(args)
    shell.writes.extend(Write("edit", _resolve(shell.cwd, p)) for p in files)
    shell.unknown = shell.unknown or not files
    return True


def _git(args: list[str], operands: list[str], stdin: str | None, shell: Shell) -> bool:
    verb = next((a for a in args if not a.startswith("-")), "")
    shell.unknown = shell.unknown or verb not in GIT_READS
    return True


def _find(args: list[str], operands: list[str], stdin: str | None, shell: Shell) -> bool:
    shell.unknown = shell.unknown or any(a in ("-delete", "-exec", "-execdir", "-ok") for a in args)
    return True


def _sort(args: list[str], operands: list[str], stdin: str | None, shell: Shell) -> bool:
    shell.unknown = shell.unknown or any(a == "-o" or a.startswith("--output") for a in args)
    return True


_PROGRAMS: dict[str, Program] = {
    "cd": _cd,
    "rm": _rm,
    "mv": _mv,
    "cp": _cp,
    "touch": _touch,
    "tee": _tee,
    "sed": _sed,
    "git": _git,
    "find": _find,
    "sort": _sort,
}


def _sed_files(args: list[str]) -> list[str]:
    """The files of ``sed -i``: every operand after the script (the first operand,
    unless the script came with -e or -f)."""
    operands: list[str] = []
    script_given = False
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-e", "-f", "--expression", "--file"):
            script_given, skip = True, True
        elif a.startswith(("-e", "-f")) and len(a) > 2 and not a.startswith("-i"):
            script_given = True
        elif not a.startswith("-"):
            operands.append(a)
    return operands if script_given else operands[1:]


def _resolve(cwd: str, path: str) -> str:
    if not path or path.startswith(("~", "$")) or not cwd or path.startswith("/"):
        return posixpath.normpath(path) if path.startswith("/") else path
    return posixpath.normpath(posixpath.join(cwd, path))
