"""The HTML report: one self-contained page (no network, no CDN) that shows a replay's bug at a glance.

The findings come first, errors before warnings before info; then the tool calls, a call the
application ran wrongly (an SD1xx execution finding on it) marked so; then, per turn, the capture's
events and every call on a timeline (x: event number): where each call started, its fragments,
where it completed (or was abandoned), where the application ran it, where each client profile
would have run it (``--client``) and each finding at its place. Every mark stays inside its lane,
and marks of different meanings are on different rows of a call's lane, so none hides another;
marks of one row that would touch share one mark with a count. Clicking a call shows its
reassembled input beside what the application ran and what each client profile would have run.

Rendered by jinja2 with autoescaping on (the ``html`` extra), so capture
content is always text, never markup or script; it is also neutralised like every text report
(control characters as escapes). A Content-Security-Policy forbids every fetch.

Everything per turn is gathered in one pass over the rows, findings and executions, so the page
costs time linear in the turns, calls, findings and timeline rows.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from importlib import resources
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Iterable, Iterator

import orjson

from stream_doctor import jsontext
from stream_doctor.findings import Severity
from stream_doctor.report import LISTED_EXECUTIONS, Report, call_status
from stream_doctor.reporters import MissingExtra, RenderOptions, _neutral

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import ExecutionRecord, ToolCall
    from stream_doctor.conversation.model import Turn
    from stream_doctor.findings import Finding
    from stream_doctor.timeline import Row

FRAGMENT_TICKS = 200  # per call on the timeline; the detail lists up to max_rows
EVENT_MARKS = 2_000  # per turn's events lane: beyond, neighbouring rows share a mark
GLYPH_GAP = (
    5.0  # percent of a lane: glyphs of one row closer than this share a mark ("◆×4" is ~24 px of ~600 at 800 px)
)
LABEL_GAP = 10.0  # percent: finding codes closer than this share a mark ("SD102 +2" is ~56 px)
SHOWN_INPUT = 4_000  # characters of an executed or predicted input shown in a call's detail
#: Characters of any one value the page shows (a name, a message, raw arguments): the cut is made once,
#: where the template writes values, so a 10 MB tool name in five places is not a 50 MB page.
SHOWN_TEXT = 20_000
EXECUTION_RULES = "SD1"  # the execution checks: a finding of theirs on a call means the application ran it wrongly

#: Every colour and shape the timeline draws, in the legend's order: (css class, glyph, meaning).
LEGEND: tuple[tuple[str, str, str], ...] = (
    ("ev-record", "", "a request or execute record of the capture"),
    ("ev-start", "", "a message, block or call starts"),
    ("ev-args", "", "argument fragments"),
    ("ev-text", "", "text or thinking deltas"),
    ("ev-end", "", "a block, call or message ends; the finish"),
    ("ev-other", "", "keep-alive and other events"),
    ("ev-problem", "", "an error event or a frame that could not be read"),
    ("call", "", "a call, from its start to its completion"),
    ("fragment", "", "one of its argument fragments"),
    ("done", "✓", "completed"),
    ("abandoned", "✗", "abandoned: never completed"),
    ("executed", "▶", "the application ran it"),
    ("executed wrong", "▶", "the application ran it wrongly (an SD1xx finding)"),
    ("client-differs", "◆", "a client profile would run it otherwise (--client)"),
    ("client-ok", "◆", "a client profile would run it as the stream says"),
    ("finding-error", "SD…", "an error finding"),
    ("finding-warning", "SD…", "a warning"),
    ("finding-info", "SD…", "an info finding"),
)


@dataclass(frozen=True)
class Mark:
    """Something placed on a timeline row: ``left``/``width`` in percent of the turn's events.

    A bar (``width`` > 0) covers its events; a glyph or code (``width`` 0) is centred on its event,
    or held by its start or end when it sits at an edge (``anchor``), so it stays inside the lane."""

    left: float
    width: float
    kind: str  # css class: one of LEGEND's
    title: str
    label: str = ""
    target: str = ""  # the call number a click selects
    anchor: str = "mid"  # start, mid, end (held inside the lane at its edges) or after: where ``left`` is on the glyph


@dataclass(frozen=True)
class Axis:
    """A turn's x axis: event ``first`` to event ``last``, one cell each, in percent of the lane."""

    first: int
    last: int

    @property
    def cells(self) -> int:
        return self.last - self.first + 1

    def left(self, number: int) -> float:
        return round(100.0 * (min(max(number, self.first), self.last) - self.first) / self.cells, 3)

    def bar(self, start: int, end: int, kind: str, title: str, target: str = "") -> Mark:
        """A mark covering events ``start`` to ``end`` (both inside the lane, at least one cell)."""
        left = self.left(start)
        width = round(100.0 * (max(min(end, self.last), start) - max(start, self.first) + 1) / self.cells, 3)
        return Mark(left, max(min(width, round(100.0 - left, 3)), 0.0), kind, title, "", target)

    def centre(self, number: int) -> float:
        return round(self.left(number) + 50.0 / self.cells, 3)

    def after(self, number: int, kind: str, title: str, label: str, target: str = "") -> Mark:
        """A glyph that begins where event ``number``'s cell ends (past the last cell: in the lane's margin)."""
        return Mark(round(self.left(number) + 100.0 / self.cells, 3), 0.0, kind, title, label, target, "after")

    def glyph(self, number: int, kind: str, title: str, label: str, target: str = "") -> Mark:
        at = self.centre(number)
        anchor = "start" if at < 4.0 else "end" if at > 96.0 else "mid"
        return Mark(at, 0.0, kind, title, label, target, anchor)


