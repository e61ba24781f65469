"""``stream-doctor check --client``: every capture's turns also go through the named client profiles,
their differences (SD801-SD809, tied to the client by name) in every check report format; per capture,
as ``replay --client``, the installed library is run when it imports, else its model says why it answers.

The tests about formats, workers and names use ``--client-mode model`` (no library process per capture);
the installed library's run, and its absence, have their own (a stand-in package first on the library
process's path, as ``tests/clients/test_client_runs.py`` does)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stream_doctor.check.run import MIN_CAPTURES_PER_WORKER
from stream_doctor.cli import app
from stream_doctor.reporters import CHECK_FORMATS
from tests.conftest import ROOT

runner = CliRunner()
#: SD802 for openai-python (its done event fires on the next index); the near miss: no interleaving
INTERLEAVED = "parallel_calls_interleaved.sse"
NEAR_MISS = "parallel_calls.sse"
SAID = "model of openai-python 3.54.0 would take"  # with --client-mode model
RAN = "installed openai 3.54.0 (run) would take"  # by default, the installed library (the clients extra)


@pytest.fixture
def captures(tmp_path: Path) -> Path:
    folder = tmp_path / "captures"
    folder.mkdir()
    for name in (INTERLEAVED, NEAR_MISS):
        shutil.copy(ROOT / "fixtures/openai" / name, folder / name)
    return folder


def run(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["check", *args, "--isolated"], env={"GITHUB_ACTIONS": ""})


def test_without_client_no_client_finding(captures: Path) -> None:
    result = run(str(captures), "--report", "json")
    assert result.exit_code == 0, result.output
    codes = [f["code"] for c in json.loads(result.stdout)["captures"] for f in c["findings"]]
    assert not [code for code in codes if code.startswith("SD8")]


def test_client_findings_in_every_report_format(captures: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    reports = [arg for name in CHECK_FORMATS for arg in ("--report", f"{name}:{out}/{name}.txt")]
    result = run(
        str(captures),
        "--client",
        "openai-python",
        "--client-mode",
        "model",
        "--fail-on",
        "warning",
        "--width",
        "400",
        *reports,
    )
    assert result.exit_code == 1, result.output  # the client's warnings reach --fail-on
    for name in CHECK_FORMATS:
        text = (out / f"{name}.txt").read_text()
        assert "SD802" in text, name
        if name != "statistics":
            assert SAID in text, name  # the finding names the client and its version
    data = json.loads((out / "json.txt").read_text())
    by_path = {Path(c["path"]).name: c for c in data["captures"]}
    assert {f["code"] for f in by_path[INTERLEAVED]["findings"]} == {"SD802"}
    assert by_path[NEAR_MISS]["findings"] == [] and by_path[NEAR_MISS]["failed"] is False
    # each call carries the client's prediction, as in replay's JSON report
    calls = by_path[INTERLEAVED]["report"]["calls"]
    assert calls[0]["extras"]["clients"]["openai-python"]["differences"] == ["early"]


def test_client_warnings_do_not_fail_below_fail_on(captures: Path) -> None:
    result = run(str(captures), "--client", "openai-python", "--client-mode", "model", "--width", "300")
    assert result.exit_code == 0, result.output
    assert "SD802" in result.output and SAID in result.output


@pytest.mark.slow  # the installed library run in a child process per capture
def test_each_capture_is_run_through_the_installed_library(captures: Path) -> None:
    result = run(str(captures), "--client", "openai-python", "--fail-on", "warning", "-r", "json")
    assert result.exit_code == 1, result.output  # the library's own SD802 reaches --fail-on
    by_path = {Path(c["path"]).name: c for c in json.loads(result.stdout)["captures"]}
    (early,) = by_path[INTERLEAVED]["findings"][:1]
    assert early["code"] == "SD802" and early["message"].startswith(RAN)
    assert len(by_path[INTERLEAVED]["findings"]) == 2 and by_path[NEAR_MISS]["findings"] == []
    for capture in by_path.values():
        source = capture["report"]["calls"][0]["extras"]["clients"]["openai-python"]["source"]
        assert (source["mode"], source["label"], source["note"]) == ("run", "installed openai 3.54.0 (run)", None)


def test_a_capture_whose_library_is_missing_is_modelled_and_says_so(
    captures: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in = tmp_path / "stand_in" / "openai"
    stand_in.mkdir(parents=True)
    (stand_in / "__init__.py").write_text("raise ImportError('not installed here')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "stand_in"))  # what the library's process imports
    result = run(str(captures / INTERLEAVED), "--client", "openai-python", "-r", "json")
    (capture,) = json.loads(result.stdout)["captures"]
    assert capture["findings"][0]["message"].startswith(SAID)
    source = capture["report"]["calls"][0]["extras"]["clients"]["openai-python"]["source"]
    assert (source["mode"], source["note"]) == ("model", "the library is not installed: `pip install openai` to run it")


def test_clients_repeatable_commas_and_all(captures: Path) -> None:
    result = run(
        str(captures / INTERLEAVED),
        "--client",
        "openai-python,langchain",
        "--client",
        "all",
        "--client-mode",
        "model",
        "-r",
        "json",
    )
    calls = json.loads(result.stdout)["captures"][0]["report"]["calls"]
    assert {"openai-python", "openai-node", "langchain", "litellm"} <= set(calls[0]["extras"]["clients"])


def test_the_same_with_worker_processes(captures: Path) -> None:
    for copy in range(MIN_CAPTURES_PER_WORKER * 2):  # enough captures for two workers
        shutil.copy(captures / INTERLEAVED, captures / f"copy_{copy:02}.sse")
    one = run(str(captures), "--client", "openai-python", "--client-mode", "model", "-r", "json", "--jobs", "1")
    many = run(str(captures), "--client", "openai-python", "--client-mode", "model", "-r", "json", "--jobs", "2")
    assert one.stdout == many.stdout
    assert json.loads(one.stdout)["summary"]["findings"]["warning"] == 2 * (
        MIN_CAPTURES_PER_WORKER * 2 + 1
    )  # SD802 x2 each


def test_unknown_client_exits_2_with_one_line_and_did_you_mean(captures: Path) -> None:
    result = run(str(captures), "--client", "opnai-python")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("stream-doctor: error: unknown client 'opnai-python'")
    assert "did you mean 'openai-python'" in lines[0]
