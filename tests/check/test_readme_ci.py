"""The GitHub Actions step of docs/ci.md, run as written against the fixture tree (what "done" means).

One failing test case, one SARIF result and one annotation per unexpected finding; nothing when
all is as expected.
"""

from __future__ import annotations

import json
import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from stream_doctor.cli import app
from tests.conftest import ROOT


def readme_check_command() -> list[str]:
    page = (ROOT / "docs" / "ci.md").read_text()
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", page, re.S) if "upload-sarif" in b)
    steps = yaml.safe_load(block)["jobs"]["stream-doctor"]["steps"]
    command = next(s["run"] for s in steps if s.get("name") == "Check the recorded streams")
    return shlex.split(command.replace("$GITHUB_STEP_SUMMARY", "step-summary.md"))


def run_step(monkeypatch: pytest.MonkeyPatch, paths: list[str]):  # type: ignore[no-untyped-def]
    command = readme_check_command()
    assert command[:3] == ["stream-doctor", "check", "captures/"]
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = CliRunner().invoke(app, ["check", *paths, *command[3:]])
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::")]
    sarif = json.loads(Path("stream-doctor.sarif").read_text())["runs"][0]["results"]
    junit = ET.parse("stream-doctor-junit.xml").getroot()
    failing_cases = [case for case in junit.iter("testcase") if case.find("failure") is not None]
    return result, annotations, sarif, failing_cases


def test_the_step_reports_each_unexpected_finding_once(tree_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result, annotations, sarif, failing_cases = run_step(monkeypatch, ["."])
    assert result.exit_code == 1
    assert len(annotations) == len(sarif) == len(failing_cases) == 3
    assert [r["ruleId"] for r in sarif] == ["SD000", "SD301", "SD900"]
    assert Path("step-summary.md").read_text().startswith("## stream-doctor check")


def test_the_step_is_silent_when_all_is_as_expected(tree_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result, annotations, sarif, failing_cases = run_step(monkeypatch, ["clean", "bugs/empty_input_bug.jsonl"])
    assert result.exit_code == 0
    assert annotations == [] and sarif == [] and failing_cases == []