def render(report: Report, options: RenderOptions) -> str:
    try:
        import jinja2
    except ImportError:
        from stream_doctor.install import install_extra

        raise MissingExtra(f"the HTML report needs jinja2: {install_extra('html')}") from None
    from markupsafe import Markup

    environment = jinja2.Environment(
        autoescape=True,
        # every value neutralised as it is written; a macro's output (Markup) was, value by value
        finalize=lambda value: (
            _neutral.keeping_lines(_cut(value)) if isinstance(value, str) and not isinstance(value, Markup) else value
        ),
        undefined=jinja2.StrictUndefined,
    )
    source = resources.files("stream_doctor.reporters").joinpath("templates/report.html.j2").read_text("utf-8")
    page = environment.from_string(source).render(_context(report, options))
    return _neutral.defuse_commands(page)


def _cut(text: str) -> str:
    """A value as the page shows it: at most SHOWN_TEXT characters, and a marker saying how many more."""
    if len(text) <= SHOWN_TEXT:
        return text
    return f"{text[:SHOWN_TEXT]}… ({len(text) - SHOWN_TEXT:,} more characters; the JSON report has them all)"


@dataclass(frozen=True)
class _Places:
    """Where things belong, looked up once for the whole page (a scan per turn or row is quadratic)."""

    numbered: dict[int, int]  # id(call) -> call number
    turn_of_finding: list[int | None]  # per finding of report.findings: the turn's index
    call_of_finding: list[int | None]  # per finding: the call number it is about
    wrong: dict[int, list[str]]  # call number -> the SD1xx codes found on it
    executions: dict[
        int, list[tuple[ExecutionRecord, int]]
    ]  # call number -> its first executions, with their turn index
    unlisted: dict[int, int]  # call number -> its executions beyond LISTED_EXECUTIONS (counted, not shown)


def _places(report: Report) -> _Places:
    turns = report.turns
    numbered = {id(call): n for n, call in enumerate(report.calls, 1)}
    by_interaction = {turn.interaction: i for i, turn in enumerate(turns) if turn.interaction is not None}
    ends = list(accumulate(turn.stream.capture.frames for turn in turns))  # an envelope numbers its turns' frames on
    by_id: dict[tuple[int | None, str], int] = {}
    for i, turn in enumerate(turns):
        for call in turn.stream.calls:
            if call.call_id is not None:
                by_id.setdefault((i, call.call_id), numbered[id(call)])
                by_id.setdefault((None, call.call_id), numbered[id(call)])
    executions: dict[int, list[tuple[ExecutionRecord, int]]] = {}
    unlisted: dict[int, int] = {}
    executed_at: dict[tuple[int, int], int] = {}  # (turn index, event) -> the call number run there
    for i, turn in enumerate(turns):
        calls = turn.stream.calls
        for record in turn.stream.executions:
            if record.call is not None and 0 <= record.call < len(calls):
                run = numbered[id(calls[record.call])]
                listed = executions.setdefault(run, [])
                if len(listed) < LISTED_EXECUTIONS:
                    listed.append((record, i))
                else:
                    unlisted[run] = unlisted.get(run, 0) + 1
                if record.origin is None:
                    executed_at.setdefault((i, record.pos.number), run)
    turn_of: list[int | None] = []
    call_of: list[int | None] = []
    wrong: dict[int, list[str]] = {}
    for finding in report.findings:
        where = finding.location
        if len(turns) == 1:
            index: int | None = 0
        elif where.interaction is not None and where.interaction in by_interaction:
            index = by_interaction[where.interaction]
        elif where.event is not None and ends:
            index = min(bisect_left(ends, where.event), len(turns) - 1)
        else:
            index = None
        number: int | None = None
        if finding.code.startswith(EXECUTION_RULES) and index is not None and where.event is not None:
            number = executed_at.get((index, where.event))
        if number is None and finding.call_id is not None:
            number = by_id.get((index, finding.call_id)) or by_id.get((None, finding.call_id))
        if number is not None and finding.code.startswith(EXECUTION_RULES):
            codes = wrong.setdefault(number, [])
            if finding.code not in codes:
                codes.append(finding.code)
        turn_of.append(index)
        call_of.append(number)
    return _Places(numbered, turn_of, call_of, wrong, executions, unlisted)


