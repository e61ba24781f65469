"""The fast path (``cli/fast.py``) and typer give the same answer to every command line.

Its table is generated from the typer app and must be current; each command line below runs
once through the executable's entry point (``launch.main``: the fast path when it understands the
line, else typer) and once through typer alone, in the same process with the same standard
streams, environment and files, and both must write the same bytes and exit with the same code.
"""

from __future__ import annotations

import io
import shutil
import sys
import types
from collections.abc import Callable
from pathlib import Path

import pytest

from stream_doctor.cli import fast, fast_table
from tests.conftest import ROOT

ONE = "fixtures/anthropic/one_call.sse"
BUG = "fixtures/anthropic/empty_input_bug.jsonl"  # SD101: exit 1 unless told otherwise
WORK = "fast-path-work"  # a folder under tmp_path, the test's working directory for configuration files

# (argv after "replay", environment, standard input): the fast path answers these itself
REPLAY_UNDERSTOOD: list[tuple[list[str], dict[str, str], bytes]] = [
    ([ONE], {}, b""),
    ([ONE, ONE], {}, b""),  # several captures (one session): a file named twice is one line on both paths
    ([ONE, BUG], {}, b""),  # … and so is a mix of formats
    ([ONE, "--format", "json"], {}, b""),
    ([ONE, "--format=jsonl"], {}, b""),
    ([ONE, "-f", "json", "--format", "terminal"], {}, b""),  # the last one wins, as in click
    (["--format", "json", ONE], {}, b""),  # options before the argument
    ([ONE, "--format", "jsn"], {}, b""),  # our "did you mean"
    ([ONE, "--call", "1"], {}, b""),
    ([ONE, "--call=9"], {}, b""),  # unknown call: exit 2 listing the calls
    ([ONE, "--timeline", "--max-rows", "2"], {}, b""),
    ([ONE, "--container", "sse"], {}, b""),
    ([ONE, "--input-format", "jsonl"], {}, b""),
    ([ONE, "--container", "nope"], {}, b""),
    ([ONE, "--provider", "anthropic"], {}, b""),
    ([ONE, "--provider", "anthropc"], {}, b""),
    ([ONE, "--tools", "missing-tools.json"], {}, b""),
    ([BUG, "--executed", "1={}", "--executed", "2={}"], {}, b""),
    ([ONE, "--executions", "missing.jsonl"], {}, b""),
    ([ONE, "--client", "nope"], {}, b""),
    ([BUG, "--fail-on", "warning"], {}, b""),
    ([BUG, "--fail-on", "fatal"], {}, b""),
    ([BUG, "--select", "SD2", "--ignore", "SD201", "--extend-select", "SD1"], {}, b""),
    ([BUG, "--select", "SD9"], {}, b""),
    ([BUG, "--per-file-ignores", "fixtures/**:SD101"], {}, b""),
    ([BUG, "--per-file-ignores", "no-codes"], {}, b""),
    ([ONE, "--width", "60", "--color"], {}, b""),
    ([ONE, "--no-color"], {"FORCE_COLOR": "1"}, b""),
    ([ONE], {"FORCE_COLOR": "1"}, b""),
    ([ONE, "--color"], {"NO_COLOR": "1"}, b""),
    ([BUG, "--config", "fast.toml"], {}, b""),
    ([BUG, "--config", "absent.toml"], {}, b""),
    ([BUG, "--isolated"], {}, b""),
    ([BUG, "-q"], {}, b""),
    ([BUG, "--quiet", "--exit-zero"], {}, b""),
    ([ONE, "-o", "out.json", "--format", "json"], {}, b""),
    ([ONE, "--output-file=out.txt"], {}, b""),
    ([ONE, "--output-file", ONE], {}, b""),  # refuses to replace its input
    ([ONE, "--max-bytes", "1K"], {}, b""),
    ([ONE, "--max-bytes", "lots"], {}, b""),
    ([ONE, "--max-frames", "3"], {}, b""),
    ([BUG, "--statistics"], {}, b""),
    ([BUG, "--statistics", "-f", "json"], {}, b""),
    (["-", "--format", "json"], {}, (ROOT / ONE).read_bytes()),
    (["-"], {}, b"not a capture\n"),
    (["no-such-capture.sse"], {}, b""),
    ([ONE, "--call="], {}, b""),
]

