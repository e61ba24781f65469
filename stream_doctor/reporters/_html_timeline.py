"""The HTML report's timeline: per turn, the capture's events and every call on lanes (x: the event number).

Where each call started, its fragments, where it completed (or was abandoned), where the application
ran it, where each client profile would have run it (``--client``) and each finding at its place.
Every mark stays inside its lane, and marks of different meanings are on different rows of a call's
lane, so none hides another; marks of one row that would touch share one mark with a count. The
axis says what it counts: the capture's records it draws (a request or execute record is one too,
beside the streamed events the turn's header counts).

Everything per turn is gathered in one pass over the rows, findings and executions, so the page
costs time linear in the turns, calls, findings and timeline rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING, Any, Iterable, Iterator

import orjson

from stream_doctor.reporters._text import counted
from stream_doctor.util import jsontext
from stream_doctor.values.report import LISTED_EXECUTIONS, Report

if TYPE_CHECKING:
    from stream_doctor.accumulate.executions import ExecutionRecord
    from stream_doctor.accumulate.stream import ToolCall
    from stream_doctor.conversation.model import Turn
    from stream_doctor.reporters import RenderOptions
    from stream_doctor.values.findings import Finding
    from stream_doctor.values.timeline_rows import Row

FRAGMENT_TICKS = 200  # per call on the timeline; the detail lists up to max_rows
EVENT_MARKS = 2_000  # per turn's events lane: beyond, neighbouring rows share a mark
GLYPH_GAP = (
    5.0  # percent of a lane: glyphs of one row closer than this share a mark ("◆×4" is ~24 px of ~600 at 800 px)
)
LABEL_GAP = 10.0  # percent: finding codes closer than this share a mark ("SD102 +2" is ~56 px)

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


@dataclass(frozen=True)
class Places:
    """Each call's runs, looked up once for the whole page (a scan per turn or row is quadratic)."""

    executions: dict[int, list[tuple[ExecutionRecord, int]]]  # call number -> its first runs, with their turn index
    unlisted: dict[int, int]  # call number -> its executions beyond LISTED_EXECUTIONS (counted, not shown)


def places(report: Report) -> Places:
    executions: dict[int, list[tuple[ExecutionRecord, int]]] = {}
    unlisted: dict[int, int] = {}
    for i, turn in enumerate(report.turns):
        calls = turn.stream.calls
        for record in turn.stream.executions:
            if record.call is not None and 0 <= record.call < len(calls):
                run = report.number(calls[record.call])
                listed = executions.setdefault(run, [])
                if len(listed) < LISTED_EXECUTIONS:
                    listed.append((record, i))
                else:
                    unlisted[run] = unlisted.get(run, 0) + 1
    return Places(executions, unlisted)


def timelines(report: Report, places: Places, options: RenderOptions) -> list[dict[str, Any]]:
    """Every turn's timeline, as the template draws it."""
    turns = report.turns or ()
    rows = _rows_by_turn(report)
    findings_by_turn: list[list[Finding]] = [[] for _ in turns]
    for f, index in zip(report.findings, report.places.turn, strict=True):
        if index is not None:
            findings_by_turn[index].append(f)
    return [_timeline(report, turn, rows[i], findings_by_turn[i], places, options) for i, turn in enumerate(turns)]


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
    report: Report, turn: Turn, rows: list[Row], findings: list[Finding], places: Places, options: RenderOptions
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
        "axis": _axis_caption(rows, first, last),
        "event_marks": list(_event_marks(rows, axis)),
        "lanes": lanes,
        "hidden_lanes": len(stream.calls) - len(shown_calls),
        "findings": _packed(axis, codes, LABEL_GAP),
        "multi": report.conversation,
    }


def _axis_caption(rows: list[Row], first: int, last: int) -> str:
    """What the x axis counts: the capture's records the events lane draws. A request or execute
    record is numbered among the streamed events, which are all the turn's header counts, so the
    axis names each kind."""
    records = {"Request": 0, "Execution": 0}
    streamed = 0
    for row in rows:
        if row.event in records:
            records[row.event] += row.count
        else:
            streamed += row.count
    if not any(records.values()):
        return f"x: events {first}–{last}"
    parts = [counted(streamed, "event")]
    parts += [counted(records["Request"], "request")] if records["Request"] else []
    parts += [counted(records["Execution"], "execute record")] if records["Execution"] else []
    return f"x: records {first}–{last} ({', '.join(parts)})"


def _lane(report: Report, call: ToolCall, places: Places, axis: Axis) -> dict[str, Any]:
    number = report.number(call)
    verdict = report.verdicts[number - 1]
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
    wrong = verdict.ran_wrongly
    ran = [
        (
            record.pos.number,
            2 if wrong else 1,
            "executed wrong" if wrong else "executed",
            f"the application ran it at event {record.pos.number} with {preview(record.input, 80)}"
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
        "status": verdict.status,
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
    # a shared code's label is longer ("SD102 +66" is ~70 px, beyond 10% of an 800 px page's lane)
    return shown + ([_merged(axis, rest, gap * 1.5)] if rest else [])


def _shared(axis: Axis, group: list[Placed], target: str) -> Mark:
    _, _, kind, _, label, _ = max(group, key=lambda p: p[1])  # drawn as the first of the weightiest
    count = sum(p[5] for p in group)
    if count > 1:
        label += f"×{count}" if label in ("◆", "▶") else f" +{count - 1}"
    # at the group's first event: groups begin at least a gap apart, so their marks never touch (a
    # mark at its weightiest member's event could sit at the group's far end, against the next one)
    return axis.glyph(group[0][0], kind, "\n".join(p[3] for p in group), label, target)


def client_verdicts(report: Report, number: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each client profile's verdict on call ``number`` (the ``clients`` extra), skipping malformed data."""
    for extra in report.extras.get(number, ()):
        if extra.key == "clients" and isinstance(extra.data, dict):
            for client, verdict in extra.data.items():
                if isinstance(verdict, dict):
                    yield str(client), verdict


def _client_marks(report: Report, number: int, end: int) -> tuple[list[Placed], list[Placed]]:
    """Where each client profile would run the call (the ``clients`` extra's hand-offs): those that
    differ from the correct client, and those that agree; a hand-off at the end of the stream at ``end``."""
    at: dict[tuple[int, bool], list[str]] = {}  # profiles that hand it over at the same event share a mark
    for client, verdict in client_verdicts(report, number):
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


def json_text(value: Any, indent: bool = False) -> str:
    """A value as JSON text, as every report shows one (``jsontext.shown``: any depth, any string)."""
    return jsontext.shown(value, orjson.OPT_INDENT_2 if indent else 0).decode()


def preview(value: Any, limit: int) -> str:
    text = json_text(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
