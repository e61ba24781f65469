"""The human report: capture summary, tool-call table, findings, one-line summary.

A conversation (a HAR file, a cassette, an envelope of several turns) gets the file's summary,
then each turn's request and tool-call table, then every finding. Renders on a ``_page.Page`` of
the options' width and colours into a string (no rich: a replay's start-up cannot afford it).
"""

from __future__ import annotations

import orjson

from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
from stream_doctor.capture.limits import human
from stream_doctor.conversation.model import Turn
from stream_doctor.reporters import RenderOptions, _neutral, _text
from stream_doctor.reporters._neutral import text as N  # every string from the capture goes through N
from stream_doctor.reporters._page import Page, abbreviate
from stream_doctor.util import jsontext
from stream_doctor.values.findings import Severity
from stream_doctor.values.report import Report

# A status's colour says what it means: only a call that completed and parsed, with nothing found
# about it or its turn, is green (``CallVerdict.tone``).
TONE_STYLES = {"ok": "green", "warning": "yellow", "error": "bold red"}


def render(report: Report, options: RenderOptions) -> str:
    console = _text.page(options)
    if report.conversation:
        _conversation_header(report, console)
    else:
        _header(report, console)
    if options.timeline:
        _timeline(report, console, options)
    if report.selected is not None:
        _one_call(report, console, report.selected, options)
    elif report.conversation:
        several = report.source is not None and bool(report.source.files)
        for turn in report.turns:
            _turn(turn, console, several)
            _call_table(report, turn.stream, console, options)
    else:
        _calls(report, console, options)
    _findings(report, console, options)
    _execution_note(report, console)
    _summary(report, console)
    return _text.finish(console.text(), options)


def _execution_note(report: Report, console: Page) -> None:
    note = report.execution_note
    if note is not None:
        console.blank()
        console.print(("note: " + note, "cyan"))


def _conversation_header(report: Report, console: Page) -> None:
    source = report.source
    assert source is not None
    info = report.stream.capture
    container = source.container + (f", {source.compressed}" if source.compressed else "")
    provider = info.provider + (" (forced)" if info.provider_forced else " (detected)")
    parts = [container, provider]
    if source.files:  # several captures replayed as one conversation
        parts.insert(0, f"{len(source.files)} captures {source.order}")
    if source.interactions:
        parts.append(f"{source.interactions} interaction{'s' if source.interactions != 1 else ''}")
        if source.skipped:
            parts[-1] += f" ({source.skipped} not LLM calls, skipped)"
    turns = len(report.turns)
    parts += [f"{turns} turn{'s' if turns != 1 else ''}", human(source.size, rounded=True)]
    _path_and_facts(console, source.path, parts, report.unknown_events)


def _path_and_facts(console: Page, path: str, parts: list[str], unknown: dict[str, int]) -> None:
    console.print((N(path), "bold"))
    console.print(N("  ·  ".join(parts)), indent=2)
    if unknown:
        listed = N(", ".join(f"{k} ×{v}" for k, v in unknown.items()))
        console.print((f"unknown events: {listed}", "yellow"), indent=2)


def _turn(turn: Turn, console: Page, with_path: bool = False) -> None:
    info = turn.stream.capture
    console.blank()
    parts = [""] if turn.interaction is None else ["", f"interaction {turn.interaction}"]
    request = turn.request
    if turn.status is not None:
        parts.append(f"HTTP {turn.status}")
    events = sum(turn.stream.event_counts.values())
    messages = len(turn.stream.messages)
    if info.container == "none":
        parts.append("no streamed response")
    else:
        parts.append(f"{info.container}, {_text.counted(events, 'event')}")
    parts.append(_text.counted(messages, "message"))
    console.print((f"Turn {turn.number}" + "  ·  ".join(parts), "bold"))
    if request is not None:
        sent = N(" ".join(p for p in (request.method, request.url) if p) or "request")
        if with_path:  # several captures: the file first, so a narrow terminal cuts the URL, not it
            console.print((f"{N(info.path)}:{request.pos.line}  {sent}", "dim"), indent=2, overflow="ellipsis")
        else:
            console.print((f"{sent}  (line {request.pos.line})", "dim"), indent=2, overflow="ellipsis")


