"""One configuration, found as ruff finds it: from each target's folder upwards, for check, replay and the plugin."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stream_doctor import replay
from stream_doctor.cli import app
from tests.conftest import ROOT

pytest_plugins = ["pytester"]
runner = CliRunner()
EMPTY_INPUT = ROOT / "fixtures/anthropic/empty_input_bug.jsonl"  # SD705 (info) and SD102 (error)
CLEAN = ROOT / "fixtures/anthropic/one_call.sse"


def run(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), env={"GITHUB_ACTIONS": ""})


@pytest.fixture
def projects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two projects side by side; only ``quiet`` ignores SD1, and the working directory is above both."""
    for name in ("quiet", "loud"):
        (tmp_path / name / "captures").mkdir(parents=True)
        shutil.copy(EMPTY_INPUT, tmp_path / name / "captures" / "bug.jsonl")
    (tmp_path / "quiet" / "pyproject.toml").write_text(
        '[project]\nname = "q"\n\n[tool.stream-doctor]\nignore = ["SD1"]\n'
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_check_uses_the_configuration_nearest_each_capture(projects: Path) -> None:
    result = run("check", "quiet", "loud", "--report", "json")
    assert result.exit_code == 1, result.output
    failed = {c["path"] for c in json.loads(result.stdout)["captures"] if c["failed"]}
    assert failed == {"loud/captures/bug.jsonl"}
    assert run("check", "quiet").exit_code == 0  # found from the target, not from the working directory
    assert run("check", "quiet", "--isolated").exit_code == 1


def test_replay_honours_the_configuration_and_its_options(projects: Path, tmp_path: Path) -> None:
    assert run("replay", "quiet/captures/bug.jsonl").exit_code == 0
    assert run("replay", "loud/captures/bug.jsonl").exit_code == 1
    assert run("replay", "quiet/captures/bug.jsonl", "--isolated").exit_code == 1
    assert run("replay", "quiet/captures/bug.jsonl", "--select", "SD1").exit_code == 1  # the command line wins
    other = tmp_path / "other.toml"
    other.write_text('fail-on = "info"\n')
    assert run("replay", "quiet/captures/bug.jsonl", "--config", str(other), "--ignore", "SD1").exit_code == 1
    missing = run("replay", "quiet/captures/bug.jsonl", "--config", "nope.toml")
    assert missing.exit_code == 2 and "nope.toml: no such configuration file" in missing.output


def test_the_library_api_takes_the_configuration_when_asked(projects: Path) -> None:
    assert replay("quiet/captures/bug.jsonl").codes == ("SD705", "SD102")  # the API reads no file unless told
    assert replay("quiet/captures/bug.jsonl", config=True).codes == ("SD705",)
    assert replay("quiet/captures/bug.jsonl", config="quiet/pyproject.toml").codes == ("SD705",)


def test_per_file_ignores_and_extend_select_in_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "relay").mkdir()
    shutil.copy(EMPTY_INPUT, tmp_path / "relay" / "bug.jsonl")
    shutil.copy(EMPTY_INPUT, tmp_path / "bug.jsonl")
    (tmp_path / "stream-doctor.toml").write_text(
        'select = ["SD7"]\nextend-select = ["SD102"]\n\n[per-file-ignores]\n"relay/**" = ["SD102"]\n'
    )
    monkeypatch.chdir(tmp_path)
    assert replay("bug.jsonl", config=True).codes == ("SD705", "SD102")
    assert replay("relay/bug.jsonl", config=True).codes == ("SD705",)


def test_an_envelope_header_can_declare_what_the_capture_expects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = EMPTY_INPUT.read_text().splitlines()
    header = json.loads(lines[0])
    (tmp_path / "declared.jsonl").write_text(
        "\n".join([json.dumps({**header, "expect": ["SD102"]}), *lines[1:]]) + "\n"
    )
    (tmp_path / "wrong.jsonl").write_text("\n".join([json.dumps({**header, "expect": ["SD201"]}), *lines[1:]]) + "\n")
    monkeypatch.chdir(tmp_path)
    assert run("check", "declared.jsonl").exit_code == 0
    wrong = run("check", "wrong.jsonl", "--report", "json")
    assert wrong.exit_code == 1
    (capture,) = json.loads(wrong.stdout)["captures"]
    assert {f["code"] for f in capture["findings"] if f["status"] == "failure"} >= {"SD102"}  # not declared
    assert [s["code"] for s in capture["stale_expectations"]] == ["SD201"]  # declared and absent


