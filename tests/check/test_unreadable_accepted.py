"""An unreadable capture may be accepted (its expectations declare SD000: a fixture kept broken on
purpose), but never hidden: every check report says so in its summary, and ``--update-expectations``
says when it accepted one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from stream_doctor.check.result import CheckResult
from stream_doctor.reporters import CHECK_FORMATS, RenderOptions
from tests.check.conftest import TREE, tree_result
from tests.check.test_cli_check import run

ONE = "1 capture unreadable (accepted by its expectations)"


def rendered(result: CheckResult, name: str) -> str:
    module = CHECK_FORMATS[name]
    return str(module.render(result, RenderOptions(width=200)))


def test_the_accepted_capture_passes_and_is_counted(accepted_result: CheckResult) -> None:
    assert not accepted_result.failed
    assert [c.path for c in accepted_result.accepted_unreadable] == ["broken/truncated.sse.gz"]
    assert accepted_result.unreadable_accepted_words == ONE


@pytest.mark.parametrize("name", sorted(CHECK_FORMATS))
def test_every_check_report_says_an_accepted_capture_is_unreadable(name: str, accepted_result: CheckResult) -> None:
    text = rendered(accepted_result, name)
    if name in ("json", "jsonl"):
        summaries = [json.loads(line) for line in text.splitlines()] if name == "jsonl" else [json.loads(text)]
        assert summaries[-1]["summary"]["unreadable_accepted"] == 1
    else:
        assert ONE in text or ("broken/truncated.sse.gz" in text and "accepted by its expectations" in text), text


@pytest.mark.parametrize("name", sorted(CHECK_FORMATS))
def test_no_report_says_so_when_the_unreadable_capture_fails(name: str) -> None:
    result = tree_result()  # its cut gzip has no expectation: it fails, and is said as a failure
    assert result.unreadable == 1 and not result.accepted_unreadable
    assert "accepted by its expectations" not in rendered(result, name)


def test_the_terminal_summary_counts_the_accepted_capture_apart_from_the_failed(accepted_result: CheckResult) -> None:
    summary = rendered(accepted_result, "terminal").strip().splitlines()[-1]
    assert summary == f"2 captures: 2 passed, 0 failed, {ONE}, 1 file skipped (not captures): passed"


def test_github_annotates_the_accepted_capture(accepted_result: CheckResult) -> None:
    (line,) = rendered(accepted_result, "github").splitlines()
    assert line.startswith("::warning file=broken/truncated.sse.gz,title=SD000 capture-unreadable (accepted")


def test_sarif_notes_the_accepted_capture_on_the_run(accepted_result: CheckResult) -> None:
    run = json.loads(rendered(accepted_result, "sarif"))["runs"][0]
    assert run["results"] == []
    (note,) = run["invocations"][0]["toolExecutionNotifications"]
    assert note["descriptor"] == {"id": "SD000"} and note["level"] == "warning"
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "broken/truncated.sse.gz"


def test_junit_lists_the_accepted_capture_in_the_suites_properties(accepted_result: CheckResult) -> None:
    text = rendered(accepted_result, "junit")
    assert f'<property name="summary" value="{ONE}" />' in text
    assert '<property name="unreadable-accepted" value="broken/truncated.sse.gz" />' in text


def test_update_expectations_says_which_unreadable_capture_it_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(TREE / "broken", tmp_path / "broken")
    monkeypatch.chdir(tmp_path)
    first = run(".", "--isolated", "--update-expectations", "--width", "200")
    assert first.exit_code == 0, first.output
    assert "accepted broken/truncated.sse.gz as unreadable: its expectations now declare SD000" in first.output
    assert ONE in first.output
    again = run(".", "--isolated", "--update-expectations", "--report", "json")
    report = json.loads(again.stdout)
    assert (
        again.exit_code == 0 and report["accepted_unreadable"] == [] and report["summary"]["unreadable_accepted"] == 1
    )
    plain = run(".", "--isolated", "--width", "200")
    assert plain.exit_code == 0 and ONE in plain.output and "accepted broken" not in plain.output