def _header(report: Report, console: Page) -> None:
    info = report.stream.capture
    container = info.container + (f", {info.compressed}" if info.compressed else "")
    provider = info.provider + (" (forced)" if info.provider_forced else " (detected)")
    messages = len(report.stream.messages)
    parts = [container, provider, _text.counted(info.frames, "event"), human(info.size, rounded=True)]
    if info.duration is not None:
        parts.append(f"{info.duration:.2f} s")
    parts.append(_text.counted(messages, "message"))
    _path_and_facts(console, info.path, parts, report.unknown_events)


def _calls(report: Report, console: Page, options: RenderOptions) -> None:
    console.blank()
    _call_table(report, report.stream, console, options)


def _call_table(report: Report, stream: AccumulatedStream, console: Page, options: RenderOptions) -> None:
    """One row per call (the columns a user scans), then its input and where it came from."""
    every = stream.calls
    if not every:
        console.print(("No tool calls.", "dim"))
        return
    calls = options.rows(every)
    many_messages = len(stream.messages) > 1
    headers = ["#", "msg", "block", "id", "name", "frags", "bytes", "status"]
    rows = [
        [
            str(report.number(call)),
            str(call.message + 1),
            "" if call.index is None else str(call.index),
            N(call.call_id or "—"),
            N(call.name or "—") + (" (server)" if call.server_side else ""),
            str(call.fragment_count),
            str(call.byte_count),
            report.verdicts[report.number(call) - 1].status,
        ]
        for call in calls
    ]
    if not many_messages:
        headers.pop(1)
        rows = [row[:1] + row[2:] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    right = {"#", "msg", "block", "frags", "bytes"}
    _fit_id_and_name(headers, rows, widths, options.width)

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if h in right else c.ljust(w) for c, w, h in zip(cells, widths, headers, strict=False)
        ).rstrip()

    console.print(("Tool calls", "bold"), f" ({len(every):,})")
    console.print((line(headers), "bold"))
    indent = widths[0] + 2
    for call, row in zip(calls, rows, strict=True):
        status = (row[-1], TONE_STYLES[report.verdicts[report.number(call) - 1].tone])
        console.print(line(row[:-1]) + "  ", status, overflow="ellipsis")
        console.print("input ", _input_preview(call), style="dim", indent=indent, overflow="ellipsis")
        console.print(("from  " + N(call.input_source), "dim"), indent=indent)
        for extra in report.extras.get(report.number(call), ()):
            for extra_line in extra.lines:
                console.print(N(extra_line), indent=indent)
    _text.more(console, len(every) - len(calls), "call", "replay --format json")


def _fit_id_and_name(headers: list[str], rows: list[list[str]], widths: list[int], width: int) -> None:
    """Long ids and tool names (an MCP server's ``mcp__server__tool``) abbreviated in the middle so
    a row, its status last, fits the line: the id first, then the name, neither below
    12 cells (narrower, the row runs over rather than keep a word or two). ``--call N`` and the JSON
    report give them whole."""
    id_, name = headers.index("id"), headers.index("name")
    room = width - sum(w for i, w in enumerate(widths) if i not in (id_, name)) - 2 * (len(widths) - 1)
    fits = {id_: _narrowed(widths[id_], room - widths[name], 12)}
    fits[name] = _narrowed(widths[name], room - fits[id_], 12)
    for column, fit in fits.items():
        if fit < widths[column]:
            widths[column] = fit
            for row in rows:
                row[column] = abbreviate(row[column], fit)


def _narrowed(natural: int, room: int, least: int) -> int:
    return max(min(natural, least), min(natural, room))


def _input_preview(call: ToolCall) -> str:
    if call.parse_failure is not None or call.status == "abandoned":
        return N(_clip(call.raw_arguments or "(empty)", 200))
    return N(_clip(jsontext.shown(call.arguments).decode(), 200))


