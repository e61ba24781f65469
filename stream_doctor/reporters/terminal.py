"""The human report: capture summary, tool-call table, findings, one-line summary.

A conversation (a HAR file, a cassette, an envelope of several turns) gets the file's summary,
then each turn's request and tool-call table, then every finding. Renders through a ``rich``
Console of the options' width and colours into a string.
"""

from __future__ import annotations

from typing import Hashable

import orjson
from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
from stream_doctor.capture.base import Frame
from stream_doctor.conversation.model import Turn
from stream_doctor.events import ArgsDelta, BlockDelta, Event
from stream_doctor.findings import Severity
from stream_doctor.report import Report
from stream_doctor.reporters import RenderOptions, _text

STATUS_STYLES = {"complete": "green", "abandoned": "red"}


def render(report: Report, options: RenderOptions) -> str:
    console, buffer = _text.console(options)
    if report.conversation:
        _conversation_header(report, console)
    else:
        _header(report, console)
    if options.timeline:
        _timeline(report, console)
    if report.selected is not None:
        _one_call(report, console, report.selected)
    elif report.conversation:
        for turn in report.turns:
            _turn(turn, console)
            _call_table(turn.stream, console)
    else:
        _calls(report, console)
    _findings(report, console)
    _execution_note(report, console)
    _summary(report, console)
    return _text.finish(buffer, options)


def _execution_note(report: Report, console: Console) -> None:
    note = report.execution_note
    if note is not None:
        console.print()
        console.print(Text("note: " + note, style="cyan"))


def _conversation_header(report: Report, console: Console) -> None:
    source = report.source
    assert source is not None
    info = report.stream.capture
    container = source.container + (f", {source.compressed}" if source.compressed else "")
    provider = info.provider + (" (forced)" if info.provider_forced else " (detected)")
    parts = [container, provider]
    if source.interactions:
        parts.append(f"{source.interactions} interaction{'s' if source.interactions != 1 else ''}")
        if source.skipped:
            parts[-1] += f" ({source.skipped} not LLM calls, skipped)"
    turns = len(report.turns)
    parts += [f"{turns} turn{'s' if turns != 1 else ''}", _size(source.size)]
    console.print(Text(source.path, style="bold"))
    console.print(Padding(Text("  ·  ".join(parts)), (0, 0, 0, 2), expand=False), highlight=False)
    unknown = report.unknown_events
    if unknown:
        listed = ", ".join(f"{k} ×{v}" for k, v in unknown.items())
        console.print(Padding(Text(f"unknown events: {listed}", style="yellow"), (0, 0, 0, 2), expand=False))


def _turn(turn: Turn, console: Console) -> None:
    info = turn.stream.capture
    console.print()
    head = Text(f"Turn {turn.number}", style="bold")
    parts = [""] if turn.interaction is None else ["", f"interaction {turn.interaction}"]
    request = turn.request
    if turn.status is not None:
        parts.append(f"HTTP {turn.status}")
    events = sum(turn.stream.event_counts.values())
    messages = len(turn.stream.messages)
    if info.container == "none":
        parts.append("no streamed response")
    else:
        parts.append(f"{info.container}, {events} event{'s' if events != 1 else ''}")
    parts.append(f"{messages} message{'s' if messages != 1 else ''}")
    head.append("  ·  ".join(parts), style="")
    console.print(head, highlight=False)
    if request is not None:
        sent = " ".join(p for p in (request.method, request.url) if p) or "request"
        text = Text(f"{sent}  (line {request.pos.line})", style="dim")
        console.print(Padding(text, (0, 0, 0, 2), expand=False), no_wrap=True, overflow="ellipsis")


def _header(report: Report, console: Console) -> None:
    info = report.stream.capture
    container = info.container + (f", {info.compressed}" if info.compressed else "")
    provider = info.provider + (" (forced)" if info.provider_forced else " (detected)")
    messages = len(report.stream.messages)
    parts = [container, provider, f"{info.frames} events", _size(info.size)]
    if info.duration is not None:
        parts.append(f"{info.duration:.2f} s")
    parts.append(f"{messages} message{'s' if messages != 1 else ''}")
    console.print(Text(info.path, style="bold"))
    console.print(Padding(Text("  ·  ".join(parts)), (0, 0, 0, 2), expand=False), highlight=False)
    unknown = report.unknown_events
    if unknown:
        listed = ", ".join(f"{k} ×{v}" for k, v in unknown.items())
        console.print(Padding(Text(f"unknown events: {listed}", style="yellow"), (0, 0, 0, 2), expand=False))


