"""The machine-readable report: deterministic JSON, versioned, with a JSON Schema in the package.

Schema: ``stream_doctor/schemas/report-v1.schema.json``. Bump ``SCHEMA_VERSION`` on any change a
consumer could notice; adding an optional field is not such a change.
"""

from __future__ import annotations

from typing import Any

import orjson

from stream_doctor import __version__
from stream_doctor.accumulate.stream import ToolCall
from stream_doctor.capture.base import Pos
from stream_doctor.engine import Report
from stream_doctor.findings import Finding, Location, Severity

SCHEMA_VERSION = 1


def render(report: Report, call: str | None = None) -> str:
    return orjson.dumps(to_dict(report, call), option=orjson.OPT_INDENT_2).decode() + "\n"


def to_dict(report: Report, call: str | None = None) -> dict[str, Any]:
    stream = report.stream
    info = stream.capture
    counts = report.counts
    calls = [c for c in stream.calls if call is None or c.call_id == call]
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "stream-doctor", "version": __version__},
        "capture": {
            "path": info.path,
            "container": info.container,
            "compressed": info.compressed,
            "provider": info.provider,
            "provider_forced": info.provider_forced,
            "size": info.size,
            "events": info.frames,
            "duration": info.duration,
            "ended_cleanly": stream.ended_cleanly,
        },
        "messages": [
            {
                "index": m.index,
                "id": m.message_id,
                "model": m.model,
                "stop_reason": m.stop_reason,
                "stop_category": m.stop_category,
                "stopped": m.stopped is not None,
                "error": {"type": m.error.error_type, "message": m.error.message} if m.error else None,
                "calls": list(m.calls),
            }
            for m in stream.messages
        ],
        "calls": [_call(c, with_fragments=call is not None) for c in calls],
        "executions": [
            {
                "position": _pos(e.pos),
                "call_id": e.call_id,
                "name": e.name,
                "call": e.call,
                "call_state": e.call_state,
                "input": e.input,
            }
            for e in stream.executions
        ],
        "event_counts": dict(sorted((str(k), v) for k, v in stream.event_counts.items())),
        "unknown_events": dict(sorted(stream.unknown_events.items())),
        "findings": [_finding(f) for f in report.findings],
        "summary": {
            "error": counts[Severity.ERROR],
            "warning": counts[Severity.WARNING],
            "info": counts[Severity.INFO],
            "fail_on": report.options.fail_on.label,
            "failed": report.failed,
        },
    }


def _call(call: ToolCall, with_fragments: bool) -> dict[str, Any]:
    failure = call.parse_failure
    data: dict[str, Any] = {
        "ordinal": call.ordinal,
        "message": call.message,
        "index": call.index,
        "id": call.call_id,
        "name": call.name,
        "block_type": call.block_type,
        "server_side": call.server_side,
        "status": call.status,
        "abandon_cause": call.abandon_cause,
        "started": _pos(call.started),
        "ended": _pos(call.ended),
        "fragments": call.fragment_count,
        "bytes": call.byte_count,
        "input_source": call.input_source,
        "arguments": call.arguments,
        "parse_failure": (
            {"kind": failure.kind, "detail": failure.detail, "byte": failure.position, "fragment": failure.fragment}
            if failure
            else None
        ),
    }
    if failure is not None or with_fragments:
        data["raw_arguments"] = call.raw_arguments
    if with_fragments:
        data["fragment_list"] = [{"position": _pos(f.pos), "text": f.text} for f in call.fragments]
    return data


def _finding(finding: Finding) -> dict[str, Any]:
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.label,
        "message": finding.message,
        "hint": finding.hint,
        "location": _location(finding.location),
        "related": [{"label": r.label, "location": _location(r.location)} for r in finding.related],
        "call_id": finding.call_id,
    }


def _location(location: Location) -> dict[str, Any]:
    return {"path": location.path, "line": location.line, "event": location.event, "offset": location.offset}


def _pos(pos: Pos | None) -> dict[str, int] | None:
    return None if pos is None else {"line": pos.line, "event": pos.number, "offset": pos.offset}
