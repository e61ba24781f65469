"""``check`` on one session's per-exchange files (an older proxy recording, another recorder's folder):
the configuration's ``sessions`` names the folders, and each is replayed as one conversation, one
entry, so that the cross-turn rules (SD608: the second request echoes ``{}`` for the first
response's call) fire, each finding in the file of the event that proves it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from stream_doctor.cli import app
from tests.check.test_reporters import _validate_check_json, _validate_sarif
from tests.conftest import ROOT
from tests.conversation.test_session import ARGUMENTS, _session

FOLDER = "recordings/session-1"
FIRST, SECOND = f"{FOLDER}/0001-a.jsonl", f"{FOLDER}/0002-b.jsonl"
CONFIG = 'sessions = ["recordings/session-*/"]\n'


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with one session folder whose second request echoes ``{}``, and a clean capture beside it."""
    (tmp_path / "recordings").mkdir()
    _session(tmp_path / FOLDER, echoed={})
    shutil.copy(ROOT / "fixtures/anthropic/one_call.sse", tmp_path / "recordings/one_call.sse")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(app, ["check", *args, "--report", "json"], env={"GITHUB_ACTIONS": ""})
    assert result.stdout.startswith("{"), result.output
    return result.exit_code, _validate_check_json(result.stdout)  # a session's "files" too