# ... and these it hands to typer unchanged
REPLAY_HANDED_ON: list[tuple[list[str], dict[str, str], bytes]] = [
    ([], {}, b""),
    (["--help"], {}, b""),
    ([ONE, "-h"], {}, b""),
    ([ONE, "--width", "0"], {}, b""),
    ([ONE, "--width", "wide"], {}, b""),
    ([ONE, "--max-rows", "-1"], {}, b""),
    ([ONE, "--colour"], {}, b""),
    (["--bogus", ONE], {}, b""),  # usage errors: one line on both paths (cli/usage.py)
    ([ONE, "--fromat", "json"], {}, b""),
    ([ONE, "--format"], {}, b""),
    ([ONE, "-qf", "json"], {}, b""),
    (["--", ONE], {}, b""),
    ([ONE, "--timeline=yes"], {}, b""),
    ([ONE, "-f=json"], {}, b""),
    (
        [ONE],
        {"_STREAM_DOCTOR_COMPLETE": "bash_complete", "COMP_WORDS": "stream-doctor replay --fo", "COMP_CWORD": "2"},
        b"",
    ),
]


# (argv after "check", environment, standard input), in a copy of fixtures/check-tree named "tree"
CHECK_UNDERSTOOD: list[tuple[list[str], dict[str, str], bytes]] = [
    (["tree"], {}, b""),
    (["tree", "--report", "json"], {}, b""),
    (["tree/clean", "tree/bugs", "-r", "junit"], {}, b""),
    (["tree", "--report", "nope"], {}, b""),
    (["tree", "--select", "SD3", "--ignore", "SD301", "--extend-select", "SD2"], {}, b""),
    (["tree", "--per-file-ignores", "bugs/**:SD301"], {}, b""),
    (["tree", "--fail-on", "error"], {}, b""),
    (["tree", "--fail-on", "fatal"], {}, b""),
    (["tree/clean", "-j", "1"], {}, b""),
    (["tree/clean", "--jobs=1", "--provider", "anthropic"], {}, b""),
    (["tree", "--container", "sse"], {}, b""),
    (["tree", "--config", "tree/stream-doctor.toml"], {}, b""),
    (["tree", "--config", "absent.toml"], {}, b""),
    (["tree", "--isolated", "--no-respect-gitignore"], {}, b""),
    (["tree", "--respect-gitignore"], {}, b""),
    (["tree/clean", "--client", "nope"], {}, b""),
    (["tree", "--update-expectations"], {}, b""),
    (["tree", "--width", "70", "--color"], {}, b""),
    (["tree", "--no-color"], {"FORCE_COLOR": "1"}, b""),
    (["tree"], {"GITHUB_ACTIONS": "true"}, b""),
    (["tree", "--max-rows", "1", "--max-frames", "5"], {}, b""),
    (["tree", "--max-bytes", "1K"], {}, b""),
    (["tree", "-q"], {}, b""),
    (["tree", "--quiet", "--exit-zero"], {}, b""),
    (["tree", "-o", "out.txt"], {}, b""),
    (["tree", "--output-file=out.json", "--report", "json"], {}, b""),
    (["tree", "--statistics"], {}, b""),
    (["-"], {}, b"tree/clean/one_call.sse\ntree/bugs\n"),
    ([], {}, b""),
    (["no-such-folder"], {}, b""),
]

CHECK_HANDED_ON: list[tuple[list[str], dict[str, str], bytes]] = [
    (["--help"], {}, b""),
    (["tree", "--jobs", "-1"], {}, b""),
    (["tree", "-j", "many"], {}, b""),
    (["tree", "--bogus"], {}, b""),
    (["tree", "--jbos", "2"], {}, b""),
    (["tree", "-qr", "json"], {}, b""),
]

UNDERSTOOD = [(["replay", *argv], env, stdin) for argv, env, stdin in REPLAY_UNDERSTOOD] + [
    (["check", *argv], env, stdin) for argv, env, stdin in CHECK_UNDERSTOOD
]
HANDED_ON = [(["replay", *argv], env, stdin) for argv, env, stdin in REPLAY_HANDED_ON] + [
    (["check", *argv], env, stdin) for argv, env, stdin in CHECK_HANDED_ON
]


def test_the_table_is_generated_from_the_typer_app() -> None:
    assert fast_table.TABLE.read_text(encoding="utf-8") == fast_table.source(), (
        "the typer options changed: run python -m stream_doctor.cli.fast_table"
    )


def test_every_option_of_the_table_is_tried() -> None:
    from stream_doctor.cli._fast_argv import COMMANDS

    for command in fast_table.FAST_COMMANDS:
        tried = {word.partition("=")[0] for argv, _, _ in UNDERSTOOD if argv[0] == command for word in argv}
        assert set(COMMANDS[command]["options"]) <= tried, command


