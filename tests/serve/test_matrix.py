"""``serve --vary`` and ``serve --matrix -- COMMAND...`` as a user runs them: the page's application
(docs/examples/todo_agent.py, on the real Anthropic SDK) with the empty-input bug is caught under every
meaning-keeping variant and its ``--fixed`` twin passes them all; faults are reported, never failing; a
command that does not exist, exits at once or hangs is one line each, bounded in time."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stream_doctor.serve.variants import variant_names
from tests.serve import apps

#: the loopback server run for each variant of the matrix
pytestmark = [pytest.mark.external]

anthropic = pytest.importorskip("anthropic")
pytest.importorskip("aiohttp")

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = "fixtures/conversations/anthropic_echo_empty_input.yaml"
PAGE = (ROOT / "docs/prove-the-fix.md").read_text(encoding="utf-8")
AGENT = [sys.executable, "-W", "ignore", "docs/examples/todo_agent.py"]
#: seconds a whole matrix run may take (each application run is bounded by --timeout)
BOUND = 600


def matrix(*arguments: str, command: list[str] = AGENT, bound: float = BOUND) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "stream_doctor", "serve", CAPTURE, "--matrix", *arguments, "--", *command],
        capture_output=True,
        text=True,
        env=environment,
        cwd=ROOT,
        timeout=bound,
    )


def rows(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    return {row["variant"]: row for row in json.loads(done.stdout)["rows"]}


def _vary(*names: str) -> list[str]:
    return [word for name in names for word in ("--vary", name)]


@pytest.mark.slow  # the SDK's agent run in a child process per variant (10 s of CPU)
def test_the_buggy_agent_is_caught_under_each_meaning_keeping_variant_and_a_fault_does_not_fail(tmp_path: Path) -> None:
    done = matrix(*_vary("byte-per-read", "crlf", "cut-after-event"), "--format", "json", "--out", str(tmp_path))
    assert done.returncode == 1, done.stderr
    table = rows(done)
    for name in ("byte-per-read", "crlf"):
        (call,) = table[name]["calls"]
        assert (call["name"], call["outcome"], call["rule"], table[name]["failing"]) == (
            "write_file",
            "another-input",
            "SD608",
            True,
        )
        assert "ran write_file with {}" in Path(table[name]["output"]).read_text()  # its output, kept
    cut = table["cut-after-event"]
    assert (cut["kind"], cut["failing"], cut["calls"][0]["outcome"]) == ("fault", False, "crashed")
    assert cut["exit"] != 0 and "closed the connection" in cut["endings"][0]


@pytest.mark.slow  # the SDK's agent run in a child process for every meaning-keeping variant (25 s of CPU)
def test_the_fixed_twin_passes_every_meaning_keeping_variant(tmp_path: Path) -> None:
    done = matrix(*_vary(*variant_names("meaning")), "--out", str(tmp_path), command=[*AGENT, "--fixed"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "under every meaning-keeping variant the application ran each call as the stream says" in done.stdout
    for name in variant_names("meaning"):
        assert name in done.stdout
    meaning = done.stdout.split("faults:")[0]
    for line in meaning.splitlines():  # docs/prove-the-fix.md shows this run's table
        assert line in PAGE


@pytest.mark.slow  # the SDK's agent run in a child process per variant (9 s of CPU)
def test_the_markdown_table_for_a_ci_summary(tmp_path: Path) -> None:
    """The page's Markdown table, run again: the same rows, the capture's text escaped."""
    done = matrix(*_vary("byte-per-read", "crlf", "cut-after-event"), "--format", "markdown", "--out", str(tmp_path))
    assert done.returncode == 1
    assert (
        "| ❌ | crlf | exit 0 | turn 1 write\\_file toolu\\_016VrNJIy6Bc1b7mC4BgQKrx: ran it with another input (SD608) |"
        in (done.stdout)
    )
    assert "\n".join(f"  {line}" if line else "" for line in done.stdout.splitlines()) in PAGE


def test_a_command_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    done = matrix("--out", str(tmp_path), command=["no-such-program-stream-doctor"], bound=60)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.strip().splitlines() == [
        "stream-doctor: error: --matrix: no command 'no-such-program-stream-doctor' found (give a program on PATH or a path to one)"
    ]


def test_a_command_that_exits_at_once_never_ran_the_call(tmp_path: Path) -> None:
    done = matrix(*_vary("one-read"), "--out", str(tmp_path), command=[sys.executable, "-c", "raise SystemExit(3)"])
    assert done.returncode == 1, done.stderr
    assert (
        "exit 3" in done.stdout
        and "write_file toolu_016VrNJIy6Bc1b7mC4BgQKrx: crashed without sending it back" in done.stdout
    )


def test_a_command_that_hangs_is_killed_at_the_time_bound(tmp_path: Path) -> None:
    hang = [sys.executable, "-c", "import time; time.sleep(600)"]
    done = matrix(*_vary("one-read"), "--timeout", "2", "--out", str(tmp_path), command=hang, bound=60)
    assert done.returncode == 1, done.stderr
    assert "one-read" in done.stdout and "killed at the time bound" in done.stdout


def test_an_unknown_variant_is_refused_as_the_command_line_is_read() -> None:
    done = matrix("--vary", "byte-per-reed", command=["true"], bound=60)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "byte-per-read" in done.stderr


def test_help_lists_each_variant_with_its_sentence() -> None:
    from stream_doctor.serve.variants import VARIANTS

    done = subprocess.run(
        [sys.executable, "-m", "stream_doctor", "serve", "--help"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "400"},
        cwd=ROOT,
        timeout=60,
    )

    def flat(text: str) -> str:  # the help's wrapping undone (it breaks lines after a hyphen too)
        return re.sub(r"-\s+", "-", " ".join(text.split()))

    for variant in VARIANTS.values():
        assert flat(f"{variant.name} ({variant.kind}): {variant.description}") in flat(done.stdout)


def test_serve_under_one_variant(tmp_path: Path) -> None:
    """``--vary byte-per-read`` serves every byte in a read of its own (the server's log counts them), and the
    SDK's stream helper still hands the tool what the stream says: no verdict, exit 0."""
    from stream_doctor.serve.load import load_script
    from tests.serve.test_cli import exports, start

    process = start(CAPTURE, "--port", "0", "--out", str(tmp_path), "--vary", "byte-per-read")
    try:
        lines = exports(process)
        client = anthropic.Anthropic(base_url=lines["ANTHROPIC_BASE_URL"], api_key="x", max_retries=0)
        request = load_script(str(ROOT / CAPTURE)).turns[0].request
        assert request is not None
        apps.anthropic_correct(client, request)
    finally:
        process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=60)
    body = load_script(str(ROOT / CAPTURE)).turns[0].recorded.body
    assert f"served after {len(body)} of {len(body)} reads" in err
    assert process.returncode == 0 and "clean: the application sent back what it was served" in out


