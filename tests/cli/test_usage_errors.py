"""A command line stream-doctor cannot take is one line on standard error, with a suggestion, exit 2.

Each case runs as a user runs it, in its own process through the executable's entry point
(``launch.main``, then typer), so what is asserted is everything the terminal shows:
one ``stream-doctor: error: ...`` line and nothing on standard output, never click's usage block.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

ONE = "fixtures/anthropic/one_call.sse"
# the console script's entry point, named as the installed script is (click names the program after argv[0])
ENTRY = "import sys; sys.argv[0] = 'stream-doctor'; from stream_doctor.launch import main; main()"

# (argv, what the line says after "stream-doctor: error: ")
CASES: list[tuple[list[str], str]] = [
    (["replya", ONE], "unknown command 'replya'; did you mean 'replay'? (choose from replay, convert, minimize,"),
    (["frobnicate"], "unknown command 'frobnicate' (choose from replay, convert, minimize, fixture, check, scan,"),
    (["--bogus"], "unknown option '--bogus' (`stream-doctor --help` lists them)"),
    (["replay", "--width", "0", ONE], "--width: 0 is not in the range x>=1 (a whole number, at least 1)"),
    (["replay", ONE, "--width", "wide"], "--width: 'wide' is not a valid int range (a whole number, at least 1)"),
    (["replay", "--bogus", ONE], "unknown option '--bogus' for replay (`stream-doctor replay --help` lists them)"),
    (["replay", ONE, "--fromat", "json"], "unknown option '--fromat' for replay; did you mean '--format'?"),
    (["replay", ONE, "--colour"], "unknown option '--colour' for replay; did you mean '--color'?"),
    (["replay", ONE, "--out", "x.json"], "unknown option '--out' for replay; did you mean '--output-file'?"),
    (["replay"], "missing argument CAPTURE... for replay (usage: stream-doctor replay [OPTIONS] CAPTURE...)"),
    (["replay", ONE, "--format"], "option '--format' requires an argument (see `stream-doctor replay --help`)"),
    (
        ["replay", ONE, "--timeline=yes"],
        "option '--timeline' does not take a value (see `stream-doctor replay --help`)",
    ),
    (["check", "--bogus"], "unknown option '--bogus' for check (`stream-doctor check --help` lists them)"),
    (["check", "--jbos", "2"], "unknown option '--jbos' for check; did you mean '--jobs'?"),
    (["check", "--jobs", "-1"], "--jobs: -1 is not in the range x>=0 (a whole number, at least 0)"),
    (["convert"], "missing argument CAPTURE... for convert (usage: stream-doctor convert [OPTIONS] CAPTURE...)"),
    (["convert", ONE, "--ouptut", "x.jsonl"], "unknown option '--ouptut' for convert; did you mean '--output'?"),
    (["convert", ONE, "--max-frames", "0"], "--max-frames: 0 is not in the range x>=1 (a whole number, at least 1)"),
    (["scan"], "missing argument INPUT... for scan (usage: stream-doctor scan [OPTIONS] INPUT...)"),
    (["record"], "missing option --upstream URL for record (where to forward every request, e.g. https://"),
    (
        ["record", "--upstream", "https://api.example.com", "--out", "captures", "--lisen", "localhost:8080"],
        "unknown option '--lisen' for record; did you mean '--listen'?",
    ),
    (["serve"], "missing argument CAPTURE... for serve (usage: stream-doctor serve [OPTIONS] CAPTURE...)"),
    (["serve", ONE, "--prot", "0"], "unknown option '--prot' for serve; did you mean '--port'?"),
    (["serve", ONE, "--port", "70000"], "--port: 70000 is not in the range 0<=x<=65535"),
    (["clients", "--formt", "json"], "unknown option '--formt' for clients; did you mean '--format'?"),
    (["clients", "-x"], "unknown option '-x' for clients (`stream-doctor clients --help` lists them)"),
    (["rules", "extra"], "unexpected extra argument 'extra' for rules (usage: stream-doctor rules [OPTIONS])"),
    (["explain"], "missing argument CODE for explain (usage: stream-doctor explain [OPTIONS] CODE)"),
    (["explain", "SD101", "SD201"], "unexpected extra argument 'SD201' for explain (usage: stream-doctor explain"),
    # what came from the command line is shown escaped: it moves no cursor and starts no line
    (["re\x1b[2Jplay"], "unknown command 're\\x1b[2Jplay'; did you mean 'replay'?"),
]


def run(argv: list[str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-c", ENTRY, *argv], capture_output=True, cwd=ROOT, check=False)


@pytest.mark.slow  # the CLI started in a child process per case, 30 cases (4.5 s of CPU)
@pytest.mark.parametrize(("argv", "expected"), CASES, ids=[" ".join(argv) for argv, _ in CASES])
def test_a_usage_error_is_one_line_with_a_suggestion(argv: list[str], expected: str) -> None:
    result = run(argv)
    lines = result.stderr.decode("utf-8").splitlines()
    assert (result.returncode, result.stdout) == (2, b""), lines
    assert len(lines) == 1, lines
    assert lines[0].startswith("stream-doctor: error: " + expected), lines[0]


def test_a_suggestion_is_only_made_for_a_close_name() -> None:
    """--bogus shares only its dashes with --jobs (click itself suggests --jobs): no suggestion."""
    line = run(["check", "--bogus"]).stderr.decode("utf-8")
    assert "did you mean" not in line and "--jobs" not in line


def test_no_arguments_still_print_the_help() -> None:
    """The near miss: a bare ``stream-doctor`` is not a mistake to report in one line but a request for help."""
    result = run([])
    assert result.stderr.startswith(b"Usage: stream-doctor [OPTIONS] COMMAND [ARGS]...")  # as click writes it
    assert b"Commands:" in result.stderr and b"stream-doctor: error" not in result.stderr
