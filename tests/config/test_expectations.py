"""Expectations: matching, staleness, sidecars read and written."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream_doctor.check import CheckError
from stream_doctor.config import expectations as expect
from stream_doctor.values.findings import Finding, Location, Severity
from stream_doctor.values.options import Options

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


#: Text as a capture's name, a finding's name or a call id may hold it: any code point but a lone
#: surrogate (which no TOML string can hold), the TOML escapes and the characters it forbids raw weighted in.
_TEXT = st.text(
    st.one_of(
        st.sampled_from('"\\\n\r\t\b\f\x00\x01\x1b\x7f\x85\u2028[]#=\'"""'),
        st.characters(blacklist_categories=("Cs",)),
    ),
    max_size=40,
)
_ENTRY = st.fixed_dictionaries(
    {"code": st.from_regex(r"SD[0-9]{3}", fullmatch=True)},
    optional={"name": _TEXT, "call-id": _TEXT, "line": st.integers(1, 2**62)},
)
_INJECTION = '\n[[expect]]\ncode = "SD102"\n#'


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(_ENTRY, min_size=1, max_size=4), name=_TEXT.filter(lambda n: "/" not in n and "\x00" not in n))
def test_a_sidecar_read_back_gives_exactly_the_expectations_written(
    tmp_path: Path, entries: list[dict[str, object]], name: str
) -> None:
    # before: the capture's name went raw into the sidecar's comment, so a \r, \x01 or DEL made it
    # invalid TOML and a name holding the injection added an expectation
    capture = str(tmp_path / f"{name}{_INJECTION}.sse")
    assert expect.write_sidecar(capture, entries)
    assert tomllib.loads(Path(expect.sidecar_path(capture)).read_text(encoding="utf-8"))["expect"] == entries
    loaded = expect.load_sidecar(capture)
    assert [(e.code, e.name, e.call_id, e.line) for e in loaded] == [
        (e["code"], e.get("name"), e.get("call-id"), e.get("line")) for e in entries
    ]
    Path(expect.sidecar_path(capture)).unlink()


def test_a_lone_surrogate_in_a_sidecar_value_is_a_check_error_not_a_crash(tmp_path: Path) -> None:
    with pytest.raises(CheckError, match="lone surrogate U\\+DCFF"):
        expect.write_sidecar(str(tmp_path / "x.sse"), [{"code": "SD102", "call-id": "id\udcff"}])
    assert not Path(expect.sidecar_path(str(tmp_path / "x.sse"))).exists()