def _calls(report: Report, console: Console) -> None:
    console.print()
    _call_table(report.stream, console)


def _call_table(stream: AccumulatedStream, console: Console) -> None:
    """One row per call (the columns a user scans), then its input and where it came from."""
    calls = stream.calls
    if not calls:
        console.print("No tool calls.", style="dim")
        return
    many_messages = len(stream.messages) > 1
    headers = ["#", "msg", "block", "id", "name", "frags", "bytes", "status"]
    rows = [
        [
            str(call.ordinal + 1),
            str(call.message + 1),
            "" if call.index is None else str(call.index),
            call.call_id or "—",
            (call.name or "—") + (" (server)" if call.server_side else ""),
            str(call.fragment_count),
            str(call.byte_count),
            _status(call),
        ]
        for call in calls
    ]
    if not many_messages:
        headers.pop(1)
        rows = [row[:1] + row[2:] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    right = {"#", "msg", "block", "frags", "bytes"}

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if h in right else c.ljust(w) for c, w, h in zip(cells, widths, headers, strict=False)
        ).rstrip()

    console.print(f"[bold]Tool calls[/] ({len(calls)})")
    console.print(Text(line(headers), style="bold"))
    indent = widths[0] + 2
    for call, row in zip(calls, rows, strict=True):
        text = Text(line(row[:-1]) + "  ")
        text.append(row[-1], style=STATUS_STYLES[call.status])
        console.print(text, no_wrap=True, overflow="ellipsis")
        preview = Text("input ", style="dim")
        preview.append(_input_preview(call))
        console.print(Padding(preview, (0, 0, 0, indent), expand=False), no_wrap=True, overflow="ellipsis")
        console.print(Padding(Text("from  " + call.input_source, style="dim"), (0, 0, 0, indent), expand=False))


def _status(call: ToolCall) -> str:
    if call.status == "abandoned":
        return f"abandoned ({call.abandon_cause})"
    if call.parse_failure is not None:
        return f"unparseable ({call.parse_failure.kind})"
    return "complete"


def _input_preview(call: ToolCall) -> str:
    if call.parse_failure is not None or call.status == "abandoned":
        return _clip(call.raw_arguments or "(empty)", 200)
    return _clip(orjson.dumps(call.arguments).decode(), 200)


def _one_call(report: Report, console: Console, wanted: str) -> None:
    console.print()
    every = report.calls
    matches = [every[n - 1] for n in report.selection]
    if not matches:
        known = ", ".join(c.call_id or f"#{c.ordinal + 1}" for c in every) or "none"
        console.print(f"No call {escape(wanted)!s} in this capture (calls: {escape(known)}).", style="yellow")
        return
    for call in matches:
        console.print(
            f"[bold]Call {call.ordinal + 1}[/]: {escape(call.label)}  {call.block_type}, message {call.message + 1}, block {call.index}",
            highlight=False,
        )
        console.print(f"  started  line {call.started.line} (event {call.started.number})", highlight=False)
        if call.ended is not None:
            console.print(f"  ended    line {call.ended.line} (event {call.ended.number})", highlight=False)
        else:
            console.print(f"  ended    never: {call.abandon_cause}", style="red", highlight=False)
        console.print(f"  start input  {escape(_clip(orjson.dumps(call.start_input).decode(), 80))}", highlight=False)
        console.print(f"  source   {escape(call.input_source)}", highlight=False)
        table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
        for column in ("#", "line", "event", "fragment"):
            table.add_column(column, justify="right" if column != "fragment" else "left")
        for number, fragment in enumerate(call.fragments, 1):
            table.add_row(str(number), str(fragment.pos.line), str(fragment.pos.number), escape(repr(fragment.text)))
        if call.fragments:
            console.print(table)
        if call.parse_failure is None and call.arguments is not None:
            console.print("  reassembled input:", highlight=False)
            text = orjson.dumps(call.arguments, option=orjson.OPT_INDENT_2).decode()
            console.print(Text("    " + text.replace("\n", "\n    ")), highlight=False)
        else:
            failure = call.parse_failure
            console.print(f"  raw arguments ({call.byte_count} bytes):", highlight=False)
            console.print(Text("    " + call.raw_arguments), highlight=False)
            if failure is not None:
                console.print(
                    f"  does not parse ({failure.kind}): {escape(failure.detail)} at byte {failure.position}",
                    style="red",
                    highlight=False,
                )


