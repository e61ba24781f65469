"""Discovery: captures recognised by content inside folders and globs; named files always checked."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from stream_doctor.check import CheckError
from stream_doctor.check.discover import discover, looks_like_capture
from tests.conftest import ROOT

SSE = (ROOT / "fixtures/anthropic/one_call.sse").read_bytes()
ENVELOPE = (ROOT / "fixtures/anthropic/empty_input_bug.jsonl").read_bytes()


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


@pytest.mark.parametrize(
    ("content", "is_capture"),
    [
        (SSE, True),
        (ENVELOPE, True),
        (gzip.compress(SSE, mtime=0), True),
        (gzip.compress(SSE, mtime=0)[:200], True),  # cut gzip: its head still reads as SSE
        (b"\x1f\x8b\x08\x00garbage-not-deflate", True),  # cannot tell: checked, so it fails loudly
        (b'[{"type":"message_start"}]', True),
        (b"# Notes\n\nSome *markdown*.\n", False),
        (b'[tool.stream-doctor]\nfail-on = "error"\n', False),  # starts with "[", but is TOML
        (b"[[expect]]\ncode = 'SD102'\n", False),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", False),
        (b"", False),
        (b'{\n  "name": "a package.json"\n}\n', False),  # one JSON object over several lines
        (gzip.compress(b"plain text, compressed\n", mtime=0), False),
    ],
    ids=[
        "sse",
        "envelope",
        "gzip",
        "gzip-cut",
        "gzip-corrupt",
        "json-array",
        "markdown",
        "toml-table",
        "toml-array-of-tables",
        "png",
        "empty",
        "pretty-json",
        "gzip-text",
    ],
)
def test_recognised_by_content(folder: Path, content: bytes, is_capture: bool) -> None:
    assert looks_like_capture(str(write(folder / "file.bin", content))) is is_capture


def test_folders_are_walked_sorted_and_by_content(folder: Path) -> None:
    write(folder / "b/two.txt", SSE)  # the name does not matter
    write(folder / "a/one.sse", SSE)
    write(folder / "a/README.md", "# about\n")
    write(folder / "a/one.sse.expect.toml", '[[expect]]\ncode = "SD102"\n')
    write(folder / "stream-doctor.toml", 'fail-on = "error"\n')
    write(folder / ".git/objects/x.sse", SSE)  # hidden folders are not searched
    write(folder / "node_modules/pkg/x.sse", SSE)
    found = discover(["."])
    assert found.captures == ("a/one.sse", "b/two.txt")
    assert found.skipped == ("a/README.md", "a/one.sse.expect.toml", "stream-doctor.toml")


def test_paths_are_relative_to_the_working_directory(folder: Path) -> None:
    write(folder / "captures/one.sse", SSE)
    assert discover([str(folder / "captures")]).captures == ("captures/one.sse",)
    assert discover([str(folder / "captures/one.sse")]).captures == ("captures/one.sse",)
    os.chdir(folder / "captures")
    assert discover(["../captures"]).captures == ("one.sse",)


def test_named_files_are_checked_whatever_they_hold(folder: Path) -> None:
    write(folder / "notes.txt", "not a capture\n")
    write(folder / "one.sse", SSE)
    assert discover(["notes.txt", "one.sse", "one.sse"]).captures == ("notes.txt", "one.sse")


def test_own_files_named_explicitly(folder: Path) -> None:
    write(folder / "one.sse", SSE)
    write(folder / "one.sse.expect.toml", "")
    write(folder / "orphan.sse.expect.toml", "")
    write(folder / "pyproject.toml", "")
    found = discover(["one.sse.expect.toml", "orphan.sse.expect.toml", "pyproject.toml"])
    assert found.captures == ("one.sse",)
    assert found.skipped == ("orphan.sse.expect.toml", "pyproject.toml")


def test_globs(folder: Path) -> None:
    write(folder / "x/a.sse", SSE)
    write(folder / "x/y/b.sse", SSE)
    write(folder / "x/y/c.md", "# no\n")
    assert discover(["x/*.sse"]).captures == ("x/a.sse",)
    assert discover(["x/**/*.sse"]).captures == ("x/a.sse", "x/y/b.sse")
    found = discover(["x/*"])  # a folder matched by a glob is walked
    assert found.captures == ("x/a.sse", "x/y/b.sse") and found.skipped == ("x/y/c.md",)
    with pytest.raises(CheckError, match="matches no file"):
        discover(["x/*.jsonl"])


def test_exclusion_applies_to_what_is_found_not_to_what_is_named(folder: Path) -> None:
    write(folder / "keep/a.sse", SSE)
    write(folder / "scratch/b.sse", SSE)
    excluded = lambda path: path.startswith("scratch")  # noqa: E731
    assert discover(["."], excluded).captures == ("keep/a.sse",)
    assert discover(["scratch/b.sse"], excluded).captures == ("scratch/b.sse",)


def test_missing_path(folder: Path) -> None:
    with pytest.raises(CheckError, match="nope.sse: no such file or folder"):
        discover(["nope.sse"])


@pytest.mark.skipif(os.name == "nt" or os.geteuid() == 0, reason="root (or Windows) can read any file")
def test_an_unreadable_file_in_a_folder_is_checked(folder: Path) -> None:
    path = write(folder / "locked.sse", SSE)
    path.chmod(0)
    try:
        assert discover(["."]).captures == ("locked.sse",)
    finally:
        path.chmod(0o644)


def test_the_fixture_tree_skips_its_non_captures(in_tree: Path) -> None:
    found = discover(["."], lambda path: path.startswith("scratch/"))
    assert "notes.txt" in found.skipped and "README.md" in found.skipped
    assert "broken/truncated.sse.gz" in found.captures
    assert not any(p.startswith("scratch/") for p in found.captures)


def test_a_link_leaving_the_tree_is_skipped_and_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A link in the checked folder to a file outside it is never read: a fork's fixture could point
    at ~/.aws/credentials and have it copied into the JSON report."""
    sse = (ROOT / "fixtures/anthropic/one_call.sse").read_bytes()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.sse").write_bytes(sse)
    tree = tmp_path / "tree"
    (tree / "deep").mkdir(parents=True)
    (tree / "real.sse").write_bytes(sse)
    (tree / "deep/leaves.sse").symlink_to(outside / "secret.sse")
    (tree / "deep/stays.sse").symlink_to(tree / "real.sse")  # near miss: a link within the tree
    monkeypatch.chdir(tmp_path)
    for given in ("tree", "tree/**/*.sse"):
        found = discover([given])
        assert found.captures == ("tree/deep/stays.sse", "tree/real.sse"), given
        assert [(f.path, f.kind) for f in found.special] == [("tree/deep/leaves.sse", "outside-link")], given
    assert discover(["tree/deep/leaves.sse"]).captures == ("tree/deep/leaves.sse",)  # named: always replayed
