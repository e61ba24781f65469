"""The HTML report: one self-contained page (no network, no CDN) to see a replay.

Per turn, the capture's events and every call on a timeline (x: event number): where each call
started, its fragments, where it completed (or was abandoned), where each client profile would
have run it (the ``clients`` extra, when ``--client`` ran) and each finding at its place.
Clicking a call shows its reassembled input, its fragments and what every stage attached to it.

Rendered by jinja2 with autoescaping on (the ``html`` extra), so capture
content is always text, never markup or script; it is also neutralised like every text report
(control characters as escapes). A Content-Security-Policy forbids every fetch.
"""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING, Any, Iterator

import orjson

from stream_doctor.records import dataclass
from stream_doctor.report import Report, call_status
from stream_doctor.reporters import MissingExtra, RenderOptions, _neutral

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import ToolCall
    from stream_doctor.conversation.model import Turn
    from stream_doctor.findings import Finding
    from stream_doctor.timeline import Row

FRAGMENT_TICKS = 200  # per call on the timeline; the detail lists up to max_rows
EVENT_MARKS = 2_000  # per turn's events lane: beyond, neighbouring rows share a mark


@dataclass(frozen=True)
class Mark:
    """Something placed on a timeline lane: ``left``/``width`` in percent of the turn's events."""

    left: float
    width: float
    kind: str  # css class: call, fragment, done, abandoned, finding-error, client-ok, client-differs …
    title: str
    label: str = ""
    target: str = ""  # the call number a click selects


def render(report: Report, options: RenderOptions) -> str:
    try:
        import jinja2
    except ImportError:
        from stream_doctor.install import install_extra

        raise MissingExtra(f"the HTML report needs jinja2: {install_extra('html')}") from None
    environment = jinja2.Environment(
        autoescape=True,
        finalize=lambda value: _neutral.keeping_lines(value) if isinstance(value, str) else value,
        undefined=jinja2.StrictUndefined,
    )
    source = resources.files("stream_doctor.reporters").joinpath("templates/report.html.j2").read_text("utf-8")
    page = environment.from_string(source).render(_context(report, options))
    return _neutral.defuse_commands(page)


def _context(report: Report, options: RenderOptions) -> dict[str, Any]:
    numbered = {id(call): n for n, call in enumerate(report.calls, 1)}
    # a call's findings and a finding's call, by id, looked up once (a scan per row is quadratic)
    named: dict[str, list[str]] = {}
    for f in report.findings:
        if f.call_id is not None:
            named.setdefault(f.call_id, []).append(f"{f.code} {f.name}")
    first: dict[str, int] = {}
    for n, call in enumerate(report.calls, 1):
        if call.call_id is not None:
            first.setdefault(call.call_id, n)
    calls = [_call(report, call, numbered[id(call)], options, named) for call in options.rows(report.calls)]
    turns = report.turns or ()
    return {
        "title": f"stream-doctor: {report.path}",
        "report": report,
        "path": report.path,
        "info": report.stream.capture,
        "counts": {s.label: n for s, n in report.counts.items()},
        "failed": report.failed,
        "fail_on": report.options.fail_on.label,
        "timelines": [_timeline(report, turn, numbered, options) for turn in turns],
        "hidden_rows": report.timeline.hidden,
        "kept_rows": len(report.timeline.rows),
        "calls": calls,
        "hidden_calls": len(report.calls) - len(calls),
        "findings": [_finding(f, first) for f in options.rows(report.findings)],
        "hidden_findings": len(report.findings) - len(options.rows(report.findings)),
        "note": getattr(report, "execution_note", None),
    }


