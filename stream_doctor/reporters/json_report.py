"""The machine-readable report of a replay: ``replay --format json`` (schema
``stream_doctor/schemas/report-v1.schema.json``), built from the report model (``report.py``).

``document()`` is the report as a dict whose long lists (messages, calls, executions, findings) are
iterators, each element built when it is read; ``pieces()`` serialises it a call at a time
(``jsonpieces.py``), ``to_dict()`` gives it as plain data (what ``Report.to_dict()`` returns). The
numbering it shows is ``report.py``'s; the element dicts (``call_dict``, ``finding_dict`` …) are
shared with check's JSON and JSON Lines reports.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import islice
from typing import TYPE_CHECKING, Any, Iterator

from stream_doctor import __version__, jsonpieces
from stream_doctor.findings import Finding, Location, Severity
from stream_doctor.report import LISTED_EXECUTIONS, Report
from stream_doctor.reporters import RenderOptions, _neutral

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
    from stream_doctor.capture.base import Pos
    from stream_doctor.conversation.model import Turn

SCHEMA_VERSION = 1  # of report-v1; bump on any change a consumer could notice (an optional field is not one)


def render(report: Report, options: RenderOptions) -> str:
    return text(report)


def pieces(report: Report, options: RenderOptions) -> Iterator[bytes]:
    """``render``'s text as it is made: a call, a finding at a time."""
    return json_pieces(report)


def text(report: Report, call: str | None = None) -> str:
    """The JSON report exactly as ``replay --format json`` prints it (safe to print: see ``_neutral.json``)."""
    return b"".join(json_pieces(report, call)).decode()


def json_pieces(report: Report, call: str | None = None) -> Iterator[bytes]:
    """``text()`` in pieces, each call and finding serialised when its turn comes (see
    ``jsonpieces.py``): what ``replay --format json`` writes, one piece at a time."""
    yield from _neutral.json_pieces(jsonpieces.pieces(document(report, call)))
    yield b"\n"


def summary(report: Report) -> dict[str, Any]:
    """The JSON report's ``summary``: counts by severity and the verdict."""
    return {
        "error": report.counts[Severity.ERROR],
        "warning": report.counts[Severity.WARNING],
        "info": report.counts[Severity.INFO],
        "fail_on": report.options.fail_on.label,
        "failed": report.failed,
    }


def call_dicts(report: Report) -> Iterator[dict[str, Any]]:
    """The JSON report's ``calls``, one at a time: every call, or the selected one with its fragments."""
    selection = set(report.selection)
    detailed = report.selected is not None
    turns = report.call_turns
    for number, tool_call in enumerate(report.calls, 1):
        if detailed and number not in selection:
            continue
        data = {"number": number, **call_dict(tool_call, with_fragments=detailed)}
        verdict = report.verdicts[number - 1]
        data["verdict"] = {
            "status": verdict.status,
            "tone": verdict.tone,
            "codes": list(verdict.codes),
            "turn_errors": list(verdict.turn_errors),
        }
        if turns[number - 1] is not None:
            data = {"turn": turns[number - 1], **data}
        extras = report.extras.get(number)
        if extras:
            data["extras"] = {extra.key: extra.data for extra in extras}
        yield data


def to_dict(report: Report, call: str | None = None) -> dict[str, Any]:
    """The JSON report (``replay --format json``) as plain data; ``call`` selects a call as ``--call`` does."""
    return jsonpieces.materialised(document(report, call))


def document(report: Report, call: str | None = None) -> dict[str, Any]:
    """``to_dict()`` with its long lists (messages, calls, executions, findings) as iterators,
    each element built when it is read: what the JSON report is written from, a call at a time."""
    if call is not None and call != report.selected:
        return document(replace(report, selected=call))
    stream = report.stream
    info = stream.capture
    source = report.source if report.conversation else None
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "stream-doctor", "version": __version__},
        "capture": {
            "path": source.path if source else info.path,
            "container": source.container if source else info.container,
            "compressed": source.compressed if source else info.compressed,
            "provider": info.provider,
            "provider_forced": info.provider_forced,
            "size": source.size if source else info.size,
            "events": source.frames if source else info.frames,
            "duration": report.duration,
            "ended_cleanly": report.ended_cleanly,
        },
        "messages": (
            ({"turn": turn.number, **m} for turn in report.turns for m in _messages(turn.stream))
            if source
            else _messages(stream)
        ),
        "calls": call_dicts(report),
        "executions": islice(
            ({"turn": turn.number, **e} for turn in report.turns for e in _executions(turn.stream))
            if source
            else _executions(stream),
            LISTED_EXECUTIONS,
        ),
        "execution_checks": _execution_checks(report),
        "event_counts": report.event_counts,
        "unknown_events": report.unknown_events,
        "findings": (finding_dict(f) for f in report.findings),
        "summary": summary(report),
    }
    if source and source.files:
        data["capture"]["files"] = list(source.files)
        data["capture"]["order"] = source.order
    if source:
        data["interactions"] = {"total": source.interactions, "skipped": source.skipped}
        data["turns"] = (_turn(turn, bool(source.files)) for turn in report.turns)
    return data


def _execution_checks(report: Report) -> dict[str, Any]:
    total = report.executions
    omitted = {"omitted": total - LISTED_EXECUTIONS} if total > LISTED_EXECUTIONS else {}
    return {"ran": total > 0, "executions": total, "note": report.execution_note, **omitted}


def call_dict(call: ToolCall, with_fragments: bool = False) -> dict[str, Any]:
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
        "started": pos_dict(call.started),
        "ended": pos_dict(call.ended),
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
        data["fragment_list"] = [{"position": pos_dict(f.pos), "text": f.text} for f in call.fragments]
    return data


def finding_dict(finding: Finding) -> dict[str, Any]:
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.label,
        "message": finding.message,
        "hint": finding.hint,
        "location": location_dict(finding.location),
        "related": [{"label": r.label, "location": location_dict(r.location)} for r in finding.related],
        "call_id": finding.call_id,
    }


def location_dict(location: Location) -> dict[str, Any]:
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


def pos_dict(pos: Pos | None) -> dict[str, int] | None:
    return None if pos is None else {"line": pos.line, "event": pos.number, "offset": pos.offset}


def _turn(turn: Turn, with_path: bool = False) -> dict[str, Any]:
    info = turn.stream.capture
    request = turn.request
    return {
        "turn": turn.number,
        "interaction": turn.interaction,
        **({"path": info.path} if with_path else {}),
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


def _messages(stream: AccumulatedStream) -> Iterator[dict[str, Any]]:
    return (
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
    )


def _executions(stream: AccumulatedStream) -> Iterator[dict[str, Any]]:
    return (
        {
            "position": pos_dict(e.pos),
            "call_id": e.call_id,
            "name": e.name,
            "call": e.call,
            "call_state": e.call_state,
            "input": e.input,
            **({"given": str(e.origin)} if e.origin is not None else {}),
        }
        for e in stream.executions
    )
