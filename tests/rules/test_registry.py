"""The rule registry: every rule registered once, documented, and shown failing and passing by a fixture."""

from __future__ import annotations

import re
from pathlib import Path

import stream_doctor.rules as rules_package
from stream_doctor.providers import ADAPTERS
from stream_doctor.rules import RULES, lookup
from stream_doctor.rules.base import DOC_SECTIONS, FAMILIES
from stream_doctor.values.protocol import ProtocolFacts
from tests.clients.cases import CLIENT_EXPECTED
from tests.expected_findings import EXPECTED
from tests.rules import test_rule_cases as rule_cases


def test_codes_and_names_are_unique() -> None:
    assert len({r.code for r in RULES.values()}) == len(RULES)
    assert len({r.name for r in RULES.values()}) == len(RULES)
    for r in RULES.values():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.name)
        assert r.code[:3] in FAMILIES


def test_every_rule_is_documented_in_fixed_sections() -> None:
    for r in RULES.values():
        sections = r.sections()
        assert list(sections) == list(DOC_SECTIONS), r.code
        assert all(body.strip() for body in sections.values()), r.code
        assert r.summary and not r.summary.endswith(".")


def test_every_rule_has_a_failing_and_a_passing_fixture() -> None:
    from tests.check.conftest import tree_result

    # check's own rules (SD000, SD900) fire in check, not in replay: their fixtures are the check tree's
    in_tree = {capture.path: {f.code for f in capture.reported} for capture in tree_result().captures}
    for r in RULES.values():
        if r.code == "SD809":  # the model set against the library's run: no profile alone shows it, and its
            continue  # case table (tests/rules/cases/SD809.yml) runs the installed library on an edited fixture
        # the client rules (SD8xx) fire only with --client: their cases are (fixture, client) pairs
        table: dict = {"client": CLIENT_EXPECTED, "check": in_tree}.get(r.scope, EXPECTED)
        failing = [name for name, codes in table.items() if r.code in codes]
        passing = [name for name, codes in table.items() if r.code not in codes]
        assert failing, f"{r.code} {r.name} has no fixture that shows it"
        assert passing


def test_every_rule_has_a_case_table_where_it_fires_and_a_near_miss_where_it_does_not() -> None:
    tables = rule_cases.TABLES
    assert set(tables) == {r.code for r in RULES.values()}, (
        "every rule, and only rules, have tests/rules/cases/SDxxx.yml"
    )
    for r in RULES.values():
        fires = [c for c in tables[r.code] if c["fires"] > 0]
        misses = [c for c in tables[r.code] if c["fires"] == 0]
        assert fires and misses, f"{r.code} needs a case where it fires and a near miss where it does not"


def test_lookup_by_code_or_name() -> None:
    assert lookup("sd201") is lookup("unparseable-arguments") is lookup("SD201")
    assert lookup("SD999") is None


def test_rules_import_nothing_from_providers() -> None:
    """Rules read protocol facts from the capture's information, never from an adapter."""
    root = Path(rules_package.__file__).parent
    offenders = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if re.search(r"^\s*(from|import)\s+stream_doctor\.providers", path.read_text(), re.M)
    ]
    assert offenders == []


def test_every_adapter_states_its_protocol_facts() -> None:
    for name, adapter in ADAPTERS.items():
        assert isinstance(adapter.protocol, ProtocolFacts), name
        assert callable(adapter.translator().translate), name
