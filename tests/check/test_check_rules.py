"""check's own rules: in the one rule catalog with scope "check", shown failing by the fixture tree, never run by replay."""

from __future__ import annotations

from stream_doctor.engine.pipeline import replay
from stream_doctor.rules import RULES, lookup, rules_of
from stream_doctor.rules.base import DOC_SECTIONS
from stream_doctor.values.options import Options
from tests.check.conftest import clean_result, tree_result

CHECK_RULES = rules_of("check")


def test_in_the_catalog_documented_in_fixed_sections() -> None:
    assert [r.code for r in CHECK_RULES] == ["SD000", "SD900"]
    assert [r for r in RULES.values() if r.scope == "check"] == list(CHECK_RULES)
    for rule in CHECK_RULES:
        assert list(rule.sections()) == list(DOC_SECTIONS), rule.code
        assert rule.summary and not rule.summary.endswith(".")
    assert [r.family for r in CHECK_RULES] == ["capture", "check"]


def test_each_has_a_failing_and_a_passing_fixture() -> None:
    failing = {f.code for _capture, f in tree_result().failures}
    passing = {f.code for c in clean_result().captures for f in c.findings}
    for rule in CHECK_RULES:
        assert rule.code in failing and rule.code not in passing


def test_replay_never_runs_them() -> None:
    report = replay("fixtures/anthropic/one_call.sse", Options(select=("SD000", "SD900")))
    assert report.findings == ()


def test_lookup() -> None:
    assert lookup("sd900") is lookup("stale-expectation") is CHECK_RULES[1]
    assert lookup("SD000") is CHECK_RULES[0]
    assert lookup("SD102") is not None and lookup("SD102").scope == "stream"  # type: ignore[union-attr]
