"""What a terminal command writes, read from the command line: sed -i's files,
here-documents, quoting, redirections of descriptors, paths resolved against the
working directory (the cases the other tests left to chance)."""

from __future__ import annotations

import pytest

from eventviewer.trajectory.shell import Write, read_command


@pytest.mark.parametrize(
    ("command", "cwd", "writes", "unknown"),
    [
        ("sed -i 's/a/b/' a.py b.py", "/w", [("edit", "/w/a.py", None, ""), ("edit", "/w/b.py", None, "")], False),
        ("sed -i -e 's/a/b/' -e 's/c/d/' a.py", "/w", [("edit", "/w/a.py", None, "")], False),
        ("sed -i.bak -f script.sed a.py", "/w", [("edit", "/w/a.py", None, "")], False),
        ("sed -i -es/a/b/ a.py", "/w", [("edit", "/w/a.py", None, "")], False),
        ("sed -i 's/a/b/'", "/w", [], True),
        (
            "cat > a.txt <<EOF\nhello\nworld\nEOF\necho done > b.txt",
            "/w",
            [("write", "/w/a.txt", "hello\nworld\n", ""), ("write", "/w/b.txt", "done\n", "")],
            False,
        ),
        ("cat <<-'END' > t.txt\n\tindented\n\tEND", "/w", [("write", "/w/t.txt", "indented\n", "")], False),
        (
            "cat > x <<A && cat > y <<B\none\nA\ntwo\nB",
            "/w",
            [("write", "/w/x", "one\n", ""), ("write", "/w/y", "two\n", "")],
            False,
        ),
        ('echo "a \\"q\\" \\$HOME" > q.txt', "/w", [("write", "/w/q.txt", 'a "q" $HOME\n', "")], False),
        ("echo 'it''s' > s.txt", "/w", [("write", "/w/s.txt", "its\n", "")], False),
        # A quoted operator is a word (shlex with punctuation_chars reads it as the operator).
        ("echo '>' x", "/w", [], False),
        ('echo ">" x > out.txt', "/w", [("write", "/w/out.txt", "> x\n", "")], False),
        ("echo 'a;' rm b > c.txt", "/w", [("write", "/w/c.txt", "a; rm b\n", "")], False),
        ("echo a\\ b > e.txt", "/w", [("write", "/w/e.txt", "a b\n", "")], False),
        ("make 2> err.log", "/w", [("write", "/w/err.log", None, "")], True),
        ("make 2>&1 > out.log", "/w", [("write", "/w/out.log", None, "")], True),
        ("ls >& all.log", "/w", [("write", "/w/all.log", None, "")], False),
        ("cd src && echo x > ../a.txt", "/w", [("write", "/w/a.txt", "x\n", "")], False),
        (
            "echo x > ~/a.txt; echo y > $HOME/b; echo z > /tmp/../c",
            "/w",
            [("write", "~/a.txt", "x\n", ""), ("write", "$HOME/b", "y\n", ""), ("write", "/c", "z\n", "")],
            False,
        ),
        ("cd /abs/./dir && touch f", "", [("touch", "/abs/dir/f", None, "")], False),
        ("cat <<< word > h.txt", "/w", [("write", "/w/h.txt", None, "")], False),
        ("FOO=1 sudo tee -a log.txt <<EOF\nline\nEOF", "/w", [("append", "/w/log.txt", "line\n", "")], False),
    ],
)
def test_what_a_command_writes(command, cwd, writes, unknown):
    shell = read_command(command, cwd)
    assert shell.writes == [Write(*w) for w in writes]
    assert shell.unknown is unknown


def test_cd_follows_relative_and_absolute_paths_and_forgets_what_it_cannot_tell():
    assert read_command("cd src && cd ../lib/./x", "/w").cwd == "/w/lib/x"
    assert read_command("cd /abs/./dir", "").cwd == "/abs/dir"
    assert read_command("cd src", "").cwd == ""
    assert read_command("cd ~/x", "/w").cwd == read_command("cd $HOME", "/w").cwd == ""