def entries(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {capture["path"]: capture for capture in report["captures"]}


def codes(capture: dict[str, Any]) -> list[str]:
    return [f["code"] for f in capture["findings"]]


def test_a_session_folder_is_one_entry_and_sd608_points_into_the_second_file(project: Path) -> None:
    Path("stream-doctor.toml").write_text(CONFIG)
    code, report = check("recordings")
    assert code == 1
    assert sorted(entries(report)) == ["recordings/one_call.sse", FOLDER]
    session = entries(report)[FOLDER]
    assert session["files"] == [FIRST, SECOND]
    assert session["report"]["capture"]["files"] == [FIRST, SECOND]  # replayed in this order
    (sd608,) = [f for f in session["findings"] if f["code"] == "SD608"]
    assert sd608["status"] == "failure"
    assert (sd608["location"]["path"], sd608["location"]["line"]) == (SECOND, 2)  # the request record
    assert any(r["location"]["path"] == FIRST for r in sd608["related"])  # where the call was streamed
    assert not entries(report)["recordings/one_call.sse"]["failed"]  # every other entry still checked
    assert report["summary"]["captures"] == 2


def test_near_miss_without_sessions_each_file_is_alone_and_nothing_echoes(project: Path) -> None:
    code, report = check("recordings")
    assert code == 0, report
    assert sorted(entries(report)) == ["recordings/one_call.sse", FIRST, SECOND]
    assert all("files" not in capture for capture in report["captures"])
    assert not [c for capture in report["captures"] for c in codes(capture) if c == "SD608"]


def test_near_miss_a_session_that_echoes_the_streamed_input(project: Path) -> None:
    _session(project / FOLDER, echoed=ARGUMENTS)
    Path("stream-doctor.toml").write_text(CONFIG)
    code, report = check("recordings")
    assert code == 0, report
    assert not [c for c in codes(entries(report)[FOLDER]) if c.startswith("SD6")]


def test_files_are_replayed_in_recorded_time_order_before_name_order(project: Path) -> None:
    """Session's order: every header says when it began, so the later-named file goes first."""
    for name, started in (("0001-a.jsonl", "2026-03-01T10:00:00Z"), ("0002-b.jsonl", "2026-03-01T10:00:05Z")):
        path = project / FOLDER / name
        lines = path.read_bytes().split(b"\n", 1)
        header = {**json.loads(lines[0]), "started": started}
        renamed = {"0001-a.jsonl": "b.jsonl", "0002-b.jsonl": "a.jsonl"}[name]  # names now say the opposite
        (project / FOLDER / renamed).write_bytes(json.dumps(header).encode() + b"\n" + lines[1])
        path.unlink()
    Path("stream-doctor.toml").write_text(CONFIG)
    code, report = check("recordings")
    session = entries(report)[FOLDER]
    assert session["report"]["capture"]["files"] == [f"{FOLDER}/b.jsonl", f"{FOLDER}/a.jsonl"]
    assert session["report"]["capture"]["order"] == "in time order (header started)"
    assert "SD608" in codes(session) and code == 1


def test_one_file_named_checks_its_whole_session(project: Path) -> None:
    """pre-commit hands over the file that changed: an exchange of a conversation cannot be judged alone."""
    Path("stream-doctor.toml").write_text(CONFIG)
    code, report = check(SECOND)
    assert list(entries(report)) == [FOLDER] and entries(report)[FOLDER]["files"] == [FIRST, SECOND]
    assert "SD608" in codes(entries(report)[FOLDER]) and code == 1


def test_a_bad_file_fails_its_session_only_with_sd000_naming_it(project: Path) -> None:
    (project / FOLDER / "0003-c.jsonl").write_text('{"sd": "header", "version": 99}\n')
    (project / "recordings/session-2").mkdir()
    _session(project / "recordings/session-2", echoed=ARGUMENTS)
    Path("stream-doctor.toml").write_text(CONFIG)
    code, report = check("recordings")
    assert code == 1
    broken = entries(report)[FOLDER]
    assert broken["unreadable"] and codes(broken) == ["SD000"]
    assert broken["findings"][0]["location"]["path"] == f"{FOLDER}/0003-c.jsonl"
    assert broken["files"] == [FIRST, SECOND, f"{FOLDER}/0003-c.jsonl"]
    assert not entries(report)["recordings/session-2"]["failed"]  # the other session is still replayed
    assert not entries(report)["recordings/one_call.sse"]["failed"]


def test_the_folder_sidecar_declares_what_the_session_shows(project: Path) -> None:
    Path("stream-doctor.toml").write_text(CONFIG)
    result = CliRunner().invoke(app, ["check", "recordings", "--update-expectations"], env={"GITHUB_ACTIONS": ""})
    sidecar = project / f"{FOLDER}.expect.toml"  # beside the folder, named as a capture's would be
    assert "SD608" in sidecar.read_text(), result.output
    assert not list((project / FOLDER).glob("*.expect.toml"))  # none for the members
    code, report = check("recordings")
    assert code == 0
    assert [f["status"] for f in entries(report)[FOLDER]["findings"] if f["code"] == "SD608"] == ["expected"]
    # the sidecar named on the command line stands for its session, as a capture's sidecar does
    code, report = check(f"{FOLDER}.expect.toml")
    assert list(entries(report)) == [FOLDER] and code == 0
    # near miss: the session fixed, the expectation is stale (SD900 at the sidecar's entry)
    _session(project / FOLDER, echoed=ARGUMENTS)
    code, report = check("recordings")
    (stale,) = [f for f in entries(report)[FOLDER]["findings"] if f["code"] == "SD900"]
    assert stale["location"]["path"] == f"{FOLDER}.expect.toml" and code == 1


def test_reporters_point_at_the_member_file(project: Path) -> None:
    Path("stream-doctor.toml").write_text(CONFIG)
    runner = CliRunner()
    sarif = _validate_sarif(runner.invoke(app, ["check", "recordings", "--report", "sarif"]).stdout)
    (result,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "SD608"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == SECOND and location["region"]["startLine"] == 2
    github = runner.invoke(app, ["check", "recordings", "--report", "github"]).stdout
    assert f"file={SECOND},line=2," in github
    terminal = runner.invoke(app, ["check", "recordings", "--no-color", "--width", "120"]).stdout
    assert f"{FOLDER}/ " in terminal and "2 files as one conversation" in terminal
    markdown = runner.invoke(app, ["check", "recordings", "--report", "markdown"]).stdout
    assert f"`{FOLDER}/`" in markdown and "2 files as one conversation" in markdown
    junit = runner.invoke(app, ["check", "recordings", "--report", "junit"]).stdout
    assert f'name="{FOLDER}/"' in junit


def test_the_session_flag_adds_to_the_configuration(project: Path) -> None:
    code, report = check("recordings", "--isolated", "--session", "recordings/session-*/")
    assert sorted(entries(report)) == ["recordings/one_call.sse", FOLDER] and code == 1
    assert "SD608" in codes(entries(report)[FOLDER])
    code, report = check("recordings", "--isolated", "--session", "elsewhere/*")  # near miss: another folder
    assert sorted(entries(report)) == ["recordings/one_call.sse", FIRST, SECOND] and code == 0


def test_a_session_flag_that_is_not_a_glob_exits_2_with_one_line(project: Path) -> None:
    result = CliRunner().invoke(app, ["check", "recordings", "--session", "a/[z-a]"])
    assert result.exit_code == 2
    assert result.output.startswith("stream-doctor: error: --session 'a/[z-a]': not a valid glob")
    assert len(result.output.strip().splitlines()) == 1