def test_check_respects_gitignore(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("scratch/\n*.tmp.sse\n")
    for folder in ("captures", "scratch"):
        (tmp_path / folder).mkdir()
        shutil.copy(CLEAN, tmp_path / folder / "one_call.sse")
    shutil.copy(CLEAN, tmp_path / "captures" / "draft.tmp.sse")
    monkeypatch.chdir(tmp_path)

    def checked(*args: str) -> list[str]:
        result = run("check", ".", "--report", "json", *args)
        assert result.exit_code == 0, result.output
        return sorted(c["path"] for c in json.loads(result.stdout)["captures"])

    assert checked() == ["captures/one_call.sse"]
    assert checked("--no-respect-gitignore") == [
        "captures/draft.tmp.sse",
        "captures/one_call.sse",
        "scratch/one_call.sse",
    ]
    assert run("check", "scratch/one_call.sse").exit_code == 0  # a file named on the command line is always checked
    (tmp_path / "stream-doctor.toml").write_text("respect-gitignore = false\n")
    assert len(checked()) == 3


def test_assert_clean_reads_paths_from_the_rootdir_and_honours_configuration(pytester: pytest.Pytester) -> None:
    (pytester.path / "captures").mkdir()
    shutil.copy(EMPTY_INPUT, pytester.path / "captures" / "bug.jsonl")
    shutil.copy(CLEAN, pytester.path / "captures" / "clean.sse")
    pytester.makefile(".toml", **{"stream-doctor": '[expect]\n"captures/bug.jsonl" = ["SD102"]\n'})
    pytester.makeini("[pytest]\n")
    pytester.chdir()
    (pytester.path / "sub").mkdir()
    pytester.makepyfile(
        test_streams="""
        def test_from_elsewhere(stream_doctor, monkeypatch):
            monkeypatch.chdir("sub")  # the paths stay relative to the rootdir
            stream_doctor.assert_clean("captures/clean.sse")
            stream_doctor.assert_clean("captures/bug.jsonl")  # the configuration expects SD102

        def test_configuration_off(stream_doctor):
            stream_doctor.assert_clean("captures/bug.jsonl", config=False)
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_configuration_off*", "*SD102*"])


@pytest.mark.parametrize(
    ("setting", "said"),
    [
        ('max-bytes = "1KiB"', "the capture is larger than 1 KiB (raise the limit with --max-bytes)"),
        ("max-frames = 3", "the capture holds more than 3 frames (raise the limit with --max-frames)"),
    ],
)
def test_replay_honours_the_configurations_size_limits_as_check_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str, said: str
) -> None:
    shutil.copy(CLEAN, tmp_path / "one.sse")
    (tmp_path / "stream-doctor.toml").write_text(setting + "\n")
    monkeypatch.chdir(tmp_path)
    replayed, checked = run("replay", "one.sse"), run("check", "one.sse", "--report", "json:check.json")
    assert replayed.exit_code == 2 and said in replayed.output
    assert checked.exit_code == 1 and said in (tmp_path / "check.json").read_text()
    from stream_doctor.engine.stages import RunError

    with pytest.raises(RunError, match=said.split(" (")[0]):
        replay("one.sse", config=True)
    # the near misses: the command line (or the argument) wins over the file, and no file is no limit
    assert run("replay", "one.sse", "--max-bytes", "1MiB", "--max-frames", "1000").exit_code == 0
    assert not replay("one.sse", config=True, max_bytes=1 << 20, max_frames=1000).findings
    assert run("replay", "one.sse", "--isolated").exit_code == 0
