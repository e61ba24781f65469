"""Expectations: matching, staleness, sidecars read and written."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from stream_doctor.check import CheckError
from stream_doctor.config import expectations as expect
from stream_doctor.findings import Finding, Location, Severity
from stream_doctor.options import Options

HERE = Location("x.sse.expect.toml", 3)


def finding(code: str, call_id: str | None = None, line: int = 5) -> Finding:
    return Finding(code, "some-rule", Severity.ERROR, "message", "hint", Location("x.sse", line), (), call_id)


def test_an_entry_matches_by_code_and_optionally_call_and_line() -> None:
    entry = expect.Expectation("SD102", HERE)
    assert entry.matches(finding("SD102", "a")) and not entry.matches(finding("SD101"))
    assert expect.Expectation("SD102", HERE, call_id="a").matches(finding("SD102", "a"))
    assert not expect.Expectation("SD102", HERE, call_id="a").matches(finding("SD102", "b"))
    assert not expect.Expectation("SD102", HERE, line=6).matches(finding("SD102", line=5))


def test_compare_sorts_findings_and_finds_stale_entries() -> None:
    findings = (finding("SD102", "a"), finding("SD102", "b"), finding("SD301"))
    entries = (expect.Expectation("SD102", HERE), expect.Expectation("SD201", HERE))
    verdict = expect.compare("x.sse", findings, entries, expect.selector(Options()))
    assert verdict.expected == findings[:2]
    assert [f.code for f in verdict.unexpected] == ["SD301", "SD900"]
    assert verdict.stale == (entries[1],)
    stale = verdict.unexpected[1]
    assert stale.location == HERE and "expected SD201, which x.sse no longer shows" in stale.message


def test_entries_for_rules_not_selected_are_not_stale() -> None:
    entries = (expect.Expectation("SD201", HERE), expect.Expectation("SD000", HERE))
    verdict = expect.compare("x.sse", (), entries, expect.selector(Options(ignore=("SD2", "SD0"))))
    assert verdict.stale == (entries[1],)  # SD000 cannot be deselected


def test_sidecar_round_trip_with_awkward_text(tmp_path: Path) -> None:
    capture = str(tmp_path / "x.sse")
    awkward = 'id "quoted" \\ back\tslash \x7f del'
    entries = [{"code": "SD102", "name": "empty-input-execution", "call-id": awkward, "line": None}]
    assert expect.write_sidecar(capture, entries)
    text = Path(expect.sidecar_path(capture)).read_text()
    assert tomllib.loads(text)["expect"][0]["call-id"] == awkward
    loaded = expect.load_sidecar(capture)
    assert [(e.code, e.call_id, e.declared_at.line) for e in loaded] == [("SD102", awkward, 5)]
    assert not expect.write_sidecar(capture, entries)  # unchanged: not rewritten
    assert expect.write_sidecar(capture, [])  # nothing to expect: removed
    assert not Path(expect.sidecar_path(capture)).exists()
    assert expect.load_sidecar(capture) == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("expect = 3\n", "'expect' must be an array of tables"),
        ("[[expect]]\nname = 'x'\n", "entry needs 'code'"),
        ("[[expect]]\ncode = 'SD102'\nline = 0\n", "'line' in expect must be a positive integer"),
        ("[[expect]]\ncode = 'SD102'\ncall-id = 3\n", "'call-id' in expect must be a string"),
        ("[expected]\n", "unknown key 'expected'"),
        ("[[expect]\n", "not valid TOML"),
    ],
)
def test_bad_sidecars(tmp_path: Path, text: str, message: str) -> None:
    capture = tmp_path / "x.sse"
    Path(expect.sidecar_path(str(capture))).write_text(text)
    with pytest.raises(CheckError, match=message):
        expect.load_sidecar(str(capture))
