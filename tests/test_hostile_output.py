"""Capture content cannot hijack an output: no raw control character, no line that starts a workflow command.

The capture (tests/hostile_capture.py) carries ESC/CSI, OSC, C1, NEL, U+2028/U+2029, CR and
``::add-mask::`` in tool names, ids, arguments and event types; it goes through every format of
``replay`` and ``check``, coloured and not, with ``GITHUB_ACTIONS=true`` where Actions reads it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stream_doctor.cli import app
from stream_doctor.reporters import CHECK_FORMATS
from tests import hostile_capture

runner = CliRunner()
# Everything a terminal or a log reader may act on; \n ends our own lines, \t is harmless.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
COMMAND_LINE = re.compile(r"^\s*(::|##\[)", re.MULTILINE)
ANNOTATION = re.compile(r"::(error|warning|notice) file=[^:]*::")  # the github reporter's own lines


@pytest.fixture
def capture(tmp_path: Path) -> Path:
    return hostile_capture.write(tmp_path / "hostile.sse")


def _assert_safe(text: str, what: str, colour: bool = False) -> None:
    stripped = re.sub(r"\x1b\[[0-9;]*m", "", text) if colour else text  # our own colours, SGR only
    raw = RAW_CONTROL.search(stripped)
    assert raw is None, (
        f"{what}: raw {raw.group()!r} at {raw.start()}: {stripped[max(0, raw.start() - 40) : raw.end() + 40]!r}"
    )
    line = COMMAND_LINE.search(stripped)
    assert line is None, f"{what}: a line starts a workflow command: {stripped[line.start() : line.start() + 60]!r}"


def _run(*args: str, github: bool = False):  # type: ignore[no-untyped-def]
    result = runner.invoke(app, list(args), env={"GITHUB_ACTIONS": "true" if github else ""})
    assert result.exit_code in (0, 1), result.output
    return result.output


@pytest.mark.parametrize("colour", ["--no-color", "--color"])
def test_replay_terminal_report(capture: Path, colour: str) -> None:
    for extra in ((), ("--timeline",), ("--call", "1"), ("--call", "2")):
        out = _run("replay", str(capture), colour, "--width", "100", *extra)
        _assert_safe(out, f"replay {colour} {' '.join(extra)}", colour=colour == "--color")
        assert "search" in out  # the call is still shown, with its tricks made visible
    assert "\\x1b[2J" in out and "\\u2028" in out and "\\x85" in out and "\\x9b31m" in out


def test_replay_json_report_is_safe_to_print_and_parses_to_the_same_data(capture: Path) -> None:
    for extra in ((), ("--call", "1")):
        out = _run("replay", str(capture), "--format", "json", *extra)
        _assert_safe(out, "replay --format json")
        data = json.loads(out)
        assert data["calls"][0]["name"] == hostile_capture.NAME  # escaped in the bytes, not in the data
        assert data["calls"][0]["id"] == hostile_capture.CALL_ID


@pytest.mark.parametrize("name", sorted(CHECK_FORMATS))
def test_every_check_report(capture: Path, tmp_path: Path, name: str) -> None:
    out = _run("check", str(capture), "--report", name, "--width", "100", "--no-color", github=True)
    _assert_safe_report(name, out)
    written = tmp_path / f"report.{name}"
    _run("check", str(capture), "--report", f"{name}:{written}", "--no-color")
    _assert_safe_report(name, written.read_text(encoding="utf-8"))


def _assert_safe_report(name: str, out: str) -> None:
    """The report safe, and the annotations check adds under Actions (ours) safe in their messages."""
    report, annotations = [], []
    for line in out.split("\n"):
        (annotations if ANNOTATION.match(line) else report).append(line)
    _assert_safe("\n".join(report), f"check --report {name}")
    _assert_safe("\n".join(line.split("::", 2)[2] for line in annotations), "github annotations (messages)")
    if name == "github":
        assert annotations and not "".join(report).strip(), out
        assert "::add-mask::" in out  # shown, inside a message, never at a line's start


def test_check_terminal_under_github_actions_adds_safe_annotations(capture: Path) -> None:
    out = _run("check", str(capture), "--width", "80", "--no-color", github=True)
    assert ANNOTATION.search(out), out
    _assert_safe_report("terminal", out)


@pytest.mark.parametrize("args", [("--no-color",), ("--color",), ("--color", "--call", "1")])
def test_markup_and_emoji_codes_in_a_capture_stay_literal(tmp_path: Path, args: tuple[str, ...]) -> None:
    text = hostile_capture.write(tmp_path / "markup.sse").read_text(encoding="utf-8")
    (tmp_path / "markup.sse").write_text(text.replace("search", "[bold red]search[/]:warning:"), encoding="utf-8")
    out = _run("replay", str(tmp_path / "markup.sse"), *args, "--width", "200")
    assert "[bold red]search[/]:warning:" in out and "\u26a0" not in out  # rich made :warning: an emoji
    assert "::warning::x" in out  # the call id's workflow command, shown (not at a line's start)
