"""The one report model: what a replay found, built once, read by everyone.

The engine builds a ``Report`` (and sets what it alone knows, such as ``execution_note``); every
reporter, the pytest plugin, ``check`` and the library API read it and compute nothing of their
own. Everything more than one reader needs lives here: call numbers and ``--call`` selection,
totals across turns, finding order, and the JSON report's data (``json_document``: ``to_dict()``,
``to_json()``, what ``reporters/json_report.py`` writes and the element dicts the other JSON formats
share); check's results are ``check/result.py``'s.

Numbering, the same in every format: calls, messages and fragments are counted from 1. Call N is
the N-th call in table order, across every turn of a conversation: the ``#`` of the terminal
table, ``Call N`` of ``--call``, the JSON call's ``number``, and what ``--call N`` and
``--executed N=…`` take. Message N and fragment N are the N-th message and fragment, as findings
quote them. The JSON's ``ordinal``, ``message``, ``messages[].index``, ``messages[].calls``,
``executions[].call`` and ``parse_failure.fragment`` are positions in arrays (0-based, for code
that indexes them); the schema says so field by field.

Other stages attach data to a call without touching any reporter: ``Report.with_extra(number,
CallExtra(key, data, lines))``. The JSON report carries ``data`` under the call's
``extras[key]``; text reporters print ``lines`` under the call. Client predictions and execution
notes go there.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import accumulate, islice
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Literal, Mapping

from stream_doctor.util import jsonpieces, jsontext
from stream_doctor.util.version import __version__
from stream_doctor.values.findings import Finding, Severity
from stream_doctor.values.timeline import NO_TIMELINE, Timeline

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
    from stream_doctor.capture.base import Frame, Pos
    from stream_doctor.conversation.model import RequestsRead, Turn
    from stream_doctor.values.events import Event
    from stream_doctor.values.finding_counts import Statistic
    from stream_doctor.values.options import Options


#: Executions a report lists (the JSON report's ``executions``, a call's runs on the HTML page); the
#: rest are counted (``execution_checks.omitted``): an envelope of a million execute records must not
#: make a report of gigabytes.
LISTED_EXECUTIONS = 1_000

SCHEMA_VERSION = 1  # of report-v1; bump on any change a consumer could notice (an optional field is not one)

#: What replay says when a capture holds tool calls but no executions (terminal and JSON alike).
NO_EXECUTIONS_NOTE = (
    "No executions in this capture, so the execution checks (SD1xx) did not run. Tell what your "
    "application ran: --executed CALL=JSON (e.g. --executed 1='{}') or --executions FILE, or record "
    "the next run with stream_doctor.record's Recorder and recorder.executed(...). The recording proxy "
    "cannot see what ran, only what the next request sent back (SD608); see stream-doctor explain SD102."
)


#: The execution checks' codes begin so: a finding of theirs on a call means the application ran it wrongly.
EXECUTION_RULES = "SD1"


def severity_counts(findings: Iterable[Finding]) -> dict[Severity, int]:
    """How many findings there are of each severity (every severity present, zero or not)."""
    counts = {s: 0 for s in Severity}
    for finding in findings:
        counts[finding.severity] += 1
    return counts


class UnknownCall(LookupError):
    """``--call`` named no call of the capture; the message lists the calls there are."""


@dataclass(frozen=True, eq=False)
class Source:
    """The capture file as a whole (a conversation's turns each have their own ``CaptureInfo``)."""

    path: str
    container: str
    compressed: str | None
    size: int
    frames: int
    interactions: int  # HAR/cassette: every interaction of the file, LLM calls or not
    skipped: int  # … of which were not LLM calls
    files: tuple[str, ...] = ()  # several captures replayed as one conversation: each, in the order replayed
    order: str | None = None  # … and how that order was found ("in time order (header started)")


@dataclass(frozen=True)
class CallExtra:
    """Data another stage attaches to one call (a client profile's prediction, an execution note).

    ``key`` names the kind (``"clients"``); ``data`` must be JSON-ready and appears in the JSON
    report as the call's ``extras[key]``; ``lines`` are plain text that text reporters print under
    the call (capture content in them is neutralised by the reporter, not here).
    """

    key: str
    data: Any
    lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class Report:
    stream: AccumulatedStream  # the only turn's stream; in a conversation, the last turn's
    findings: tuple[Finding, ...]  # every finding: the turns' and the conversation's, in report order
    options: Options
    events: tuple[tuple[Frame, Event], ...] = field(default=())  # only with keep_events
    timeline: Timeline = field(default=NO_TIMELINE)  # with --timeline, the HTML report or keep_events (timeline.py)
    turns: tuple[Turn, ...] = ()
    source: Source | None = None
    selected: str | None = None  # ``--call``: the call shown in detail (an id or a number), see ``select``
    extras: Mapping[int, tuple[CallExtra, ...]] = field(default_factory=dict)  # by call number
    # Why the execution checks did not run (NO_EXECUTIONS_NOTE), set by the engine when the capture has
    # calls the application would run, records nothing it ran, and SD1xx are selected; else None.
    execution_note: str | None = None
    # How the engine read the turns' requests (``--statistics`` says it); None: no request was recorded.
    requests_read: RequestsRead | None = None

    @classmethod
    def build(
        cls,
        turns: tuple[Turn, ...],
        conversation_findings: list[Finding],
        options: Options,
        events: tuple[tuple[Frame, Event], ...] = (),
        source: Source | None = None,
        timeline: Timeline = NO_TIMELINE,
        execution_note: str | None = None,
        requests_read: RequestsRead | None = None,
    ) -> Report:
        """The report of a replay: every turn's findings and the conversation's, in one stable order."""
        found = [f for turn in turns for f in turn.findings]
        if len(turns) == 1 and not conversation_findings:
            findings = turns[0].findings  # already sorted
        else:
            findings = tuple(sorted([*found, *conversation_findings], key=lambda f: f.sort_key))
        return cls(
            turns[-1].stream,
            findings,
            options,
            events,
            timeline,
            turns,
            source,
            execution_note=execution_note,
            requests_read=requests_read,
        )

    # -- calls and their selection -------------------------------------------------------------

    @property
    def path(self) -> str:
        """The capture's path as the user named it (``<stdin>`` for standard input)."""
        return self.source.path if self.conversation and self.source else self.stream.capture.path

    @property
    def conversation(self) -> bool:
        """Whether the capture is reported turn by turn (HAR files and cassettes always are)."""
        return len(self.turns) > 1 or (self.source is not None and self.source.container in ("har", "vcr", "recording"))

    @cached_property
    def calls(self) -> tuple[ToolCall, ...]:
        """Every call of every turn, in table order; call N is ``calls[N - 1]``."""
        if len(self.turns) <= 1:
            return self.stream.calls
        return tuple(call for turn in self.turns for call in turn.stream.calls)

    @cached_property
    def call_turns(self) -> tuple[int | None, ...]:
        """The turn number of each call (None for a capture of one stream)."""
        if not self.conversation:
            return (None,) * len(self.calls)
        return tuple(turn.number for turn in self.turns for _ in turn.stream.calls)

    def matching(self, wanted: str) -> tuple[int, ...]:
        """The numbers of the calls ``wanted`` names: a call id, or a call number as the table shows it."""
        return tuple(n for n, call in enumerate(self.calls, 1) if call.call_id == wanted or str(n) == wanted)

    def select(self, wanted: str) -> Report:
        """This report with call ``wanted`` selected (``--call``); UnknownCall when no call matches."""
        if not self.matching(wanted):
            raise UnknownCall(f"no call {wanted!r} in this capture (calls: {self.call_listing()})")
        return replace(self, selected=wanted)

    def call_listing(self) -> str:
        """The calls as a user can name them with ``--call``: ``1 (toolu_01…, get_weather), 2 …``."""
        if not self.calls:
            return "none"
        return ", ".join(
            f"{n} ({', '.join(p for p in (call.call_id, call.name) if p) or 'no id'})"
            for n, call in enumerate(self.calls, 1)
        )

    @property
    def selection(self) -> tuple[int, ...]:
        """The numbers of the selected calls (empty when none is selected or it matches none)."""
        return () if self.selected is None else self.matching(self.selected)

    def number(self, call: ToolCall) -> int:
        """The number a call is shown with (1-based, table order, across turns)."""
        return self._numbers[id(call)]

    @cached_property
    def _numbers(self) -> dict[int, int]:
        return {id(call): n for n, call in enumerate(self.calls, 1)}

    def with_extra(self, number: int, extra: CallExtra) -> Report:
        """This report with ``extra`` attached to call ``number`` (see the module docstring)."""
        return self.with_extras([(number, extra)])

    def with_extras(self, attached: Iterable[tuple[int, CallExtra]]) -> Report:
        """This report with each ``(number, extra)`` attached: one copy of the report for them all."""
        extras = dict(self.extras)
        for number, extra in attached:
            extras[number] = (*extras.get(number, ()), extra)
        return replace(self, extras=extras)

    def close(self) -> None:
        """Let go of the temporary file a big replay keeps its calls' argument text in (see
        ``accumulate/spill.py``); it also goes when the report is collected. Afterwards the argument
        text of a call kept there can no longer be read."""
        for store in {id(call.stored.store): call.stored.store for call in self.calls}.values():
            store.close()

    def __enter__(self) -> Report:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what the findings say of each call ------------------------------------------------------

    @cached_property
    def places(self) -> FindingPlaces:
        """The turn and the call each finding is about (``FindingPlaces``), looked up once."""
        return _places(self)

    @cached_property
    def verdicts(self) -> tuple[CallVerdict, ...]:
        """Each call's verdict, in table order (call N's is ``verdicts[N - 1]``): what every format says of it."""
        return _verdicts(self)

    # -- executions ----------------------------------------------------------------------------

    @property
    def executions(self) -> int:
        """How many executions the capture recorded or was given, in every turn."""
        return sum(len(stream.executions) for stream in self._streams)

    # -- totals --------------------------------------------------------------------------------

    @cached_property
    def counts(self) -> dict[Severity, int]:
        return severity_counts(self.findings)

    @property
    def failed(self) -> bool:
        return any(f.severity >= self.options.fail_on for f in self.findings)

    @cached_property
    def unknown_events(self) -> dict[str, int]:
        """Event types no adapter knew, with their counts, over every turn, sorted by type."""
        unknown: dict[str, int] = {}
        for stream in self._streams:
            for kind, count in stream.unknown_events.items():
                unknown[kind] = unknown.get(kind, 0) + count
        return dict(sorted(unknown.items()))

    @cached_property
    def event_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for stream in self._streams:
            for kind, count in stream.event_counts.items():
                counts[str(kind)] = counts.get(str(kind), 0) + count
        return dict(sorted(counts.items()))

    @property
    def duration(self) -> float | None:
        if not self.conversation:
            return self.stream.capture.duration
        durations = [t.stream.capture.duration for t in self.turns if t.stream.capture.duration is not None]
        return sum(durations) if durations else None

    @property
    def ended_cleanly(self) -> bool:
        return all(stream.ended_cleanly for stream in self._streams)

    @property
    def _streams(self) -> tuple[AccumulatedStream, ...]:
        return (self.stream,) if not self.conversation else tuple(t.stream for t in self.turns)

    @property
    def codes(self) -> tuple[str, ...]:
        """The codes of the findings, in report order (repeats kept)."""
        return tuple(f.code for f in self.findings)

    @cached_property
    def code_counts(self) -> dict[str, int]:
        """How many findings of each code, sorted by code."""
        return _codes(self.findings)

    @cached_property
    def statistics(self) -> tuple[Statistic, ...]:
        """One row per code and severity found (``--statistics``): most frequent first, then by code."""
        from stream_doctor.values.finding_counts import statistics_of  # --statistics only

        return statistics_of(self.findings)

    # -- the JSON report -----------------------------------------------------------------------

    def to_dict(self, call: str | None = None) -> dict[str, Any]:
        """The JSON report (``replay --format json``) as plain data; ``call`` selects a call as ``--call`` does."""
        return jsonpieces.materialised(json_document(self, call))

    def to_json(self, call: str | None = None) -> str:
        """The JSON report exactly as ``replay --format json`` prints it."""
        return b"".join(json_pieces(self, call)).decode()


# -- shared by the reports of a replay and of check ----------------------------------------------


def call_status(call: ToolCall) -> str:
    """The status word every human format shows: ``complete``, ``unparseable (kind)`` or ``abandoned (cause)``."""
    if call.status == "abandoned":
        return f"abandoned ({call.abandon_cause})"
    if call.parse_failure is not None:
        return f"unparseable ({call.parse_failure.kind})"
    return "complete"


Tone = Literal["ok", "warning", "error"]


@dataclass(frozen=True, eq=False)
class FindingPlaces:
    """Where each finding of ``Report.findings`` belongs: its turn's index (into ``turns``) and the
    number of the call it is about, None when it names none."""

    turn: tuple[int | None, ...]
    call: tuple[int | None, ...]


@dataclass(frozen=True, eq=False)
class CallVerdict:
    """What a report says of one call, the same in every format: the stream's status word
    (``call_status``), the codes of the findings about the call, and its turn's errors about no call.

    ``status`` is "complete" only for a call the stream completed and parsed with no error about
    it; ``tone`` is "ok" (green) only when, besides, no warning is about it and its turn has no error."""

    stream: str
    ran_wrongly: tuple[str, ...]  # SD1xx codes about the call: the application ran it wrongly
    errors: tuple[str, ...]  # every error code about the call, in report order
    warnings: tuple[str, ...]
    turn_errors: tuple[str, ...]  # error codes of its turn that are about no call

    @property
    def status(self) -> str:
        if self.ran_wrongly:
            ran = f"ran wrongly ({', '.join(self.ran_wrongly)})"
            return ran if self.stream == "complete" else f"{self.stream}, {ran}"
        if self.stream != "complete":
            return self.stream
        if self.errors:
            return f"error ({', '.join(self.errors)})"
        return "complete"

    @property
    def tone(self) -> Tone:
        if self.ran_wrongly or self.errors or self.stream != "complete":
            return "error"
        return "warning" if self.warnings or self.turn_errors else "ok"

    @property
    def codes(self) -> tuple[str, ...]:
        """The codes about the call, errors first."""
        return (*self.errors, *self.warnings)


def _places(report: Report) -> FindingPlaces:
    """A finding's turn: the only one, the one its interaction names, else the one its event falls in
    (an envelope numbers its turns' events on). Its call: for an execution check, the call run at its
    event in that turn; else the call its id names in that turn, else in any turn (SD608 is found in
    the turn that sends the call back)."""
    turns = report.turns
    numbers = report._numbers
    by_interaction = {turn.interaction: i for i, turn in enumerate(turns) if turn.interaction is not None}
    ends = list(accumulate(turn.stream.capture.frames for turn in turns))
    by_id: dict[tuple[int | None, str], int] = {}
    executed_at: dict[tuple[int, int], int] = {}  # (turn index, event) -> the call number run there
    for i, turn in enumerate(turns):
        calls = turn.stream.calls
        for call in calls:
            if call.call_id is not None:
                by_id.setdefault((i, call.call_id), numbers[id(call)])
                by_id.setdefault((None, call.call_id), numbers[id(call)])
        for record in turn.stream.executions:
            if record.origin is None and record.call is not None and 0 <= record.call < len(calls):
                executed_at.setdefault((i, record.pos.number), numbers[id(calls[record.call])])
    turn_of: list[int | None] = []
    call_of: list[int | None] = []
    for finding in report.findings:
        where = finding.location
        index: int | None = None
        if len(turns) == 1:
            index = 0
        elif where.interaction is not None and where.interaction in by_interaction:
            index = by_interaction[where.interaction]
        elif where.event is not None and ends:
            index = min(bisect_left(ends, where.event), len(turns) - 1)
        number: int | None = None
        if finding.code.startswith(EXECUTION_RULES) and index is not None and where.event is not None:
            number = executed_at.get((index, where.event))
        if number is None and finding.call_id is not None:
            number = by_id.get((index, finding.call_id)) or by_id.get((None, finding.call_id))
        turn_of.append(index)
        call_of.append(number)
    return FindingPlaces(tuple(turn_of), tuple(call_of))


def _verdicts(report: Report) -> tuple[CallVerdict, ...]:
    codes: dict[tuple[int, Severity], list[str]] = {}  # (call number, severity) -> codes, each once
    turn_errors: dict[int, list[str]] = {}  # turn index -> error codes about no call
    places = report.places
    for finding, turn, number in zip(report.findings, places.turn, places.call, strict=True):
        if finding.severity is Severity.INFO:
            continue
        if number is not None:
            found = codes.setdefault((number, finding.severity), [])
        elif turn is not None and finding.severity is Severity.ERROR:
            found = turn_errors.setdefault(turn, [])
        else:
            continue
        if finding.code not in found:
            found.append(finding.code)
    turn_index = {id(call): i for i, turn in enumerate(report.turns) for call in turn.stream.calls}
    verdicts = []
    for number, call in enumerate(report.calls, 1):
        errors = tuple(codes.get((number, Severity.ERROR), ()))
        verdicts.append(
            CallVerdict(
                call_status(call),
                tuple(c for c in errors if c.startswith(EXECUTION_RULES)),
                errors,
                tuple(codes.get((number, Severity.WARNING), ())),
                tuple(turn_errors.get(turn_index.get(id(call), 0), ())),
            )
        )
    return tuple(verdicts)


def _codes(findings: Iterable[Finding]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding.code] = counts.get(finding.code, 0) + 1
    return dict(sorted(counts.items()))


# -- the JSON report (schema ``stream_doctor/schemas/report-v1.schema.json``) ---------------------------


def json_pieces(report: Report, call: str | None = None) -> Iterator[bytes]:
    """The JSON report's text in pieces, each call and finding serialised when its turn comes
    (``util/jsonpieces.py``), safe to print (``jsontext.printable``): what ``replay --format json`` writes."""
    yield from jsontext.printable_pieces(jsonpieces.pieces(json_document(report, call)))
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


def json_document(report: Report, call: str | None = None) -> dict[str, Any]:
    """``Report.to_dict()`` with its long lists (messages, calls, executions, findings) as iterators,
    each element built when it is read: what the JSON report is written from, a call at a time."""
    if call is not None and call != report.selected:
        return json_document(replace(report, selected=call))
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
        "findings": (f.to_dict() for f in report.findings),
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
