"""The HTML report: one self-contained page (no network, no CDN) that answers "what went wrong and where"
on its first screen, whatever the size of the capture.

First a summary of the findings by severity and by code, with counts and the calls each code is
about; then the worst call opened (its reassembled input beside what the application ran and what
each client profile would have run); then the call table, each call with the status every format
gives it (``Report.verdicts``: a call with an error about it, or in a turn with an error, is never a
green "complete"); then the findings grouped by code, the first few of each shown and the rest
folded (``<details>``), with a filter by code, severity and call (a few lines of inline script: the
page reads the same without it); then the timeline (``_html_timeline``).

Rendered by jinja2 with autoescaping on (the ``html`` extra), so capture
content is always text, never markup or script; it is also neutralised like every text report
(control characters as escapes). A Content-Security-Policy forbids every fetch. Identifiers (ids,
tool names, codes, paths) are written as pieces that break only after punctuation
(``_identifier``), so a narrow window wraps ``toolu_01…`` after its ``_``, never inside a word.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import TYPE_CHECKING, Any, Sequence

from stream_doctor.reporters import MissingExtra, RenderOptions, _neutral
from stream_doctor.reporters._html_timeline import (
    LEGEND,
    Places,
    client_verdicts,
    json_text,
    places,
    preview,
    timelines,
)
from stream_doctor.reporters._text import counted
from stream_doctor.util.jsontext import equal
from stream_doctor.values.findings import Severity
from stream_doctor.values.report import Report

if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup

    from stream_doctor.accumulate.stream import ToolCall
    from stream_doctor.values.findings import Finding

#: Characters of any one value the page shows (a name, a message, raw arguments): the cut is made once,
#: where the template writes values, so a 10 MB tool name in five places is not a 50 MB page.
SHOWN_TEXT = 20_000
SHOWN_INPUT = 4_000  # characters of an executed or predicted input shown in a call's detail
FIRST_FINDINGS = 3  # of each code, shown before the rest are folded
#: An identifier breaks after these (``write_file`` as ``write_`` + ``file``), never inside a piece.
_BREAK_AFTER = re.compile(r"(?<=[_\-./:@])")
LONG_PIECE = 32  # characters: a piece longer than this may break anywhere, or it would push the page wide


def render(report: Report, options: RenderOptions) -> str:
    return page("report.html.j2", _context(report, options))


def page(template: str, context: dict[str, Any]) -> str:
    """One of the templates (each extends ``page.html.j2``, the shell and CSS they share) rendered with every
    value escaped and neutralised as it is written: the one way the project writes an HTML page."""
    try:  # on every page, so a missing extra is said whatever was rendered before
        import jinja2  # noqa: F401
    except ImportError:
        from stream_doctor.util.install import install_extra

        raise MissingExtra(f"the HTML report needs jinja2: {install_extra('html')}") from None
    return _neutral.defuse_commands(_environment().get_template(template).render(context))


@functools.cache
def _environment() -> jinja2.Environment:
    """The templates' environment, built once a process: it keeps each template compiled (a new one for every
    page compiled them again, about 0.1 s of CPU a page)."""
    import jinja2
    from markupsafe import Markup

    templates = resources.files("stream_doctor.reporters").joinpath("templates")
    environment = jinja2.Environment(
        loader=jinja2.FunctionLoader(lambda name: templates.joinpath(name).read_text("utf-8")),
        autoescape=True,
        # every value neutralised as it is written; a macro's output (Markup) was, value by value
        finalize=lambda value: (
            _neutral.keeping_lines(_cut(value)) if isinstance(value, str) and not isinstance(value, Markup) else value
        ),
        undefined=jinja2.StrictUndefined,
    )
    environment.filters["identifier"] = _identifier
    return environment


def _cut(text: str) -> str:
    """A value as the page shows it: at most SHOWN_TEXT characters, and a marker saying how many more."""
    if len(text) <= SHOWN_TEXT:
        return text
    return f"{text[:SHOWN_TEXT]}… ({len(text) - SHOWN_TEXT:,} more characters; the JSON report has them all)"


def _identifier(value: object) -> Markup:
    """An id, a tool name, a code or a path as pieces that each stay on one line (``span.seg``): the
    text wraps only after punctuation. Neutralised and escaped here, as ``finalize`` does for text."""
    from markupsafe import Markup, escape

    text = _neutral.keeping_lines(_cut(str(value)))
    return Markup(
        "".join(
            f'<span class="seg{" long" if len(piece) > LONG_PIECE else ""}">{escape(piece)}</span>'
            for piece in _BREAK_AFTER.split(text)
            if piece
        )
    )


def _context(report: Report, options: RenderOptions) -> dict[str, Any]:
    runs = places(report)
    findings = report.findings
    order = sorted(range(len(findings)), key=lambda i: -int(findings[i].severity))  # stable
    named: dict[int, list[Finding]] = {}  # call number -> the findings about it, most severe first
    for i in order:
        number = report.places.call[i]
        if number is not None:
            named.setdefault(number, []).append(findings[i])
    worst = _worst_call(report)
    shown_calls = options.rows(report.calls)
    calls = [_call(report, call, report.number(call), options, named, runs) for call in shown_calls]
    if worst is not None and worst > len(shown_calls):  # opened first, even beyond --max-rows
        calls.append(_call(report, report.calls[worst - 1], worst, options, named, runs))
    shown = options.rows(order)
    summary = _summary(report)
    return {
        "title": f"stream-doctor: {report.path}",
        "report": report,
        "path": report.path,
        "info": report.stream.capture,
        "facts": _facts(report),
        "counts": {s.label: n for s, n in report.counts.items()},
        "failed": report.failed,
        "fail_on": report.options.fail_on.label,
        "summary": summary,
        "codes": {row["code"]: row["name"] for row in summary},  # the filter's, each once
        "timelines": timelines(report, runs, options),
        "multi": report.conversation,
        "legend": LEGEND,
        "hidden_rows": report.timeline.hidden,
        "kept_rows": len(report.timeline.rows),
        "calls": calls,
        "table": calls[: len(shown_calls)],
        "worst": worst,
        "executions": any(runs.executions.values()),
        "hidden_calls": len(report.calls) - len(shown_calls),
        "groups": _groups(report, shown, summary),
        "hidden_findings": len(findings) - len(shown),
        "note": report.execution_note,
    }


def _worst_call(report: Report) -> int | None:
    """The call the page opens first: the one with the most severe verdict (a wrong run, then an
    error, then a warning), then the most errors about it, then the first in the table; None when
    every call is "ok" (or there are none)."""
    errors: dict[int, int] = {}
    for f, number in zip(report.findings, report.places.call, strict=True):
        if number is not None and f.severity is Severity.ERROR:
            errors[number] = errors.get(number, 0) + 1
    tones = {"ok": 0, "warning": 1, "error": 2}
    ranked = [
        (tones[v.tone], bool(v.ran_wrongly), errors.get(n, 0), -n)
        for n, v in enumerate(report.verdicts, 1)
        if v.tone != "ok"
    ]
    return -max(ranked)[3] if ranked else None


def _summary(report: Report) -> list[dict[str, Any]]:
    """One row per code and severity found (a client profile's SD801 is a warning or info), most
    severe first, then the most frequent: its count and the calls it is about."""
    rows: dict[tuple[str, Severity], dict[str, Any]] = {}
    for f, number in zip(report.findings, report.places.call, strict=True):
        row = rows.get((f.code, f.severity))
        if row is None:
            key = f"{f.code}-{f.severity.label}"
            row = rows[f.code, f.severity] = {"code": f.code, "name": f.name, "severity": f.severity, "key": key}
            row |= {"count": 0, "calls": []}
        row["count"] += 1
        if number is not None and number not in row["calls"]:
            row["calls"].append(number)
    ordered = sorted(rows.values(), key=lambda r: (-int(r["severity"]), -r["count"], r["code"]))
    return [{**row, "severity": row["severity"].label, "calls": _numbers(row["calls"])} for row in ordered]


def _numbers(numbers: list[int], most: int = 8) -> str:
    """Call numbers as a short list: ``1, 4, 7 … (12 calls)``."""
    listed = ", ".join(map(str, sorted(numbers)[:most]))
    return listed + (f" … ({len(numbers)} calls)" if len(numbers) > most else "")


def _groups(report: Report, shown: Sequence[int], summary: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The shown findings by code, in the summary's order; each group's first FIRST_FINDINGS open."""
    by_code: dict[str, list[dict[str, Any]]] = {}
    for i in shown:
        f = report.findings[i]
        by_code.setdefault(f"{f.code}-{f.severity.label}", []).append(_finding(report, i))
    groups = []
    for row in summary:
        cards = by_code.get(row["key"])
        if cards:
            groups.append({**row, "first": cards[:FIRST_FINDINGS], "rest": cards[FIRST_FINDINGS:]})
    return groups


def _facts(report: Report) -> list[str]:
    """What the terminal report's header says of the capture, in its words and counts."""
    info = report.stream.capture
    source = report.source
    if report.conversation and source is not None:
        facts = [source.container + (f", {source.compressed}" if source.compressed else "")]
        if source.interactions:
            facts.append(counted(source.interactions, "interaction"))
        facts.append(counted(len(report.turns), "turn"))
        return facts
    container = info.container + (f", {info.compressed}" if info.compressed else "")
    return [container, counted(info.frames, "event"), counted(len(report.stream.messages), "message")]


def _shown(value: Any) -> str:
    text = json_text(value, indent=True)
    return (
        text if len(text) <= SHOWN_INPUT else text[:SHOWN_INPUT] + f"\n… ({len(text) - SHOWN_INPUT:,} more characters)"
    )


def _call(
    report: Report,
    call: ToolCall,
    number: int,
    options: RenderOptions,
    named: dict[int, list[Finding]],
    runs: Places,
) -> dict[str, Any]:
    arguments = call.arguments if call.parse_failure is None else None
    reassembled = json_text(arguments, indent=True) if call.parse_failure is None and arguments is not None else None
    shown = len(options.rows(call.fragment_texts))
    fragments = [
        {"number": n, "line": position.line, "event": position.number, "text": repr(text)}
        for n, position, text in zip(range(1, shown + 1), call.fragment_positions, call.fragment_texts, strict=False)
    ]
    verdict = report.verdicts[number - 1]
    ran = []
    for record, _ in runs.executions.get(number, ()):
        same = reassembled is not None and equal(record.input, arguments)
        ran.append(
            {
                "where": f"line {record.pos.line} (event {record.pos.number})"
                if record.origin is None
                else f"given ({record.origin})",
                "input": _shown(record.input),
                "preview": preview(record.input, 48),
                "same": same,
            }
        )
    return {
        "number": number,
        "turn": report.call_turns[number - 1],
        "id": call.call_id or "—",
        "name": call.name or "—",
        "label": call.label,
        "status": verdict.status,
        "tone": verdict.tone,
        "stream_status": verdict.stream,
        "codes": verdict.codes,
        "turn_errors": verdict.turn_errors,
        "wrong": verdict.ran_wrongly,
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
        "ran": ran,
        "unlisted_runs": runs.unlisted.get(number, 0),
        "clients": _clients(report, number, arguments, reassembled is not None),
        "extras": [line for extra in report.extras.get(number, ()) if extra.key != "clients" for line in extra.lines],
        "findings": [
            {"code": f.code, "name": f.name, "severity": f.severity.label, "message": f.message}
            for f in named.get(number, ())[:FIRST_FINDINGS]
        ],
        "more_findings": max(len(named.get(number, ())) - FIRST_FINDINGS, 0),
    }


def _clients(report: Report, number: int, arguments: Any, parsed: bool) -> list[dict[str, Any]]:
    """What each client profile would hand the tool (``--client``), beside the reassembled input."""
    shown = []
    for client, verdict in client_verdicts(report, number):
        handoffs = [h for h in verdict.get("handoffs") or () if isinstance(h, dict)]
        first = handoffs[0] if handoffs else None
        value = None
        if first is None:
            hands = "does not run it" if "raises" not in verdict else "raises before running it"
        elif not first.get("runs", True):
            hands = "holds it without running it"
        elif parsed and first.get("input") == arguments:
            hands = "the reassembled input"
        else:
            hands, value = "", _shown(first.get("input"))
        event = first.get("event") if first else None
        when = "" if first is None else f"event {event}" if isinstance(event, int) else "the end of the stream"
        differences = [str(d) for d in verdict.get("differences") or ()]
        given = verdict.get("source")
        source: dict[str, Any] = given if isinstance(given, dict) else {}
        shown.append(
            {
                "name": str(source.get("label") or f"{client} {verdict.get('version') or ''}".strip()),
                "note": str(source["note"]) if source.get("note") else None,
                "model_differs": str(source["model_differs"]) if source.get("model_differs") else None,
                "agrees": bool(verdict.get("agrees")),
                "differences": ", ".join(differences),
                "hands": hands,
                "input": value,
                "when": when + (f", on {first.get('when')}" if first and first.get("when") else ""),
            }
        )
    return shown


def _finding(report: Report, i: int) -> dict[str, Any]:
    finding: Finding = report.findings[i]
    call = report.places.call[i]
    turn = report.places.turn[i]
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.label,
        "location": str(finding.location),
        "message": finding.message,
        "hint": finding.hint,
        "related": [f"{r.label}: {r.location}" for r in finding.related],
        "call": str(call) if call is not None else "",
        "turn": report.turns[turn].number if report.conversation and turn is not None else None,
    }
