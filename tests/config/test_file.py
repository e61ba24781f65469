"""Configuration files and path patterns."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_doctor.check import CheckError
from stream_doctor.config import file as config_file
from stream_doctor.config.globs import Glob
from stream_doctor.values.findings import Severity


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.sse", "a/b/c.sse", True),  # no "/": a name anywhere
        ("legacy", "x/legacy", True),
        ("bugs/*.sse", "bugs/a.sse", True),
        ("bugs/*.sse", "bugs/deep/a.sse", False),  # * stays in one segment
        ("bugs/**/*.sse", "bugs/a.sse", True),
        ("bugs/**/*.sse", "bugs/deep/er/a.sse", True),
        ("bugs/**", "bugs/deep/a.sse", True),
        ("**/relay/*", "x/relay/a.sse", True),
        ("captures/?.sse", "captures/a.sse", True),
        ("captures/[ab].sse", "captures/c.sse", False),
        ("captures/[!ab].sse", "captures/c.sse", True),
        ("*.{sse,jsonl}", "x/y.jsonl", True),
        ("./bugs/a.sse", "bugs/a.sse", True),
        ("bugs/a.sse", "bugs/a.sse.expect.toml", False),
        ("a+b(1).sse", "a+b(1).sse", True),  # regex characters are literal
    ],
)
def test_globs(pattern: str, path: str, matches: bool) -> None:
    assert Glob(pattern).matches(path) is matches


def test_defaults_without_a_file() -> None:
    config = config_file.load(None)
    assert config.path is None and config.fail_on is Severity.ERROR and config.jobs == 1


def test_every_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("stream-doctor.toml").write_text(
        """
select = ["sd1", "SD3"]
ignore = ["SD305"]
fail-on = "warning"
provider = "anthropic"
container = "sse"
jobs = 0
exclude = ["scratch/**"]

[per-path-ignores]
"relay/**" = ["SD001"]
"*.gz" = ["SD003", "SD303"]
"bugs/a.sse" = ["SD4"]  # the same pattern as in [expect]: SD900 must point at the [expect] entry

[per-path-provider]
"logs/*.jsonl" = "anthropic"

[expect]
"bugs/a.sse" = ["SD301", { code = "SD303", call-id = "toolu_1", line = 9, name = "stream-cut" }]
"""
    )
    config = config_file.load("stream-doctor.toml")
    assert config.select == ("SD1", "SD3") and config.ignore == ("SD305",)
    assert config.fail_on is Severity.WARNING and config.jobs == 0
    assert config.provider == "anthropic" and config.container == "sse"
    assert config.excluded("scratch/x.sse") and not config.excluded("bugs/a.sse")
    assert config.ignores_for("relay/x/y.sse") == ("SD001",)
    assert config.ignores_for("relay/old.sse.gz") == ("SD001", "SD003", "SD303")
    assert config.provider_for("logs/a.jsonl") == "anthropic"
    expected = config.expectations_for("bugs/a.sse")
    assert [(e.code, e.call_id, e.line, e.name) for e in expected] == [
        ("SD301", None, None, None),
        ("SD303", "toolu_1", 9, "stream-cut"),
    ]
    assert expected[0].declared_at.path == "stream-doctor.toml" and expected[0].declared_at.line == 19


def test_patterns_are_relative_to_the_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "project" / "sub").mkdir(parents=True)
    (tmp_path / "project" / "pyproject.toml").write_text(
        '[tool.stream-doctor.per-path-ignores]\n"sub/*.sse" = ["SD1"]\n'
    )
    monkeypatch.chdir(tmp_path / "project" / "sub")
    found = config_file.find(".")
    assert found == "../pyproject.toml"
    config = config_file.load(found)
    assert config.ignores_for("a.sse") == ("SD1",)  # a.sse here is sub/a.sse there


def test_find_prefers_stream_doctor_toml_and_skips_pyproject_without_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "inner").mkdir()
    (tmp_path / "inner" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (tmp_path / "pyproject.toml").write_text('[tool.stream-doctor]\nfail-on = "info"\n')
    monkeypatch.chdir(tmp_path / "inner")
    assert config_file.find(".") == "../pyproject.toml"
    (tmp_path / "stream-doctor.toml").write_text("")
    assert config_file.find(".") == "../stream-doctor.toml"
    (tmp_path / "inner" / "pyproject.toml").write_text("this is [ not toml")  # someone else's problem
    assert config_file.find(".") == "../stream-doctor.toml"


def test_a_table_that_is_not_a_table(tmp_path: Path) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text('[tool]\nstream-doctor = "yes"\n')
    with pytest.raises(CheckError, match=r"\[tool.stream-doctor\] must be a table"):
        config_file.load(str(path))


def test_tool_table_in_stream_doctor_toml_is_an_unknown_key(tmp_path: Path) -> None:
    path = tmp_path / "stream-doctor.toml"
    path.write_text('[tool.stream-doctor]\nfail-on = "info"\n')
    with pytest.raises(CheckError, match="unknown key 'tool' in the top level"):
        config_file.load(str(path))


def test_sessions_name_folders_relative_to_the_configuration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "stream-doctor.toml").write_text('sessions = ["recordings/session-*/", "proxy-runs"]\n')
    monkeypatch.chdir(tmp_path)
    config = config_file.load("project/stream-doctor.toml")
    assert config.is_session("project/recordings/session-1")  # a trailing "/" names the folder itself
    assert config.is_session("project/a/b/proxy-runs")  # no "/": a folder name anywhere
    # near misses: a folder beside the pattern, one below a session, the configuration's own folder
    assert not config.is_session("project/recordings/other")
    assert not config.is_session("project/recordings/session-1/deeper")
    assert not config.is_session("project")
    assert not config_file.load(None).is_session("recordings/session-1")  # none by default


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"recordings/*"', r"stream-doctor.toml:1: 'sessions' must be a list of strings"),
        ('["a/[z-a]"]', r"stream-doctor.toml:1: the pattern 'a/\[z-a\]' in 'sessions' is not a valid glob"),
    ],
)
def test_a_bad_sessions_value_names_the_file_and_line(tmp_path: Path, value: str, message: str) -> None:
    path = tmp_path / "stream-doctor.toml"
    path.write_text(f"sessions = {value}\n")
    with pytest.raises(CheckError, match=message):
        config_file.load(str(path))
