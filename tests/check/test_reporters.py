"""Every check reporter, snapshot-tested from one shared result (the fixture tree) and validated.

Update with ``pytest --snapshot-update`` and read the diff before committing it.
"""

from __future__ import annotations

import json

import jsonschema
import pytest
import xmlschema
from referencing import Registry, Resource

from stream_doctor.check.result import CheckResult, SpecialFile
from stream_doctor.reporters import (
    CHECK_FORMATS,
    RenderOptions,
    check_json,
    check_jsonl,
    check_statistics,
    check_terminal,
    github,
    junit,
    markdown,
    sarif,
)
from stream_doctor.rules import RULES
from tests.check.conftest import clean_result, tree_result
from tests.conftest import ROOT

JUNIT_XSD = ROOT / "tests/check/schemas/junit.xsd"
SARIF_SCHEMA = ROOT / "tests/check/schemas/sarif-schema-2.1.0.json"  # OASIS's, kept in the repository (README there)


def _validate_check_json(text: str) -> dict:  # type: ignore[type-arg]
    schemas = [
        json.loads((ROOT / f"stream_doctor/schemas/{n}.schema.json").read_text())
        for n in ("report-v1", "check-report-v1")
    ]
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas)
    data = json.loads(text)
    jsonschema.Draft202012Validator(schemas[1], registry=registry).validate(data)
    return data


def _validate_sarif(text: str) -> dict:  # type: ignore[type-arg]
    data = json.loads(text)
    validator = jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text()))
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    return data


def test_every_format_is_snapshot_tested_here() -> None:
    assert set(CHECK_FORMATS) == {"terminal", "json", "jsonl", "junit", "sarif", "github", "markdown", "statistics"}


def test_terminal(snapshot: object) -> None:
    assert check_terminal.render(tree_result(), RenderOptions(width=110)) == snapshot


def test_terminal_in_colour_keeps_the_text() -> None:
    coloured = check_terminal.render(tree_result(), RenderOptions(width=110, color_system="standard"))
    assert "\x1b[" in coloured and "Failures" in coloured


def test_json(snapshot: object) -> None:
    text = check_json.render(tree_result(), RenderOptions())
    data = _validate_check_json(text)
    assert data["summary"] == {
        "captures": 10,
        "passed": 7,
        "failed": 3,
        "unreadable": 1,
        "unreadable_accepted": 0,
        "skipped": 5,
        "special_files": 0,
        "findings": {"error": 4, "warning": 0, "info": 3},  # the envelopes' SD705 (their requests declare tools)
        "expected": 2,
        "failures": 3,
        "stale_expectations": 1,
    }
    # Each capture's replay report is report-v1, snapshotted fixture by fixture in test_golden;
    # here it stands as its path, so this snapshot shows what check itself adds.
    for capture in data["captures"]:
        capture["report"] = capture["report"] and f"<report-v1 of {capture['report']['capture']['path']}>"
    assert json.dumps(data, indent=2, ensure_ascii=False) == snapshot


def test_junit(snapshot: object) -> None:
    text = junit.render(tree_result(), RenderOptions())
    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(text)
    assert text == snapshot