def _timeline(report: Report, turn: Turn, numbered: dict[int, int], options: RenderOptions) -> dict[str, Any]:
    """One turn: an events lane, a lane per call, a findings lane; x is the event number."""
    interaction = turn.interaction
    rows = [row for row in report.timeline.rows if row.interaction == interaction]
    last = max(
        [turn.stream.capture.frames, 1]
        + [max((row.last for row in rows), default=1)]
        + [p.number for call in turn.stream.calls for p in (call.started, call.ended, call.abandon_pos) if p]
    )

    def x(number: int | None) -> float:
        return round(100.0 * ((number or last) - 1) / last, 3)

    def span(first: int | None, end: int | None) -> float:
        return max(round(100.0 * ((end or last) - (first or 1) + 1) / last, 3), 0.4)

    events = [Mark(x(first.first), span(first.first, end.last), css, title) for first, end, css, title in _marks(rows)]
    lanes = []
    for call in options.rows(turn.stream.calls):
        number = numbered[id(call)]
        end = call.ended or call.abandon_pos
        marks = [
            Mark(
                x(call.started.number),
                span(call.started.number, end.number if end else None),
                "call",
                f"call {number}: {call.label} from event {call.started.number}",
                "",
                str(number),
            )
        ]
        positions = call.fragment_positions
        step = max(1, len(positions) // FRAGMENT_TICKS)
        marks += [
            Mark(x(p.number), 0.25, "fragment", f"fragment {i + 1} at event {p.number}, line {p.line}", "", str(number))
            for i, p in list(enumerate(positions))[::step]
        ]
        if call.ended is not None:
            marks.append(
                Mark(x(call.ended.number), 0.6, "done", f"completed at event {call.ended.number}", "✓", str(number))
            )
        elif call.abandon_pos is not None:
            marks.append(
                Mark(
                    x(call.abandon_pos.number),
                    0.6,
                    "abandoned",
                    f"abandoned ({call.abandon_cause}) at event {call.abandon_pos.number}",
                    "✗",
                    str(number),
                )
            )
        grouped: dict[tuple[int, str], list[str]] = {}  # clients that run it at the same event share one mark
        for event, kind, title in _client_marks(report, number):
            grouped.setdefault((event, kind), []).append(title)
        marks += [
            Mark(x(event), 0.6, kind, "\n".join(titles), "◆" if len(titles) == 1 else f"◆{len(titles)}", str(number))
            for (event, kind), titles in sorted(grouped.items())
        ]
        marks += [
            Mark(
                x(e.pos.number),
                0.6,
                "executed",
                f"executed by the application at event {e.pos.number}",
                "▶",
                str(number),
            )
            for e in turn.stream.executions
            if e.call == call.ordinal and e.origin is None
        ]
        lanes.append(
            {"number": number, "label": f"#{number} {call.name or '—'}", "marks": marks, "status": call_status(call)}
        )
    findings = [
        Mark(x(f.location.event), 0.8, f"finding-{f.severity.label}", f"{f.code} {f.name}: {f.message}", f.code)
        for f in report.findings
        if f.location.interaction == interaction or (interaction is None and f.location.interaction is None)
    ]
    return {
        "turn": turn.number,
        "interaction": interaction,
        "events": last,
        "event_marks": events,
        "lanes": lanes,
        "findings": findings,
        "multi": len(report.turns) > 1,
    }


def _marks(rows: list[Row]) -> Iterator[tuple[Row, Row, str, str]]:
    """The events lane's marks: one per row, or, for a long turn, one per group of neighbouring rows
    (a page cannot draw more than EVENT_MARKS apart), each titled with what it stands for."""
    group = -(-len(rows) // EVENT_MARKS) if rows else 1
    for at in range(0, len(rows), group):
        first, end = rows[at], rows[min(at + group, len(rows)) - 1]
        if group == 1:
            yield first, end, _event_class(first.event), _run_title(first)
            continue
        chunk = rows[at : at + group]
        weights: dict[str, int] = {}
        for row in chunk:
            css = _event_class(row.event)
            weights[css] = weights.get(css, 0) + row.count
        css = "ev-problem" if "ev-problem" in weights else max(weights, key=weights.__getitem__)  # what most are
        count = sum(weights.values())
        yield first, end, css, f"events {first.first}-{end.last}: {count} events in {len(chunk)} rows"


def _event_class(name: str) -> str:
    if name == "ArgsDelta":
        return "ev-args"
    if "Start" in name:
        return "ev-start"
    if "End" in name or "Stop" in name or "Finish" in name:
        return "ev-end"
    if name in ("Malformed", "Problem", "ErrorEvent", "Unknown"):
        return "ev-problem"
    return "ev-other"


def _run_title(row: Row) -> str:
    where = f"event {row.first}" if row.count == 1 else f"events {row.first}-{row.last}"
    return f"{where}: {row.event}" + (f" ×{row.count}" if row.count > 1 else "")


def _client_marks(report: Report, number: int) -> Iterator[tuple[int, str, str]]:
    """Where each client profile would have run the call (the ``clients`` extra's hand-offs)."""
    for extra in report.extras.get(number, ()):
        if extra.key != "clients" or not isinstance(extra.data, dict):
            continue
        for client, verdict in extra.data.items():
            if not isinstance(verdict, dict):
                continue
            agrees = bool(verdict.get("agrees"))
            for handoff in verdict.get("handoffs") or ():
                event = handoff.get("event") if isinstance(handoff, dict) else None
                if isinstance(event, int):
                    runs = handoff.get("runs", True)
                    what = "runs it" if runs else "holds it without running it"
                    kind = "client-ok" if agrees else "client-differs"
                    yield event, kind, f"{client}: {what} at event {event}" + ("" if agrees else " (differs)")


def _call(
    report: Report, call: ToolCall, number: int, options: RenderOptions, named: dict[str, list[str]]
) -> dict[str, Any]:
    if call.parse_failure is None and call.arguments is not None:
        reassembled = orjson.dumps(call.arguments, option=orjson.OPT_INDENT_2).decode()
    else:
        reassembled = None
    shown = len(options.rows(call.fragment_texts))
    fragments = [
        {"number": n, "line": position.line, "event": position.number, "text": repr(text)}
        for n, position, text in zip(range(1, shown + 1), call.fragment_positions, call.fragment_texts, strict=False)
    ]
    return {
        "number": number,
        "turn": report.call_turns[number - 1],
        "id": call.call_id or "—",
        "name": call.name or "—",
        "label": call.label,
        "status": call_status(call),
        "status_class": call_status(call).split(" ", 1)[0],
        "block_type": call.block_type,
        "message": call.message + 1,
        "started": call.started,
        "ended": call.ended,
        "abandon": (call.abandon_cause, call.abandon_pos) if call.ended is None else None,
        "source": call.input_source,
        "fragment_count": call.fragment_count,
        "bytes": call.byte_count,
        "fragments": fragments,
        "hidden_fragments": call.fragment_count - len(fragments),
        "reassembled": reassembled,
        "raw": call.raw_arguments,
        "failure": call.parse_failure,
        "extras": [line for extra in report.extras.get(number, ()) for line in extra.lines],
        "findings": named.get(call.call_id, []) if call.call_id is not None else [],
    }


def _finding(finding: Finding, first: dict[str, int]) -> dict[str, Any]:
    number = first.get(finding.call_id) if finding.call_id is not None else None
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.label,
        "location": str(finding.location),
        "message": finding.message,
        "hint": finding.hint,
        "related": [f"{r.label}: {r.location}" for r in finding.related],
        "call": str(number) if number is not None else "",
    }