def _one_call(report: Report, console: Page, wanted: str, options: RenderOptions) -> None:
    console.blank()
    every = report.calls
    matches = [every[n - 1] for n in report.selection]
    if not matches:
        console.print((N(f"No call {wanted!r} in this capture (calls: {report.call_listing()})."), "yellow"))
        return
    for call in matches:
        console.print(
            (f"Call {report.number(call)}", "bold"),
            f": {N(call.label)}  {N(call.block_type)}, message {call.message + 1}, block {call.index}",
        )
        console.print(f"  started  line {call.started.line} (event {call.started.number})")
        if call.ended is not None:
            console.print(f"  ended    line {call.ended.line} (event {call.ended.number})")
        else:
            console.print((f"  ended    never: {N(str(call.abandon_cause))}", "red"))
        start_input = N(_clip(jsontext.shown(call.start_input).decode(), 80))
        console.print(f"  start input  {start_input}")
        console.print(f"  source   {N(call.input_source)}")
        shown = len(options.rows(range(call.fragment_count)))
        rows = [
            [str(number), str(position.line), str(position.number), N(repr(fragment))]
            for number, position, fragment in zip(
                range(1, shown + 1), call.fragment_positions, call.fragment_texts[:shown], strict=False
            )
        ]
        if call.fragment_count:
            console.table(["#", "line", "event", "fragment"], rows, right=[True, True, True, False])
            _text.more(console, call.fragment_count - shown, "fragment", "replay --call ID --format json")
        if call.parse_failure is None and call.arguments is not None:
            console.print("  reassembled input:")
            text = _neutral.keeping_lines(jsontext.shown(call.arguments, orjson.OPT_INDENT_2).decode())
            console.print("    " + text.replace("\n", "\n    "))
        else:
            failure = call.parse_failure
            console.print(f"  raw arguments ({_text.counted(call.byte_count, 'byte')}):")
            console.print("    " + N(call.raw_arguments))
            if failure is not None:
                console.print(
                    (f"  does not parse ({failure.kind}): {N(failure.detail)} at byte {failure.position}", "red")
                )
        for extra in report.extras.get(report.number(call), ()):
            for extra_line in extra.lines:
                console.print("  " + N(extra_line))


def _timeline(report: Report, console: Page, options: RenderOptions) -> None:
    console.blank()
    console.print(("Timeline", "bold"))
    timeline = report.timeline
    interaction = None
    shown = options.rows(timeline.rows)
    for row in shown:
        if row.interaction is not None and row.interaction != interaction:
            interaction = row.interaction
            console.print((f"interaction {N(str(interaction))}", "bold"))
        label = row.frame_type + row.detail
        if row.count == 1:
            events, lines = str(row.first), f"line {row.first_line}"
        else:
            events = f"{row.first}-{row.last}"
            lines = f"lines {row.first_line}-{row.last_line}"
            label += f" ×{row.count} ({row.size} chars)"
        console.print(f"{events:>11}  {lines:<17} {N(label)}", overflow="ellipsis")
    _text.more(console, len(timeline.rows) - len(shown), "timeline row", "--max-rows 0")
    if timeline.hidden:
        kept = f"a replay keeps the first {len(timeline.rows):,}"
        console.print((f"… {timeline.hidden:,} more timeline rows not kept ({kept})", "dim"))


def _findings(report: Report, console: Page, options: RenderOptions) -> None:
    console.blank()
    if not report.findings:
        console.print(("No findings.", "green"))
        return
    console.print(("Findings", "bold"), f" ({len(report.findings):,})")
    shown = options.rows(report.findings)
    for finding in shown:
        _text.finding(finding, console)
    _text.more(console, len(report.findings) - len(shown), "finding", "replay --format json")


def _summary(report: Report, console: Page) -> None:
    counts = report.counts
    parts = [
        _text.counted(counts[Severity.ERROR], "error"),
        _text.counted(counts[Severity.WARNING], "warning"),
        _text.counted(counts[Severity.INFO], "info", "info"),
    ]
    calls = len(report.calls)
    verdict = (
        [("failed", "bold red"), f" (--fail-on {report.options.fail_on.label})"]
        if report.failed
        else [("passed", "bold green")]
    )
    console.blank()
    over = f" over {len(report.turns)} turns" if report.conversation and len(report.turns) != 1 else ""
    console.print(f"{', '.join(parts)} in {_text.counted(calls, 'tool call')}{over}: ", *verdict)


def _clip(text: str, limit: int) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"
