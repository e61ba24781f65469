"""The machine-readable report of ``check``: deterministic JSON, versioned, with a JSON Schema in the package.

Schema: ``stream_doctor/schemas/check-report-v1.schema.json``. Each capture carries its full
replay report (``report-v1``), or ``null`` when it could not be replayed. Bump
``SCHEMA_VERSION`` on any change a consumer could notice.
"""

from __future__ import annotations

from typing import Any

import orjson

from stream_doctor import __version__
from stream_doctor.check.expectations import Expectation
from stream_doctor.check.run import CaptureResult, CheckResult
from stream_doctor.findings import Finding, Severity
from stream_doctor.reporters import json_report

SCHEMA_VERSION = 1


def render(result: CheckResult) -> str:
    return orjson.dumps(to_dict(result), option=orjson.OPT_INDENT_2).decode() + "\n"


def to_dict(result: CheckResult) -> dict[str, Any]:
    captures = result.captures
    totals = {s.label: sum(c.counts[s] for c in captures) for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)}
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "stream-doctor", "version": __version__},
        "configuration": result.config,
        "fail_on": result.fail_on.label,
        "failed": result.failed,
        "summary": {
            "captures": len(captures),
            "passed": sum(1 for c in captures if not c.failed),
            "failed": sum(1 for c in captures if c.failed),
            "unreadable": sum(1 for c in captures if c.unreadable),
            "skipped": len(result.skipped),
            "findings": totals,
            "expected": sum(len(c.expected) for c in captures),
            "failures": len(result.failures),
            "stale_expectations": sum(len(c.stale) for c in captures),
        },
        "captures": [_capture(c) for c in captures],
        "skipped": list(result.skipped),
        "updated_expectations": list(result.updated),
    }


def _capture(capture: CaptureResult) -> dict[str, Any]:
    failures = capture.failures
    expected = capture.expected
    return {
        "path": capture.path,
        "failed": capture.failed,
        "unreadable": capture.unreadable,
        "findings": [_finding(f, expected, failures) for f in capture.findings]
        + [_finding(f, expected, failures) for f in capture.unexpected if f not in capture.findings],
        "stale_expectations": [_expectation(e) for e in capture.stale],
        "report": capture.replayed.report if capture.replayed is not None else None,
    }


def _finding(finding: Finding, expected: tuple[Finding, ...], failures: tuple[Finding, ...]) -> dict[str, Any]:
    data = json_report._finding(finding)  # the replay report's shape, plus how check judged it
    data["status"] = "expected" if finding in expected else "failure" if finding in failures else "below-fail-on"
    return data


def _expectation(expectation: Expectation) -> dict[str, Any]:
    return {
        "code": expectation.code,
        "call_id": expectation.call_id,
        "line": expectation.line,
        "declared_at": {"path": expectation.declared_at.path, "line": expectation.declared_at.line},
    }