@pytest.mark.parametrize(("argv", "env", "stdin"), UNDERSTOOD, ids=lambda value: repr(value)[:60])
def test_the_fast_path_answers_as_typer_does(
    argv: list[str], env: dict[str, str], stdin: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert fast.parse(argv) is not None
    assert_same(argv, env, stdin, tmp_path, monkeypatch)


@pytest.mark.parametrize(("argv", "env", "stdin"), HANDED_ON, ids=lambda value: repr(value)[:60])
def test_what_the_fast_path_does_not_understand_goes_to_typer(
    argv: list[str], env: dict[str, str], stdin: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert fast.parse(argv) is None
    assert_same(argv, env, stdin, tmp_path, monkeypatch)


def test_help_is_typers_on_a_terminal_80_columns_or_wider(monkeypatch: pytest.MonkeyPatch) -> None:
    from stream_doctor.cli._fast_argv import HELP

    assert fast_table.top_help(200) == fast_table.top_help(80) == HELP
    script = types.ModuleType("__main__")  # the console script: run as a file, not with -m
    script.__package__ = None
    monkeypatch.setitem(sys.modules, "__main__", script)
    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/stream-doctor", "--help"])
    monkeypatch.setenv("COLUMNS", "120")
    assert fast.help_text() == HELP
    monkeypatch.setenv("COLUMNS", "79")  # click wraps narrower: typer answers
    assert fast.help_text() is None
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setattr(sys, "argv", ["sd", "--help"])  # typer would say "Usage: sd"
    assert fast.help_text() is None
    script.__package__ = "stream_doctor"  # python -m stream_doctor: typer says "Usage: python -m stream_doctor"
    monkeypatch.setattr(sys, "argv", ["/x/stream-doctor", "--help"])
    assert fast.help_text() is None


def test_other_commands_go_to_typer() -> None:
    assert fast.parse(["convert", ONE]) is None
    assert fast.parse(["--version"]) is None
    assert fast.parse([]) is None


def assert_same(
    argv: list[str], env: dict[str, str], stdin: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each path runs in its own copy of the same files; what they print, exit with and change must agree."""
    from stream_doctor import launch
    from stream_doctor.cli import main as typer_main

    for name in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "GITHUB_ACTIONS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    answers = []
    for entry, folder in ((launch.main, "fast"), (typer_main, "typer")):
        work = tmp_path / folder / WORK
        (work / "fixtures" / "anthropic").mkdir(parents=True)
        for name in (ONE, BUG):
            shutil.copy(ROOT / name, work / name)
        shutil.copytree(ROOT / "fixtures" / "check-tree", work / "tree")
        (work / "fast.toml").write_text('ignore = ["SD101"]\n')
        monkeypatch.chdir(work)
        answers.append(_run(entry, argv, stdin, work, monkeypatch))
    assert answers[0] == answers[1]


def _files(work: Path) -> dict[str, bytes]:
    return {str(path.relative_to(work)): path.read_bytes() for path in sorted(work.rglob("*")) if path.is_file()}


def _run(
    entry: Callable[[], None], argv: list[str], stdin: bytes, work: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[bytes, bytes, object, dict[str, bytes]]:
    """Standard output, standard error, exit code and the files written or changed, of one run of ``entry``."""
    before = _files(work)
    out, err = io.BytesIO(), io.BytesIO()
    monkeypatch.setattr(sys, "argv", ["stream-doctor", *argv])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(out, encoding="utf-8", write_through=True))
    monkeypatch.setattr(sys, "stderr", io.TextIOWrapper(err, encoding="utf-8", write_through=True))
    try:
        entry()
        code: object = 0
    except SystemExit as exit_:
        code = exit_.code
    sys.stdout.flush()
    sys.stderr.flush()
    after = _files(work)
    changed = {name: data for name, data in after.items() if before.get(name) != data}
    return out.getvalue(), err.getvalue(), code, changed


@pytest.mark.parametrize(
    "argv",
    [
        [ONE, "--format", "json", "--timeline"],
        [BUG, "-q"],
        [BUG, "--statistics"],
        [ONE, "--format", "jsn"],
        [BUG, "--width", "0"],
    ],
    ids=repr,
)
def test_the_installed_command_answers_as_typer_does(argv: list[str]) -> None:
    """As a user runs it: the console script and ``python -m stream_doctor`` (which leave without
    the interpreter's teardown, ``fast.leave``) write and exit as typer does."""
    import subprocess

    script = shutil.which("stream-doctor", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the stream-doctor script is not installed beside this Python")
    typer_main = "import sys; sys.argv[0] = 'stream-doctor'; from stream_doctor.cli import main; main()"
    answers = [
        subprocess.run(command, capture_output=True, cwd=ROOT, check=False)
        for command in (
            [script, "replay", *argv],
            [sys.executable, "-m", "stream_doctor", "replay", *argv],
            [sys.executable, "-c", typer_main, "replay", *argv],
        )
    ]
    expected = (answers[2].stdout, answers[2].stderr, answers[2].returncode)
    assert (answers[0].stdout, answers[0].stderr, answers[0].returncode) == expected
    if argv[-1] != "0":  # a usage error names the program: "python -m stream_doctor"
        assert (answers[1].stdout, answers[1].stderr, answers[1].returncode) == expected
