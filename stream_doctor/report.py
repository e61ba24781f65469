"""The one report model: what a replay found, built once, read by everyone.

The engine builds a ``Report`` (and sets what it alone knows, such as ``execution_note``); every
reporter, the pytest plugin, ``check`` and the library API read it and compute nothing of their
own. Everything more than one reader needs lives here: call numbers and ``--call`` selection,
totals across turns, finding order. The JSON report is built from it by ``reporters/json_report.py``
(``to_dict()`` and ``to_json()`` hand over to it); check's results are ``check/result.py``'s.

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

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from stream_doctor.findings import Finding, Severity
from stream_doctor.timeline import NO_TIMELINE, Timeline

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
    from stream_doctor.capture.base import Frame
    from stream_doctor.conversation.model import Turn
    from stream_doctor.events import Event
    from stream_doctor.options import Options


#: Executions a report lists (the JSON report's ``executions``, a call's runs on the HTML page); the
#: rest are counted (``execution_checks.omitted``): an envelope of a million execute records must not
#: make a report of gigabytes.
LISTED_EXECUTIONS = 1_000

#: What replay says when a capture holds tool calls but no executions (terminal and JSON alike).
NO_EXECUTIONS_NOTE = (
    "No executions in this capture, so the execution checks (SD1xx) did not run. Tell what your "
    "application ran: --executed CALL=JSON (e.g. --executed 1='{}') or --executions FILE, or record "
    "the next run with stream_doctor.record's Recorder and recorder.executed(...). The recording proxy "
    "cannot see what ran, only what the next request sent back (SD608); see stream-doctor explain SD102."
)


def severity_counts(findings: Iterable[Finding]) -> dict[Severity, int]:
    """How many findings there are of each severity (every severity present, zero or not)."""
    counts = {s: 0 for s in Severity}
    for finding in findings:
        counts[finding.severity] += 1
    return counts


class UnknownCall(LookupError):
    """``--call`` named no call of the capture; the message lists the calls there are."""


@dataclass(frozen=True)
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
    ) -> Report:
        """The report of a replay: every turn's findings and the conversation's, in one stable order."""
        found = [f for turn in turns for f in turn.findings]
        if len(turns) == 1 and not conversation_findings:
            findings = turns[0].findings  # already sorted
        else:
            findings = tuple(sorted([*found, *conversation_findings], key=lambda f: f.sort_key))
        return cls(turns[-1].stream, findings, options, events, timeline, turns, source, execution_note=execution_note)

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
        return _statistics(self.findings)

    # -- the JSON report -----------------------------------------------------------------------

    def to_dict(self, call: str | None = None) -> dict[str, Any]:
        """The JSON report (``replay --format json``) as plain data; ``call`` selects a call as ``--call``
        does. Built by ``reporters/json_report.py``; here because the library API promises it (docs/api.md)."""
        from stream_doctor.reporters import json_report

        return json_report.to_dict(self, call)

    def to_json(self, call: str | None = None) -> str:
        """The JSON report exactly as ``replay --format json`` prints it (``reporters/json_report.py``)."""
        from stream_doctor.reporters import json_report

        return json_report.text(self, call)


# -- shared by the reports of a replay and of check ----------------------------------------------


def call_status(call: ToolCall) -> str:
    """The status word every human format shows: ``complete``, ``unparseable (kind)`` or ``abandoned (cause)``."""
    if call.status == "abandoned":
        return f"abandoned ({call.abandon_cause})"
    if call.parse_failure is not None:
        return f"unparseable ({call.parse_failure.kind})"
    return "complete"


@dataclass(frozen=True)
class Statistic:
    """How often one code was found (``--statistics``, as ruff's)."""

    code: str
    name: str
    severity: Severity
    count: int

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "name": self.name, "severity": self.severity.label, "count": self.count}


def _statistics(findings: Iterable[Finding]) -> tuple[Statistic, ...]:
    """One row per code and severity: a code found at two (SD8xx: a warning for a real library, info
    for a naive pattern) is two rows, so no finding is counted at a severity it does not have."""
    first: dict[tuple[str, Severity], Finding] = {}
    counts: dict[tuple[str, Severity], int] = {}
    for finding in findings:
        key = (finding.code, finding.severity)
        first.setdefault(key, finding)
        counts[key] = counts.get(key, 0) + 1
    rows = [Statistic(code, first[code, severity].name, severity, n) for (code, severity), n in counts.items()]
    return tuple(sorted(rows, key=lambda row: (-row.count, row.code, -row.severity)))


def _codes(findings: Iterable[Finding]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding.code] = counts.get(finding.code, 0) + 1
    return dict(sorted(counts.items()))