def _context(report: Report, options: RenderOptions) -> dict[str, Any]:
    places = _places(report)
    order = sorted(range(len(report.findings)), key=lambda i: -int(report.findings[i].severity))  # stable
    shown = options.rows(order)
    named: dict[int, list[str]] = {}
    for i, number in enumerate(places.call_of_finding):
        if number is not None:
            f = report.findings[i]
            named.setdefault(number, []).append(f"{f.code} {f.name}")
    calls = [
        _call(report, call, places.numbered[id(call)], options, named, places) for call in options.rows(report.calls)
    ]
    turns = report.turns or ()
    rows = _rows_by_turn(report)
    findings_by_turn: list[list[Finding]] = [[] for _ in turns]
    for f, index in zip(report.findings, places.turn_of_finding, strict=True):
        if index is not None:
            findings_by_turn[index].append(f)
    info = report.stream.capture
    return {
        "title": f"stream-doctor: {report.path}",
        "report": report,
        "path": report.path,
        "info": info,
        "facts": _facts(report),
        "counts": {s.label: n for s, n in report.counts.items()},
        "failed": report.failed,
        "fail_on": report.options.fail_on.label,
        "timelines": [
            _timeline(report, turn, rows[i], findings_by_turn[i], places, options) for i, turn in enumerate(turns)
        ],
        "multi": report.conversation,
        "legend": LEGEND,
        "hidden_rows": report.timeline.hidden,
        "kept_rows": len(report.timeline.rows),
        "calls": calls,
        "executions": any(places.executions.values()),
        "hidden_calls": len(report.calls) - len(calls),
        "findings": [
            _finding(report.findings[i], places.call_of_finding[i], _turn_number(report, places, i)) for i in shown
        ],
        "hidden_findings": len(report.findings) - len(shown),
        "note": getattr(report, "execution_note", None),
    }


def _turn_number(report: Report, places: _Places, i: int) -> int | None:
    index = places.turn_of_finding[i]
    return report.turns[index].number if report.conversation and index is not None else None


def _facts(report: Report) -> list[str]:
    """What the terminal report's header says of the capture, in its words and counts."""
    info = report.stream.capture
    source = report.source
    if report.conversation and source is not None:
        facts = [source.container + (f", {source.compressed}" if source.compressed else "")]
        if source.interactions:
            facts.append(_counted(source.interactions, "interaction"))
        facts.append(_counted(len(report.turns), "turn"))
        return facts
    container = info.container + (f", {info.compressed}" if info.compressed else "")
    return [container, _counted(info.frames, "event"), _counted(len(report.stream.messages), "message")]


