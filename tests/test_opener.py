"""SINGLE OPENER: every file stream-doctor reads goes through ``stream_doctor.util.opener``.

A FIFO among a stranger's files blocks ``open`` for ever and a link to ``/dev/zero`` is read until
memory runs out; the opener refuses both, so a read that bypasses it is a hang waiting to happen.
This walks the package's syntax tree and fails on a call of ``open(``, ``.read_text(``,
``.read_bytes(`` or ``.open(`` that is not on the allow-list below.
"""

from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

import pytest

from stream_doctor.check import CheckError
from stream_doctor.config import expectations as expect
from stream_doctor.util.opener import TooLarge, UnreadableFile, read_bytes, read_text

PACKAGE = Path(__file__).resolve().parent.parent / "stream_doctor"
CALLS = frozenset({"open", "read_text", "read_bytes"})

#: (module, the called name's source text): each with why it does not need the opener.
ALLOWED = {
    # the opener itself: stat, non-blocking open, fstat
    ("util/opener.py", "open"),
    ("util/opener.py", "os.open"),
    ("util/opener.py", "read_bytes"),
    # writes: they create or replace a file (atomic.write refuses to replace what is not a regular file)
    ("record/conversations.py", "open"),  # a conversation's envelope: created (x), or reopened to append
    ("record/recorder.py", "open"),
    ("engine/stages.py", "open"),  # stdin's bytes for a library run, in a TemporaryDirectory made for it
    ("serve/matrix.py", "output.open"),  # the command's output, in its variant's folder under --out
    # the null device, put in place of a library process's standard input (its requests come on a copy)
    ("clients/library/__main__.py", "open"),
    # the package's own HTML template, read from the installed package
    ("reporters/html.py", "templates.joinpath(name).read_text"),  # its templates (page.html.j2 and those extending it)
    # scan reads through fsspec (URLs, object stores, table formats); a local status table is
    # checked by the opener first (scan/output.py _open)
    ("scan/task.py", "fsspec.open"),
    ("scan/sources.py", "fs.open"),
    ("scan/sources.py", "fsspec.open"),
}


@functools.cache  # three tests read one walk of the package (2.5 s of CPU each)
def _calls() -> list[tuple[str, str, int]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        # read_text/read_bytes imported from the opener are the opener's own
        openers = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "stream_doctor.util.opener"
            for alias in node.names
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in CALLS and not (isinstance(func, ast.Name) and name in openers):
                found.append((module, ast.unparse(func), node.lineno))
    return found


def test_every_read_goes_through_the_opener() -> None:
    bypassing = [f"{module}:{line}: {call}(…)" for module, call, line in _calls() if (module, call) not in ALLOWED]
    assert not bypassing, "read through stream_doctor.util.opener instead:\n" + "\n".join(bypassing)


def test_the_allow_list_has_no_stale_entries() -> None:
    assert ALLOWED <= {(module, call) for module, call, _line in _calls()}


def test_the_walk_sees_the_calls_it_looks_for() -> None:
    assert ("capture/limits.py", "open") not in {(m, c) for m, c, _ in _calls()}
    assert ("util/opener.py", "open") in {(m, c) for m, c, _ in _calls()}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(UnreadableFile, match=r"^is a named pipe \(FIFO\), not a regular file$"):
        read_text(str(fifo))


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_a_link_to_dev_zero_is_refused(tmp_path: Path) -> None:
    link = tmp_path / "a.sse.expect.toml"
    link.symlink_to("/dev/zero")
    with pytest.raises(UnreadableFile, match="is a character device, not a regular file"):
        read_bytes(str(link))
    with pytest.raises(CheckError, match=r"a.sse.expect.toml: cannot read the expectations: is a character device"):
        expect.load_sidecar(str(tmp_path / "a.sse"))


def test_size_cap_and_text(tmp_path: Path) -> None:
    big = tmp_path / "big"
    big.write_bytes(b"x" * 2048)
    with pytest.raises(TooLarge, match="larger than 1,024 bytes"):
        read_bytes(str(big), 1024)
    bad = tmp_path / "bad"
    bad.write_bytes(b"ok\xff")
    with pytest.raises(UnreadableFile, match=r"not UTF-8 text \(byte 0xff at offset 2\)"):
        read_text(str(bad))
    with pytest.raises(UnreadableFile, match="is a directory"):
        read_text(str(tmp_path))
    with pytest.raises(UnreadableFile, match="no such file"):
        read_text(str(tmp_path / "none"))


def test_deeply_nested_toml_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "a.sse.expect.toml").write_text("expect = " + "[" * 50_000)
    with pytest.raises(CheckError, match="a.sse.expect.toml: cannot read the TOML: its arrays or inline tables nest"):
        expect.load_sidecar(str(tmp_path / "a.sse"))
    (tmp_path / "stream-doctor.toml").write_text("x = " + "{a = " * 50_000)
    from stream_doctor.config import file as config

    with pytest.raises(CheckError, match="stream-doctor.toml: cannot read the TOML"):
        config.load(str(tmp_path / "stream-doctor.toml"))