def test_sarif(snapshot: object) -> None:
    # the tree as if checked from its folder in a repository at /repository (a machine's own paths never in a snapshot)
    from dataclasses import replace

    text = sarif.render(replace(tree_result(), root="/repository", base="fixtures/check-tree"), RenderOptions())
    data = _validate_sarif(text)
    run = data["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(r.code for r in RULES.values())
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1
    assert all(r["shortDescription"]["text"] and r["help"]["markdown"] for r in rules)
    # The stream rules' entries follow their documentation (owned by rules/) and are checked
    # above; the snapshot shows check's own rules in full and stands for the others.
    # Rule indexes shift as rules are added (checked above), so they are left out too.
    own = {r.code for r in RULES.values() if r.scope == "check"}
    run["tool"]["driver"]["rules"] = [r for r in rules if r["id"] in own] + ["… every rule of rules.RULES"]
    for result in run["results"]:
        del result["ruleIndex"]
    assert json.dumps(data, indent=2, ensure_ascii=False) == snapshot


def test_github(snapshot: object) -> None:
    assert github.render(tree_result(), RenderOptions()) == snapshot


def test_markdown(snapshot: object) -> None:
    assert markdown.render(tree_result(), RenderOptions()) == snapshot


def test_jsonl(snapshot: object) -> None:
    text = check_jsonl.render(tree_result(), RenderOptions())
    lines = [json.loads(line) for line in text.splitlines()]
    assert [line["type"] for line in lines] == ["finding"] * (len(lines) - 1) + ["summary"]
    assert lines[-1]["failed"] is True
    assert lines[-1]["summary"]["failures"] == sum(1 for line in lines if line.get("status") == "failure") == 3
    assert text == snapshot


def test_statistics(snapshot: object) -> None:
    result = tree_result()
    text = check_statistics.render(result, RenderOptions(width=100))
    total = sum(len(c.reported) for c in result.captures)
    assert text.splitlines()[-1] == f"{total} findings of {len({row.code for row in result.statistics})} codes"
    assert text == snapshot


def test_one_failure_everywhere_per_unexpected_finding() -> None:
    result = tree_result()
    failures = len(result.failures)
    assert failures == 3
    assert junit.render(result, RenderOptions()).count("<failure ") == failures
    assert len(json.loads(sarif.render(result, RenderOptions()))["runs"][0]["results"]) == failures
    assert len(github.render(result, RenderOptions()).splitlines()) == failures


def test_nothing_when_all_is_as_expected() -> None:
    result = clean_result()
    assert not result.failed and result.captures
    assert github.render(result, RenderOptions()) == ""
    assert json.loads(sarif.render(result, RenderOptions()))["runs"][0]["results"] == []
    text = junit.render(result, RenderOptions())
    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(text)
    assert "<failure" not in text and 'failures="0"' in text
    assert _validate_check_json(check_json.render(result, RenderOptions()))["failed"] is False
    assert "✅ passed" in markdown.render(result, RenderOptions())


def test_schemas_reject_what_they_should() -> None:
    """The validators above are not vacuous."""
    bad_junit = junit.render(tree_result(), RenderOptions()).replace('tests="10"', 'tests="ten"', 1)
    with pytest.raises(xmlschema.XMLSchemaValidationError):
        xmlschema.XMLSchema(str(JUNIT_XSD)).validate(bad_junit)
    with pytest.raises(AssertionError):
        _validate_sarif(sarif.render(tree_result(), RenderOptions()).replace('"version": "2.1.0"', '"version": "2.0"'))
    with pytest.raises(jsonschema.ValidationError):
        _validate_check_json(
            check_json.render(tree_result(), RenderOptions()).replace('"status": "expected"', '"status": "fine"', 1)
        )


def test_annotation_escaping() -> None:
    assert github.escape_data("100%\r\nnext") == "100%25%0D%0Anext"
    assert github.escape_property("a,b:c%") == "a%2Cb%3Ac%25"


def test_junit_survives_characters_xml_cannot_carry() -> None:
    from dataclasses import replace

    result = tree_result()
    capture = result.captures[1]
    odd = replace(capture.unexpected[0], message='bytes \x00\x1b and <tags> & "quotes"')
    patched = replace(result, captures=(replace(capture, unexpected=(odd,)),))
    text = junit.render(patched, RenderOptions())
    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(text)
    assert "\\x00\\x1b" in text and "&lt;tags&gt; &amp;" in text


def test_markdown_escapes_what_would_break_the_table() -> None:
    assert markdown._code("a|b") == "`a\\|b`"
    assert markdown._cell("`x` *y* a|b <tag>") == "\\`x\\` \\*y\\* a\\|b &lt;tag>"


def _with_special_files() -> CheckResult:
    """The shared result, as if the tree also held a FIFO, a socket and a character device (check never opens them)."""
    from dataclasses import replace

    special = (
        SpecialFile("bugs/pipe.sse", "fifo"),
        SpecialFile("clean/agent.sock", "socket"),
        SpecialFile("dev/zero.jsonl", "character-device"),
    )
    return replace(tree_result(), special=special, root="/repository", base="")  # paths from the repository root


def test_every_check_report_counts_the_special_files_it_skipped() -> None:
    result = _with_special_files()
    data = _validate_check_json(check_json.render(result, RenderOptions()))
    assert data["summary"]["special_files"] == 3
    assert data["special_files"] == [
        {"path": "bugs/pipe.sse", "kind": "fifo"},
        {"path": "clean/agent.sock", "kind": "socket"},
        {"path": "dev/zero.jsonl", "kind": "character-device"},
    ]
    assert data["summary"]["captures"] == 10  # never counted as captures, passed or failed

    text = junit.render(result, RenderOptions())
    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(text)
    assert '<testsuites name="stream-doctor" tests="13" failures="3" errors="0" skipped="3">' in text
    assert text.count("<skipped ") == 3
    assert '<skipped message="a named pipe (FIFO), not a regular file (never opened)"' in text

    run = _validate_sarif(sarif.render(result, RenderOptions()))["runs"][0]
    (invocation,) = run["invocations"]
    notes = invocation["toolExecutionNotifications"]
    assert [n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for n in notes] == [
        "bugs/pipe.sse",
        "clean/agent.sock",
        "dev/zero.jsonl",
    ]
    assert notes[1]["message"]["text"] == "clean/agent.sock skipped: a socket, not a regular file (never opened)"
    assert len(run["results"]) == 3  # the findings are unchanged

    summary = markdown.render(result, RenderOptions())
    assert "; 3 skipped (not regular files: FIFO, device or socket)." in summary
    assert "- `dev/zero.jsonl`: a character device" in summary
    assert "3 skipped (not regular files: FIFO, device or socket)" in check_terminal.render(
        result, RenderOptions(width=200)
    )


def test_no_special_files_adds_nothing_but_a_zero() -> None:
    result = tree_result()
    assert "<skipped" not in junit.render(result, RenderOptions())
    assert "invocations" not in json.loads(sarif.render(result, RenderOptions()))["runs"][0]
    assert "not regular file" not in markdown.render(result, RenderOptions())
    assert json.loads(check_json.render(result, RenderOptions()))["special_files"] == []
