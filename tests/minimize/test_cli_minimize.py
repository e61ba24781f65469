"""``stream-doctor minimize`` and ``stream-doctor fixture`` as a user runs them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import stream_doctor
from benchmarks.sessions import SECRET, USER_MARKER, session
from stream_doctor.cli import app
from tests.conftest import ROOT

runner = CliRunner()
EMPTY_INPUT = "fixtures/anthropic/empty_input_bug.jsonl"


def test_minimize_writes_the_capture_and_one_summary_line(tmp_path: Path) -> None:
    out = tmp_path / "small.jsonl"
    result = runner.invoke(app, ["minimize", EMPTY_INPUT, "--keep", "SD102", "-o", str(out)])
    assert result.exit_code == 0, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"{EMPTY_INPUT} -> {out}: 4,238 -> ")
    assert "19 -> " in line and "kept SD102" in line
    assert re.search(r"; \d+\.\d s, \d+ replays(;|$)", line), line  # the time and the replays it took
    with stream_doctor.replay(out.read_bytes()) as small:
        assert "SD102" in small.codes
    assert len(out.read_bytes()) < 4238


def test_minimize_says_when_the_kept_code_does_not_fire_and_what_does(tmp_path: Path) -> None:
    out = tmp_path / "small.jsonl"
    result = runner.invoke(app, ["minimize", EMPTY_INPUT, "--keep", "SD301", "-o", str(out)])
    assert result.exit_code == 2
    assert result.stderr == (f"stream-doctor: error: {EMPTY_INPUT}: SD301 does not fire (it shows: SD102, SD705)\n")
    assert not out.exists()


def test_minimize_errors_are_one_line(tmp_path: Path) -> None:
    for args, expected in (
        (["minimize", "missing.sse", "--keep", "SD102", "-o", str(tmp_path / "o")], "missing.sse: no such file"),
        (["minimize", EMPTY_INPUT, "--keep", "SD1", "-o", str(tmp_path / "o")], "--keep SD1: name whole rule codes"),
        (["minimize", EMPTY_INPUT, "--keep", "SD102", "--call", "9", "-o", str(tmp_path / "o")], "no call '9'"),
        (["minimize", EMPTY_INPUT, "--keep", "SD102", "-o", EMPTY_INPUT], "input"),
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, args
        assert len(result.stderr.splitlines()) == 1 and expected in result.stderr, result.stderr


def test_minimize_redact_says_what_it_replaced(tmp_path: Path) -> None:
    capture = tmp_path / "session.jsonl"
    capture.write_bytes(session("anthropic", 6, broken=4, personal=True, words=8))
    out = tmp_path / "small.jsonl"
    result = runner.invoke(
        app, ["minimize", str(capture), "-k", "SD102", "-o", str(out), "--redact", "--max-seconds", "0"]
    )
    assert result.exit_code == 0, result.output
    assert "stopped at --max-seconds" in result.stderr and "replaced " in result.stderr and "user text" in result.stderr
    text = out.read_text()
    assert USER_MARKER not in text and SECRET not in text


@pytest.mark.slow  # the CLI and the written test run in child processes (9 s of CPU)
def test_fixture_writes_a_redacted_capture_and_a_test_that_fails_while_it_shows_the_bug(tmp_path: Path) -> None:
    capture = tmp_path / "production.jsonl"
    capture.write_bytes(session("anthropic", 8, broken=5, personal=True, words=8))
    fixture = tmp_path / "tests" / "fixtures" / "empty_input.jsonl"
    fixture.parent.mkdir(parents=True)
    result = runner.invoke(app, ["fixture", str(capture), "--keep", "SD102", "-o", str(fixture)])
    assert result.exit_code == 0, result.output
    test = fixture.parent / "test_empty_input.py"
    assert f"wrote {test}" in result.stderr
    assert USER_MARKER not in fixture.read_text() and SECRET not in fixture.read_text()
    source = test.read_text()
    assert "stream_doctor.assert_clean(CAPTURE, fail_on='error')" in source  # a literal ast.unparse wrote

    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1, run.stdout  # fails today, naming the finding
    assert "SD102" in run.stdout and "1 failed" in run.stdout

    # the fixed application, recorded again: the same scenario with no turn broken
    fixture.write_bytes(session("anthropic", 2, personal=True, words=8))
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout


def test_fixture_to_standard_output_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # before: it wrote a file named "-" and a test_capture.py that read it
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["fixture", str(ROOT / EMPTY_INPUT), "--keep", "SD102", "-o", "-"])
    assert result.exit_code == 2 and result.stderr == (
        "stream-doctor: error: -o -: fixture writes a file and its test beside it; name the file "
        "(tests/fixtures/NAME.jsonl)\n"
    )
    assert list(tmp_path.iterdir()) == []
    result = runner.invoke(app, ["fixture", str(ROOT / EMPTY_INPUT), "--keep", "SD102", "-o", "bug.jsonl"])
    assert result.exit_code == 0 and sorted(p.name for p in tmp_path.iterdir()) == ["bug.jsonl", "test_bug.py"]
