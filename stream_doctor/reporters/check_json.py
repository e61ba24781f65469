"""The machine-readable report of ``check``: ``to_dict(result)`` as deterministic, indented JSON.

Schema: ``stream_doctor/schemas/check-report-v1.schema.json``. Each capture carries its full
replay report (``report-v1``), or ``null`` when it could not be replayed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Literal

from stream_doctor.reporters import RenderOptions
from stream_doctor.util import jsonpieces, jsontext
from stream_doctor.util.version import __version__

if TYPE_CHECKING:
    from stream_doctor.check.result import CaptureResult, CheckResult
    from stream_doctor.config.expectations import Expectation

#: How check's JSON carries each replay's report: parsed, as an ``orjson.Fragment`` of its
#: serialised text, or as those bytes (``document()``: written as they are, never parsed again).
ReportForm = Literal["data", "fragment", "bytes"]

CHECK_SCHEMA_VERSION = 1  # of check-report-v1


def render(result: CheckResult, options: RenderOptions) -> str:
    return b"".join(pieces(result, options)).decode()


def pieces(result: CheckResult, options: RenderOptions) -> Iterator[bytes]:
    """``render``'s text as it is made: a capture, a finding at a time, each replay's report as it was serialised."""
    yield from jsontext.printable_pieces(jsonpieces.pieces(document(result)))
    yield b"\n"


def to_dict(result: CheckResult, raw_reports: bool = False) -> dict[str, Any]:
    """The JSON report of ``check`` (schema ``check-report-v1``), as plain data.

    ``raw_reports``: each capture's replay report as an ``orjson.Fragment`` of its serialised
    text, for the JSON reporter, which then never decodes and re-encodes them.
    """
    data = document(result, "fragment" if raw_reports else "data")
    return {**data, "captures": list(data["captures"])}


def document(result: CheckResult, reports: ReportForm = "bytes") -> dict[str, Any]:
    """``to_dict()`` with the captures and each capture's findings as iterators, each replay's
    report as its serialised bytes: what the JSON report is written from (``util/jsonpieces.py``)."""
    return {
        "schema_version": CHECK_SCHEMA_VERSION,
        "tool": {"name": "stream-doctor", "version": __version__},
        "configuration": result.config,
        "fail_on": result.fail_on.label,
        "failed": result.failed,
        "summary": result.summary(),
        "captures": (_capture(c, reports) for c in result.captures),
        "skipped": list(result.skipped),
        "special_files": [{"path": f.path, "kind": f.kind} for f in result.special],
        "updated_expectations": list(result.updated),
        "accepted_unreadable": list(result.accepted),
    }


def _capture(capture: CaptureResult, reports: ReportForm = "data") -> dict[str, Any]:
    replayed = capture.replayed
    report: Any
    if replayed is None:
        report = None
    elif reports == "bytes":
        report = replayed.report_json
    elif reports == "fragment":
        import orjson

        report = orjson.Fragment(replayed.report_json)
    else:
        report = replayed.report
    findings = ({**f.to_dict(), "status": capture.status(f)} for f in capture.reported)
    # a session (the configuration's ``sessions``): "path" is its folder, "files" its captures
    files = {"files": list(capture.members)} if capture.members else {}
    return {
        "path": capture.path,
        **files,
        "failed": capture.failed,
        "unreadable": capture.unreadable,
        "findings": findings if reports == "bytes" else list(findings),
        "stale_expectations": [_expectation(e) for e in capture.stale],
        "report": report,
    }


def _expectation(expectation: Expectation) -> dict[str, Any]:
    return {
        "code": expectation.code,
        "call_id": expectation.call_id,
        "line": expectation.line,
        "declared_at": {"path": expectation.declared_at.path, "line": expectation.declared_at.line},
    }
