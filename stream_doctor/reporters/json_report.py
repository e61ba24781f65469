"""The machine-readable report: deterministic JSON, versioned, with a JSON Schema in the package.

Schema: ``stream_doctor/schemas/report-v1.schema.json``. Bump ``SCHEMA_VERSION`` on any change a
consumer could notice; adding an optional field is not such a change.

A conversation (HAR file, cassette, envelope of several turns) keeps the same shape: ``messages``,
``calls`` and ``executions`` list every turn's, each tagged with its ``turn``; ``turns`` says what
each turn's request and stream were; locations name their ``interaction`` and, in a request, the
``request_path``. A capture of one stream has none of these optional fields.
"""

from __future__ import annotations

from typing import Any

import orjson

from stream_doctor import __version__
from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
from stream_doctor.capture.base import Pos
from stream_doctor.conversation.model import Turn
from stream_doctor.engine import Report
from stream_doctor.findings import Finding, Location, Severity

SCHEMA_VERSION = 1


def render(report: Report, call: str | None = None) -> str:
    return orjson.dumps(to_dict(report, call), option=orjson.OPT_INDENT_2).decode() + "\n"


def to_dict(report: Report, call: str | None = None) -> dict[str, Any]:
    if report.conversation:
        return _conversation(report, call)
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
        "messages": _messages(stream),
        "calls": [_call(c, with_fragments=call is not None) for c in calls],
        "executions": _executions(stream),
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
    data: dict[str, Any] = {
        "path": location.path,
        "line": location.line,
        "event": location.event,
        "offset": location.offset,
    }
    if location.interaction is not None:
        data["interaction"] = location.interaction
    if location.request_path is not None:
        data["request_path"] = location.request_path
    return data


def _conversation(report: Report, call: str | None) -> dict[str, Any]:
    """The report of a capture of several turns: every turn's messages, calls and executions, tagged."""
    source = report.source
    assert source is not None
    counts = report.counts
    info = report.stream.capture
    event_counts: dict[str, int] = {}
    unknown: dict[str, int] = {}
    for turn in report.turns:
        for kind, count in turn.stream.event_counts.items():
            event_counts[str(kind)] = event_counts.get(str(kind), 0) + count
        for kind, count in turn.stream.unknown_events.items():
            unknown[kind] = unknown.get(kind, 0) + count
    durations = [t.stream.capture.duration for t in report.turns if t.stream.capture.duration is not None]
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "stream-doctor", "version": __version__},
        "capture": {
            "path": source.path,
            "container": source.container,
            "compressed": source.compressed,
            "provider": info.provider,
            "provider_forced": info.provider_forced,
            "size": source.size,
            "events": source.frames,
            "duration": sum(durations) if durations else None,
            "ended_cleanly": all(t.stream.ended_cleanly for t in report.turns),
        },
        "messages": [{"turn": turn.number, **message} for turn in report.turns for message in _messages(turn.stream)],
        "calls": [
            {"turn": turn.number, **_call(c, with_fragments=call is not None)}
            for turn in report.turns
            for c in turn.stream.calls
            if call is None or c.call_id == call
        ],
        "executions": [
            {"turn": turn.number, **execution} for turn in report.turns for execution in _executions(turn.stream)
        ],
        "event_counts": dict(sorted(event_counts.items())),
        "unknown_events": dict(sorted(unknown.items())),
        "findings": [_finding(f) for f in report.findings],
        "summary": {
            "error": counts[Severity.ERROR],
            "warning": counts[Severity.WARNING],
            "info": counts[Severity.INFO],
            "fail_on": report.options.fail_on.label,
            "failed": report.failed,
        },
        "interactions": {"total": source.interactions, "skipped": source.skipped},
        "turns": [_turn(turn) for turn in report.turns],
    }


def _turn(turn: Turn) -> dict[str, Any]:
    info = turn.stream.capture
    request = turn.request
    return {
        "turn": turn.number,
        "interaction": turn.interaction,
        "request": None
        if request is None
        else {
            "method": request.method,
            "url": request.url,
            "line": request.pos.line,
            "offset": request.pos.offset,
        },
        "status": turn.status,
        "container": info.container,
        "size": info.size,
        "events": sum(turn.stream.event_counts.values()),
        "ended_cleanly": turn.stream.ended_cleanly,
        "calls": len(turn.stream.calls),
        "findings": len(turn.findings),
    }


def _messages(stream: AccumulatedStream) -> list[dict[str, Any]]:
    return [
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
    ]


def _executions(stream: AccumulatedStream) -> list[dict[str, Any]]:
    return [
        {
            "position": _pos(e.pos),
            "call_id": e.call_id,
            "name": e.name,
            "call": e.call,
            "call_state": e.call_state,
            "input": e.input,
        }
        for e in stream.executions
    ]


def _pos(pos: Pos | None) -> dict[str, int] | None:
    return None if pos is None else {"line": pos.line, "event": pos.number, "offset": pos.offset}