DEMO = [sys.executable, "-W", "ignore"]
#: the demo agents of tests/serve/apps on the real Python SDKs, each with the capture its first turn asks for
AGENTS = {
    "anthropic_agent.py": "fixtures/anthropic/parallel_calls.sse",
    "openai_agent.py": "fixtures/openai/parallel_calls.sse",
}


@pytest.mark.slow  # each demo agent on its SDK in a child process, eight times (25 s of CPU)
@pytest.mark.parametrize("bug", [None, "start-placeholder", "index-keyed", "parse-each-fragment"])
@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_the_demo_agents_buggy_caught_fixed_passing(agent: str, bug: str | None, tmp_path: Path) -> None:
    """Each buggy agent's row names the variant and what it did (another input); its fixed twin's calls all ran
    with the right input. (The agents' last request goes past the one-turn capture, so each exits 1 there.)"""
    flags = ["--bug", bug] if bug else []
    command = [*DEMO, f"tests/serve/apps/{agent}", "--tool", "get_weather", "--tool", "get_time", *flags]
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "stream_doctor", "serve", AGENTS[agent], "--matrix", "--vary", "byte-per-read"]
        + ["--format", "json", "--out", str(tmp_path), "--", *command],
        capture_output=True,
        text=True,
        env=environment,
        cwd=ROOT,
        timeout=BOUND,
    )
    row = rows(done)["byte-per-read"]
    outcomes = {call["outcome"] for call in row["calls"]}
    if bug is None:
        assert (done.returncode, outcomes, len(row["calls"])) == (0, {"right-input"}, 2), done.stdout
    else:
        assert (done.returncode, row["failing"]) == (1, True), done.stdout
        assert "another-input" in outcomes


def _demo_matrix(agent: str, flags: list[str], folder: Path, *names: str) -> subprocess.CompletedProcess[str]:
    command = [*DEMO, f"tests/serve/apps/{agent}", "--tool", "get_weather", "--tool", "get_time", *flags]
    return subprocess.run(
        [sys.executable, "-m", "stream_doctor", "serve", AGENTS[agent], "--matrix", *_vary(*names)]
        + ["--format", "json", "--out", str(folder), "--", *command],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        timeout=BOUND,
    )


@pytest.mark.slow  # each demo agent on its SDK in a child process, three variants each (14 s of CPU)
@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_a_call_run_before_the_stream_completed_it_fails_even_under_a_fault(agent: str, tmp_path: Path) -> None:
    """The first-parse agent runs a call once its buffer parses and, when the stream is cut before the call's
    completion, sends its result back: the judge's own verdict (ran-unfinished) says it ran too early, and that
    fails the matrix under the fault. Its fixed twin runs nothing under the same cut and passes (exit 0)."""
    done = _demo_matrix(agent, ["--bug", "first-parse"], tmp_path / "buggy", "cut-before-completion")
    row = rows(done)["cut-before-completion"]
    assert (done.returncode, row["kind"], row["failing"]) == (1, "fault", True), done.stdout + done.stderr
    early = [call for call in row["calls"] if call["outcome"] == "too-early"]
    assert early and all(call["rule"] == "ran-unfinished" and call["turn"] == 1 for call in early)
    assert any("ran it before it was complete" in line for line in row["verdicts"])

    fixed = _demo_matrix(agent, [], tmp_path / "fixed", "cut-before-completion", "byte-per-read")
    table = rows(fixed)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert not table["cut-before-completion"]["failing"]
    assert {call["outcome"] for call in table["cut-before-completion"]["calls"]} == {"crashed"}
    assert {call["outcome"] for call in table["byte-per-read"]["calls"]} == {"right-input"}