def _timeline(report: Report, console: Console) -> None:
    console.print()
    console.print("[bold]Timeline[/]")
    runs: list[list[tuple[Frame, Event]]] = []
    for frame, event in report.events:
        fold = _fold_key(frame, event)
        if fold is not None and runs and _fold_key(*runs[-1][-1]) == fold:
            runs[-1].append((frame, event))
        else:
            runs.append([(frame, event)])
    interaction = None
    for run in runs:
        first, last = run[0][0], run[-1][0]
        if first.interaction is not None and first.interaction != interaction:
            interaction = first.interaction
            console.print(Text(f"interaction {interaction}", style="bold"))
        label = _frame_type(first) + _detail(run[0][1])
        if len(run) == 1:
            events, lines = str(first.pos.number), f"line {first.pos.line}"
        else:
            size = sum(len(e.fragment) if isinstance(e, ArgsDelta) else getattr(e, "size", 0) for _, e in run)
            events = f"{first.pos.number}-{last.pos.number}"
            lines = f"lines {first.pos.line}-{last.pos.line}"
            label += f" ×{len(run)} ({size} chars)"
        console.print(Text(f"{events:>11}  {lines:<17} {label}"), no_wrap=True, overflow="ellipsis")


def _fold_key(frame: Frame, event: Event) -> tuple[str, Hashable, str] | None:
    if isinstance(event, ArgsDelta):
        return ("args", event.key, event.delta_type)
    if isinstance(event, BlockDelta):
        return ("block", event.key, event.delta_type)
    return None


def _frame_type(frame: Frame) -> str:
    if frame.kind != "event":
        return f"[{frame.kind}]"
    value = frame.value
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return str(value["type"])
    return frame.event or "(frame)"


def _detail(event: Event) -> str:
    name = type(event).__name__
    key = getattr(event, "key", None)
    parts = [] if key is None else [f"index {key}"]
    for attr in ("delta_type", "block_type", "call_id", "name", "reason", "error_type", "event_type"):
        value = getattr(event, attr, None)
        if value:
            parts.append(str(value))
    if name in ("Malformed", "Problem"):
        parts.append(str(getattr(event, "reason", None) or getattr(event, "message", "")))
    return "  " + " ".join(parts) if parts else ""


def _findings(report: Report, console: Console) -> None:
    console.print()
    if not report.findings:
        console.print("[green]No findings.[/]")
        return
    console.print(f"[bold]Findings[/] ({len(report.findings)})")
    for finding in report.findings:
        _text.finding(finding, console)


def _summary(report: Report, console: Console) -> None:
    counts = report.counts
    parts = [
        f"{counts[Severity.ERROR]} error{'s' if counts[Severity.ERROR] != 1 else ''}",
        f"{counts[Severity.WARNING]} warning{'s' if counts[Severity.WARNING] != 1 else ''}",
        f"{counts[Severity.INFO]} info",
    ]
    calls = len(report.calls)
    verdict = (
        f"[bold red]failed[/] (--fail-on {report.options.fail_on.label})" if report.failed else "[bold green]passed[/]"
    )
    console.print()
    over = f" over {len(report.turns)} turns" if report.conversation and len(report.turns) != 1 else ""
    console.print(
        f"{', '.join(parts)} in {calls} tool call{'s' if calls != 1 else ''}{over}: {verdict}", highlight=False
    )


def _clip(text: str, limit: int) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / 1024 / 1024:.1f} MiB"
