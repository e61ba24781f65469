"""Options are strict and predictable, as in ruff: typos exit 2 with a suggestion, selectors by specificity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stream_doctor.cli import app
from stream_doctor.config.selection import enabled
from tests.conftest import ROOT

runner = CliRunner()
CUT = "fixtures/anthropic/stream_cut_mid_arguments.sse"  # SD301 (abandoned call) and SD303
EMPTY_INPUT = "fixtures/anthropic/empty_input_bug.jsonl"  # SD705 (info) and SD102 (error)
CLEAN = "fixtures/anthropic/one_call.sse"


def run(*args: str, stdin: str | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), input=stdin, env={"GITHUB_ACTIONS": ""})


def error_of(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.output
    return result.output


def codes(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [f["code"] for f in json.loads(result.stdout)["findings"]]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--select", "SD30l"], "no rule code is or starts with 'SD30L'; did you mean 'SD30"),
        (["--ignore", "SD9999"], "did you mean 'SD900'?"),
        (["--extend-select", "XX1"], "--extend-select XX1: no rule code"),
        (["--provider", "antropic"], "unknown provider 'antropic'; did you mean 'anthropic'?"),
        (["--provider", "OpenAI"], "did you mean 'openai'?"),
        (["--format", "jsno"], "--format: unknown format 'jsno'; did you mean 'json'?"),
        (["--fail-on", "warn"], "--fail-on: unknown severity 'warn'; did you mean 'warning'?"),
        (["--container", "ssse"], "unknown container 'ssse'; did you mean 'sse'?"),
        (["--per-file-ignores", "SD001"], "expected PATTERN:CODES"),
        (["--per-file-ignores", "*.sse:SD0x"], "per-file-ignores *.sse SD0X: no rule code"),
    ],
)
def test_replay_refuses_unknown_names_with_a_suggestion(args: list[str], expected: str) -> None:
    assert expected in error_of(run("replay", CLEAN, *args))


@pytest.mark.parametrize(
    "args",
    [
        ["--select", "SD1", "--ignore", "SD1"],
        ["--select", "SD102", "--ignore", "SD102"],
    ],
)
def test_a_selection_that_matches_no_rule_is_an_error(args: list[str]) -> None:
    assert "the selection matches no rule" in error_of(run("replay", CLEAN, *args))
    assert "the selection matches no rule" in error_of(run("check", CLEAN, *args))


def test_the_more_specific_selector_wins() -> None:
    select, ignore = ["SD3", "SD301"], ["SD30"]
    assert enabled("SD301", select, ignore)  # SD301 is more specific than SD30
    assert not enabled("SD303", select, ignore)  # SD30 is more specific than SD3
    assert enabled("SD310", select, ignore)  # a code SD3 selects and SD30 does not ignore
    assert not enabled("SD201", select, ignore)  # not selected at all
    assert not enabled("SD301", ["SD301"], ["SD301"])  # equally specific: ignore wins
    assert enabled("SD301", ["ALL"], ["SD2"]) and not enabled("SD201", ["ALL"], ["SD2"])
    result = run("replay", CUT, "-f", "json", "--select", "SD3", "--ignore", "SD30", "--select", "SD301")
    assert codes(result) == ["SD301"]
    assert codes(run("replay", CUT, "-f", "json", "--select", "SD3,SD2", "--ignore", "SD30")) == []
    assert codes(run("replay", CUT, "-f", "json", "--select", "SD3", "--ignore", "SD302")) == ["SD301", "SD303"]


def test_extend_select_adds_to_the_selection() -> None:
    assert codes(run("replay", EMPTY_INPUT, "-f", "json", "--select", "SD7")) == ["SD705"]
    both = run("replay", EMPTY_INPUT, "-f", "json", "--select", "SD7", "--extend-select", "SD102")
    assert codes(both) == ["SD705", "SD102"]


def test_per_file_ignores_apply_to_matching_paths_only() -> None:
    ignored = run("replay", EMPTY_INPUT, "-f", "json", "--per-file-ignores", "fixtures/anthropic/*.jsonl:SD1")
    assert codes(ignored) == ["SD705"] and ignored.exit_code == 0
    by_name = run("replay", EMPTY_INPUT, "-f", "json", "--per-file-ignores", "*.jsonl:SD102,SD705")
    assert codes(by_name) == []
    elsewhere = run("replay", EMPTY_INPUT, "-f", "json", "--per-file-ignores", "fixtures/openai/*:SD1")
    assert codes(elsewhere) == ["SD705", "SD102"]


@pytest.mark.parametrize("value", ["0", "-3"])
def test_width_must_be_positive(value: str) -> None:
    assert "--width" in error_of(run("replay", CLEAN, "--width", value))
    assert "--width" in error_of(run("check", CLEAN, "--width", value))


def test_short_help_and_version() -> None:
    assert run("-h").exit_code == 0 and "Usage: stream-doctor" in run("-h").output
    assert "--install-completion" in run("--help").output  # shell completion
    assert run("replay", "-h").exit_code == 0 and "--extend-select" in run("replay", "-h").output
    assert run("-V").output.startswith("stream-doctor ")


def test_quiet_prints_nothing_and_keeps_the_exit_code() -> None:
    result = run("replay", EMPTY_INPUT, "--quiet")
    assert result.exit_code == 1 and result.stdout == ""
    assert run("check", CLEAN, "-q").stdout == ""


def test_exit_zero_keeps_the_report_and_exits_0() -> None:
    result = run("replay", EMPTY_INPUT, "--exit-zero", "--width", "120")
    assert result.exit_code == 0 and "SD102" in result.stdout
    assert run("replay", "fixtures/nonesuch.sse", "--exit-zero").exit_code == 2  # could not run is still 2


def test_output_file_receives_the_report(tmp_path: Path) -> None:
    target = tmp_path / "out" / "report.json"
    result = run("replay", EMPTY_INPUT, "-f", "json", "--output-file", str(target))
    assert result.exit_code == 1 and result.stdout == ""
    assert [f["code"] for f in json.loads(target.read_text())["findings"]] == ["SD705", "SD102"]
    text = tmp_path / "check.txt"
    assert run("check", CLEAN, "-o", str(text)).stdout == ""
    assert "1 capture" in text.read_text()


def test_check_reads_paths_from_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = run("check", "-", "--report", "json", stdin=f"{CLEAN}\n\n{EMPTY_INPUT}\n")
    assert result.exit_code == 1, result.output
    checked = sorted(c["path"] for c in json.loads(result.stdout)["captures"])
    assert checked == sorted([CLEAN, EMPTY_INPUT])


def test_the_engine_refuses_an_unknown_forced_provider_as_the_command_line_does() -> None:
    # Options built without the resolver (an internal caller) reach the engine unchecked: the engine
    # says the same sentence as --provider and the API, adapters in the registry's order, not sorted.
    from stream_doctor.engine.pipeline import replay
    from stream_doctor.engine.stages import RunError
    from stream_doctor.providers import ADAPTERS
    from stream_doctor.values.options import Options

    with pytest.raises(RunError) as refused:
        replay(str(ROOT / CLEAN), Options(provider="antropic"))
    assert refused.value.message == (
        f"unknown provider 'antropic'; did you mean 'anthropic'? (choose from {', '.join(ADAPTERS)})"
    )
    assert replay(str(ROOT / CLEAN), Options(provider="anthropic")).codes == ()  # near miss: a known name