def _counted(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def turn_events(report: Report, turn: Turn) -> int:
    """The events the terminal report counts for a turn: a single stream's frames (its header), a
    conversation turn's streamed events (its ``Turn N`` line)."""
    if not report.conversation:
        return report.stream.capture.frames
    return sum(turn.stream.event_counts.values())


def _rows_by_turn(report: Report) -> list[list[Row]]:
    """The timeline's rows of each turn, in one pass: rows come in turn order; a HAR's or cassette's
    name their interaction, an envelope's are numbered on across its turns."""
    turns = report.turns
    rows = report.timeline.rows
    if len(turns) <= 1:
        return [list(rows)] if turns else []
    by_interaction = {turn.interaction: i for i, turn in enumerate(turns) if turn.interaction is not None}
    ends = list(accumulate(turn.stream.capture.frames for turn in turns))
    buckets: list[list[Row]] = [[] for _ in turns]
    at = 0
    for row in rows:
        index = by_interaction.get(row.interaction) if row.interaction is not None else None
        if index is None:
            while at < len(turns) - 1 and row.first > ends[at]:
                at += 1
            index = at
        buckets[index].append(row)
    return buckets


def _timeline(
    report: Report, turn: Turn, rows: list[Row], findings: list[Finding], places: _Places, options: RenderOptions
) -> dict[str, Any]:
    """One turn: an events lane, a lane per call (rows by meaning), a findings lane; x is the event number."""
    stream = turn.stream
    shown_calls = options.rows(stream.calls)
    numbers: list[int] = [row.first for row in rows[:1]] + [row.last for row in rows[-1:]]
    for call in shown_calls:
        numbers += [p.number for p in (call.started, call.ended, call.abandon_pos) if p is not None]
    numbers += [record.pos.number for record in stream.executions if record.origin is None]
    numbers += [f.location.event for f in findings if f.location.event is not None]
    first = min(numbers, default=1)
    last = max([*numbers, first + max(stream.capture.frames, 1) - 1])
    axis = Axis(first, last)
    lanes = [_lane(report, call, places, axis) for call in shown_calls]
    codes = [
        (
            f.location.event if f.location.event is not None else first,
            int(f.severity),
            f"finding-{f.severity.label}",
            f"{f.code} {f.name}: {f.message}",
            f.code,
            1,
        )
        for f in findings
    ]
    return {
        "turn": turn.number,
        "interaction": turn.interaction,
        "events": turn_events(report, turn),
        "streamed": stream.capture.container != "none",
        "axis": f"events {first}–{last}",
        "event_marks": list(_event_marks(rows, axis)),
        "lanes": lanes,
        "hidden_lanes": len(stream.calls) - len(shown_calls),
        "findings": _packed(axis, codes, LABEL_GAP),
        "multi": report.conversation,
    }


def _lane(report: Report, call: ToolCall, places: _Places, axis: Axis) -> dict[str, Any]:
    number = places.numbered[id(call)]
    target = str(number)
    end = call.ended or call.abandon_pos
    stream_row = [
        axis.bar(
            call.started.number,
            end.number if end is not None else axis.last,
            "call",
            f"call {number}: {call.label} from event {call.started.number}",
            target,
        )
    ]
    positions = call.fragment_positions
    step = max(1, -(-len(positions) // FRAGMENT_TICKS))
    stream_row += [
        Mark(
            axis.centre(positions[i].number),
            0.0,
            "fragment",
            f"fragment {i + 1} at event {positions[i].number}",
            "",
            target,
        )
        for i in range(0, len(positions), step)
    ]
    # the outcome just after the bar's end, where no fragment of the call can be
    if call.ended is not None:
        stream_row.append(axis.after(call.ended.number, "done", f"completed at event {call.ended.number}", "✓", target))
    elif call.abandon_pos is not None:
        at = call.abandon_pos.number
        stream_row.append(axis.after(at, "abandoned", f"abandoned ({call.abandon_cause}) at event {at}", "✗", target))
    wrong = places.wrong.get(number)
    ran = [
        (
            record.pos.number,
            2 if wrong else 1,
            "executed wrong" if wrong else "executed",
            f"the application ran it at event {record.pos.number} with {_preview(record.input, 80)}"
            + (f" ({', '.join(wrong)})" if wrong else ""),
            "▶",
            1,
        )
        for record, _ in places.executions.get(number, ())
        if record.origin is None
    ]
    differs, agrees = _client_marks(report, number, axis.last)
    rows = [("", stream_row)]
    rows += [("ran", _merged(axis, ran, GLYPH_GAP, target))] if ran else []
    rows += [("clients differ", _merged(axis, differs, GLYPH_GAP, target))] if differs else []
    rows += [("clients agree", _merged(axis, agrees, GLYPH_GAP, target))] if agrees else []
    return {
        "number": number,
        "label": f"#{number} {call.name or '—'}",
        "rows": rows,
        "status": f"ran wrongly ({', '.join(wrong)})" if wrong else call_status(call),
    }


#: A glyph or code before it is laid out: event, weight (the heaviest names a shared mark), css
#: class, title, label and how many it stands for.
Placed = tuple[int, int, str, str, str, int]


def _merged(axis: Axis, placed: Iterable[Placed], gap: float, target: str = "") -> list[Mark]:
    """Glyphs or codes of one row, left to right; those closer than ``gap`` percent share one mark,
    drawn as the weightiest of them (an error over a warning, a wrong run over a right one) with how
    many it stands for, titled with each: no mark hides another."""
    marks: list[Mark] = []
    group: list[Placed] = []
    for item in sorted(placed, key=lambda p: (p[0], -p[1])):
        if group and axis.centre(item[0]) - axis.centre(group[0][0]) >= gap:
            marks.append(_shared(axis, group, target))
            group = []
        group.append(item)
    if group:
        marks.append(_shared(axis, group, target))
    return marks


def _packed(axis: Axis, placed: list[Placed], gap: float, rows: int = 3) -> list[list[Mark]]:
    """Codes left to right on up to ``rows`` rows, each on the first row where it touches no other
    (at one event, the weightiest first); what fits on none shares a mark on one more row (``_merged``)."""
    packed: list[list[Placed]] = [[] for _ in range(rows)]
    rest: list[Placed] = []
    for item in sorted(placed, key=lambda p: (p[0], -p[1])):
        at = axis.centre(item[0])
        row = next((r for r in packed if not r or at - axis.centre(r[-1][0]) >= gap), None)
        (rest if row is None else row).append(item)
    shown = [[_shared(axis, [item], "") for item in row] for row in packed if row]
    return shown + ([_merged(axis, rest, gap)] if rest else [])


def _shared(axis: Axis, group: list[Placed], target: str) -> Mark:
    event, _, kind, _, label, _ = max(group, key=lambda p: p[1])  # the first of the weightiest
    count = sum(p[5] for p in group)
    if count > 1:
        label += f"×{count}" if label in ("◆", "▶") else f" +{count - 1}"
    return axis.glyph(event, kind, "\n".join(p[3] for p in group), label, target)


def _client_marks(report: Report, number: int, end: int) -> tuple[list[Placed], list[Placed]]:
    """Where each client profile would run the call (the ``clients`` extra's hand-offs): those that
    differ from the correct client, and those that agree; a hand-off at the end of the stream at ``end``."""
    at: dict[tuple[int, bool], list[str]] = {}  # profiles that hand it over at the same event share a mark
    for extra in report.extras.get(number, ()):
        if extra.key != "clients" or not isinstance(extra.data, dict):
            continue
        for client, verdict in extra.data.items():
            if not isinstance(verdict, dict):
                continue
            agreeing = bool(verdict.get("agrees"))
            for handoff in verdict.get("handoffs") or ():
                if not isinstance(handoff, dict):
                    continue
                event = handoff.get("event")
                where = f"at event {event}" if isinstance(event, int) else "at the end of the stream"
                what = "runs it" if handoff.get("runs", True) else "holds it without running it"
                said = f"{client}: {what} {where}" + ("" if agreeing else " (differs)")
                at.setdefault((event if isinstance(event, int) else end, agreeing), []).append(said)
    differs = [(e, 1, "client-differs", "\n".join(t), "◆", len(t)) for (e, ok), t in sorted(at.items()) if not ok]
    agrees = [(e, 0, "client-ok", "\n".join(t), "◆", len(t)) for (e, ok), t in sorted(at.items()) if ok]
    return differs, agrees


def _event_marks(rows: list[Row], axis: Axis) -> Iterator[Mark]:
    """The events lane: one bar per row, or, for a long turn, per group of neighbouring rows (a page
    cannot draw more than EVENT_MARKS apart); rows of one event (a frame that made several events)
    always share a bar, so no bar lies on another. Each is titled with what it stands for."""
    size = -(-len(rows) // EVENT_MARKS) if rows else 1
    group: list[Row] = []
    for row in rows:
        if group and (len(group) >= size and row.first > group[-1].last):
            yield _event_bar(group, axis)
            group = []
        group.append(row)
    if group:
        yield _event_bar(group, axis)


def _event_bar(group: list[Row], axis: Axis) -> Mark:
    first, end = group[0], group[-1]
    last = max(row.last for row in group)
    if len(group) == 1:
        return axis.bar(first.first, last, _event_class(first.event), _run_title(first))
    weights: dict[str, int] = {}
    for row in group:
        css = _event_class(row.event)
        weights[css] = weights.get(css, 0) + row.count
    css = "ev-problem" if "ev-problem" in weights else max(weights, key=weights.__getitem__)  # what most are
    count = sum(weights.values())
    if len(group) <= 4:
        title = "\n".join(_run_title(row) for row in group)
    else:
        title = f"events {first.first}-{end.last}: {count} events in {len(group)} rows"
    return axis.bar(first.first, last, css, title)


def _event_class(name: str) -> str:
    if name in ("Request", "Execution"):
        return "ev-record"
    if name in ("ArgsDelta", "ArgsRun"):
        return "ev-args"
    if name == "BlockDelta":
        return "ev-text"
    if name in ("Malformed", "Problem", "StreamError", "Unknown"):
        return "ev-problem"
    if "Start" in name:
        return "ev-start"
    if "End" in name or "Stop" in name or "Finish" in name:
        return "ev-end"
    return "ev-other"


def _run_title(row: Row) -> str:
    where = f"event {row.first}" if row.count == 1 else f"events {row.first}-{row.last}"
    return f"{where}: {row.frame_type}{row.detail}" + (f" ×{row.count}" if row.count > 1 else "")


def _json(value: Any, indent: bool = False) -> str:
    """A value as JSON text, as every report shows one (``jsontext.shown``: any depth, any string)."""
    return jsontext.shown(value, orjson.OPT_INDENT_2 if indent else 0).decode()


def _preview(value: Any, limit: int) -> str:
    text = _json(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _shown(value: Any) -> str:
    text = _json(value, indent=True)
    return (
        text if len(text) <= SHOWN_INPUT else text[:SHOWN_INPUT] + f"\n… ({len(text) - SHOWN_INPUT:,} more characters)"
    )


def _call(
    report: Report,
    call: ToolCall,
    number: int,
    options: RenderOptions,
    named: dict[int, list[str]],
    places: _Places,
) -> dict[str, Any]:
    arguments = call.arguments if call.parse_failure is None else None
    reassembled = _json(arguments, indent=True) if call.parse_failure is None and arguments is not None else None
    shown = len(options.rows(call.fragment_texts))
    fragments = [
        {"number": n, "line": position.line, "event": position.number, "text": repr(text)}
        for n, position, text in zip(range(1, shown + 1), call.fragment_positions, call.fragment_texts, strict=False)
    ]
    wrong = places.wrong.get(number, [])
    ran = []
    for record, _ in places.executions.get(number, ()):
        same = reassembled is not None and record.input == arguments
        ran.append(
            {
                "where": f"line {record.pos.line} (event {record.pos.number})"
                if record.origin is None
                else f"given ({record.origin})",
                "input": _shown(record.input),
                "preview": _preview(record.input, 48),
                "same": same,
            }
        )
    status = call_status(call)
    return {
        "number": number,
        "turn": report.call_turns[number - 1],
        "id": call.call_id or "—",
        "name": call.name or "—",
        "label": call.label,
        "status": f"ran wrongly ({', '.join(wrong)})" if wrong else status,
        "status_class": "ran-wrongly" if wrong else status.split(" ", 1)[0],
        "stream_status": status,
        "wrong": wrong,
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
        "unlisted_runs": places.unlisted.get(number, 0),
        "clients": _clients(report, number, arguments, reassembled is not None),
        "extras": [line for extra in report.extras.get(number, ()) if extra.key != "clients" for line in extra.lines],
        "findings": named.get(number, []),
    }


def _clients(report: Report, number: int, arguments: Any, parsed: bool) -> list[dict[str, Any]]:
    """What each client profile would hand the tool (``--client``), beside the reassembled input."""
    shown = []
    for extra in report.extras.get(number, ()):
        if extra.key != "clients" or not isinstance(extra.data, dict):
            continue
        for client, verdict in extra.data.items():
            if not isinstance(verdict, dict):
                continue
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


def _finding(finding: Finding, call: int | None, turn: int | None) -> dict[str, Any]:
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.label,
        "location": str(finding.location),
        "message": finding.message,
        "hint": finding.hint,
        "related": [f"{r.label}: {r.location}" for r in finding.related],
        "call": str(call) if call is not None else "",
        "turn": turn,
        "error": finding.severity is Severity.ERROR,
    }
