"""check's own rules: documented like the stream rules, shown failing by the fixture tree, never in RULES."""

from __future__ import annotations

from stream_doctor.check.rules import CHECK_RULES, lookup
from stream_doctor.rules import RULES
from stream_doctor.rules.base import DOC_SECTIONS
from tests.check.conftest import clean_result, tree_result


def test_documented_in_fixed_sections_with_unique_codes() -> None:
    assert [r.code for r in CHECK_RULES] == ["SD000", "SD900"]
    assert not {r.code for r in CHECK_RULES} & {r.code for r in RULES}
    assert not {r.name for r in CHECK_RULES} & {r.name for r in RULES}
    for rule in CHECK_RULES:
        assert list(rule.sections()) == list(DOC_SECTIONS), rule.code
        assert rule.summary and not rule.summary.endswith(".")
    assert [r.family for r in CHECK_RULES] == ["capture", "check"]


def test_each_has_a_failing_and_a_passing_fixture() -> None:
    failing = {f.code for _capture, f in tree_result().failures}
    passing = {f.code for c in clean_result().captures for f in c.findings}
    for rule in CHECK_RULES:
        assert rule.code in failing and rule.code not in passing


def test_lookup() -> None:
    assert lookup("sd900") is lookup("stale-expectation") is CHECK_RULES[1]
    assert lookup("SD102") is None
