"""The matrix's table (``serve --matrix``): a row per variant, what the application did with each call, in
text, JSON, Markdown and HTML (the project's HTML page, ``reporters.html.page``). Meaning-keeping variants first, then faults, then quirks, each under its own heading,
the last two said to fail the run only for a call run before it was complete. Capture text (names, ids, verdicts) is escaped for each format."""

from __future__ import annotations

from typing import Any, Sequence

import orjson

from stream_doctor.serve.matrix import OUTCOMES, CallRun, Row
from stream_doctor.serve.variants import KINDS, Kind

#: Each kind's heading: what its rows show, and whether they can fail the run.
HEADINGS: dict[Kind, str] = {
    "meaning": "meaning-keeping variants (a call run otherwise than the stream says fails the run)",
    "fault": "faults: the stream says something else (reported; only a call run before it was complete fails)",
    "quirk": "quirks some providers send (reported; only a call run before it was complete fails)",
}


def _ran(row: Row) -> str:
    """How the run ended: its exit code, the time bound, or why it did not run."""
    if row.skipped is not None:
        return f"not run: {row.skipped}"
    if row.timed_out:
        return "killed at the time bound"
    return f"exit {row.exit}"


def _call(call: CallRun) -> str:
    rule = f" ({call.code})" if call.code else ""
    if call.turn is None:
        return f"{call.call_id}, an id no stream carried: {OUTCOMES[call.outcome]}{rule}"
    return f"turn {call.turn} {call.name or '?'} {call.call_id or ''}: {OUTCOMES[call.outcome]}{rule}"


def _cells(row: Row) -> list[str]:
    """What the row says besides its variant: the run's end, each call, what the server saw of the connection."""
    cells = [_ran(row)]
    if row.skipped is None:
        cells += [_call(call) for call in row.calls] or ["no call served"]
        cells += list(row.endings)
    return cells


def text(rows: Sequence[Row]) -> str:
    from stream_doctor.reporters._neutral import one_line

    lines = []
    for kind in KINDS:
        shown = [row for row in rows if row.kind == kind]
        if not shown:
            continue
        lines.append(f"{HEADINGS[kind]}:")
        for row in shown:
            mark = "FAIL" if row.failing else "ok" if kind == "meaning" and row.skipped is None else "-"
            cells = _cells(row)
            lines.append(one_line(f"  {mark:4} {row.variant:26} {cells[0]}"))
            lines += [one_line(f"       {cell}") for cell in cells[1:]]
    lines.append(verdict(rows))
    return "\n".join(lines) + "\n"


def verdict(rows: Sequence[Row]) -> str:
    failing = [row.variant for row in rows if row.failing]
    if failing:
        return f"stream-doctor serve --matrix: the application ran a call otherwise than the stream says under {', '.join(failing)}"
    return "stream-doctor serve --matrix: under every meaning-keeping variant the application ran each call as the stream says"


def _value(row: Row) -> dict[str, Any]:
    return {
        "variant": row.variant,
        "kind": row.kind,
        "description": row.description,
        "skipped": row.skipped,
        "exit": row.exit,
        "timed_out": row.timed_out,
        "failing": row.failing,
        "calls": [
            {"turn": c.turn, "id": c.call_id, "name": c.name, "outcome": c.outcome, "rule": c.code} for c in row.calls
        ],
        "verdicts": list(row.seen),
        "endings": list(row.endings),
        "output": row.output,
    }


def json(rows: Sequence[Row]) -> str:
    value = {"failing": any(row.failing for row in rows), "outcomes": OUTCOMES, "rows": [_value(r) for r in rows]}
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode() + "\n"


def _markdown_cell(text: str) -> str:
    """A table cell: the characters Markdown or HTML would read as structure escaped, on one line."""
    from stream_doctor.reporters._neutral import one_line

    escaped = one_line(text).replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
    return escaped.replace("`", "\\`").replace("*", "\\*").replace("_", "\\_").replace("[", "\\[")


def markdown(rows: Sequence[Row]) -> str:
    lines = ["## stream-doctor serve --matrix", "", _markdown_cell(verdict(rows)), ""]
    for kind in KINDS:
        shown = [row for row in rows if row.kind == kind]
        if not shown:
            continue
        lines += [f"### {_markdown_cell(HEADINGS[kind])}", "", "| | variant | run | calls |", "|---|---|---|---|"]
        for row in shown:
            mark = "❌" if row.failing else "✅" if kind == "meaning" and row.skipped is None else ""
            first, *rest = _cells(row)
            calls = "<br>".join(_markdown_cell(cell) for cell in rest)
            lines.append(f"| {mark} | {_markdown_cell(row.variant)} | {_markdown_cell(first)} | {calls} |")
        lines.append("")
    return "\n".join(lines)


def html(rows: Sequence[Row]) -> str:
    """The table as a page of the HTML report's (its shell, CSS and escaping); failing rows and calls marked."""
    from stream_doctor.reporters.html import page

    groups = []
    for kind in KINDS:
        shown = [row for row in rows if row.kind == kind]
        if shown:
            groups.append({"kind": kind, "heading": HEADINGS[kind], "rows": [_html_row(row) for row in shown]})
    failed = any(row.failing for row in rows)
    context = {"title": "stream-doctor serve --matrix", "failed": failed, "sentence": verdict(rows), "groups": groups}
    return page("matrix.html.j2", context)


def _html_row(row: Row) -> dict[str, Any]:
    passed = row.kind == "meaning" and row.skipped is None and not row.failing
    calls = [{"text": _call(call), "wrong": row.fails(call)} for call in row.calls] if row.skipped is None else []
    if row.skipped is None and not row.calls:
        calls = [{"text": "no call served", "wrong": False}]
    return {
        "variant": row.variant,
        "description": row.description,
        "failing": row.failing,
        "passed": passed,
        "mark": "FAIL" if row.failing else "ok" if passed else "-",
        "run": _ran(row),
        "calls": calls,
        "endings": row.endings if row.skipped is None else (),
    }
