"""The one report model: what a replay (and a ``check`` run) found, built once, read by everyone.

The engine builds a ``Report``; every reporter, the pytest plugin, ``check`` and the library API
read it and compute nothing of their own. Everything more than one reader needs lives here: call
numbers and ``--call`` selection, totals across turns, finding order, and ``to_dict()``, which *is*
the JSON report (schema ``stream_doctor/schemas/report-v1.schema.json``).

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

from dataclasses import replace
from functools import cached_property
from itertools import islice
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Literal, Mapping

from stream_doctor import __version__
from stream_doctor.findings import Finding, Location, Severity
from stream_doctor.records import dataclass, field
from stream_doctor.timeline import NO_TIMELINE, Timeline

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
    from stream_doctor.capture.base import Frame, Pos
    from stream_doctor.check.expectations import Expectation
    from stream_doctor.conversation.model import Turn
    from stream_doctor.events import Event
    from stream_doctor.options import Options

#: How check's JSON carries each replay's report: parsed, as an ``orjson.Fragment`` of its
#: serialised text, or as those bytes (``document()``: written as they are, never parsed again).
ReportForm = Literal["data", "fragment", "bytes"]

SCHEMA_VERSION = 1  # of report-v1; bump on any change a consumer could notice (an optional field is not one)
CHECK_SCHEMA_VERSION = 1  # of check-report-v1


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

    @classmethod
    def build(
        cls,
        turns: tuple[Turn, ...],
        conversation_findings: list[Finding],
        options: Options,
        events: tuple[tuple[Frame, Event], ...] = (),
        source: Source | None = None,
        timeline: Timeline = NO_TIMELINE,
    ) -> Report:
        """The report of a replay: every turn's findings and the conversation's, in one stable order."""
        found = [f for turn in turns for f in turn.findings]
        if len(turns) == 1 and not conversation_findings:
            findings = turns[0].findings  # already sorted
        else:
            findings = tuple(sorted([*found, *conversation_findings], key=lambda f: f.sort_key))
        return cls(turns[-1].stream, findings, options, events, timeline, turns, source)

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

    @property
    def execution_note(self) -> str | None:
        """Why the execution checks did not run, when the capture has tool calls the application
        would run but records nothing it ran (a raw stream); None when they ran or could not apply."""
        if self.executions or all(call.server_side for call in self.calls):
            return None
        from stream_doctor.config.selection import enabled
        from stream_doctor.rules import codes

        select, ignore = self.options.select, self.options.ignore
        selected = (code for code in codes() if code.startswith("SD1") and enabled(code, select, ignore))
        return NO_EXECUTIONS_NOTE if any(selected) else None

    def _execution_checks(self) -> dict[str, Any]:
        total = self.executions
        omitted = {"omitted": total - LISTED_EXECUTIONS} if total > LISTED_EXECUTIONS else {}
        return {"ran": total > 0, "executions": total, "note": self.execution_note, **omitted}

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
        """One row per code found (``--statistics``): most frequent first, then by code."""
        return _statistics(self.findings)

    # -- the JSON report -----------------------------------------------------------------------

    def to_json(self, call: str | None = None) -> str:
        """The JSON report exactly as ``replay --format json`` prints it (safe to print: see ``_neutral.json``)."""
        return b"".join(self.json_pieces(call)).decode()

    def json_pieces(self, call: str | None = None) -> Iterator[bytes]:
        """``to_json()`` in pieces, each call and finding serialised when its turn comes (see
        ``reporters/_pieces.py``): what ``replay --format json`` writes, one piece at a time."""
        from stream_doctor.reporters._pieces import neutral, pieces

        yield from neutral(pieces(self.document(call)))
        yield b"\n"

    def summary(self) -> dict[str, Any]:
        """The JSON report's ``summary``: counts by severity and the verdict."""
        return {
            "error": self.counts[Severity.ERROR],
            "warning": self.counts[Severity.WARNING],
            "info": self.counts[Severity.INFO],
            "fail_on": self.options.fail_on.label,
            "failed": self.failed,
        }

    def call_dicts(self) -> Iterator[dict[str, Any]]:
        """The JSON report's ``calls``, one at a time: every call, or the selected one with its fragments."""
        selection = set(self.selection)
        detailed = self.selected is not None
        turns = self.call_turns
        for number, tool_call in enumerate(self.calls, 1):
            if detailed and number not in selection:
                continue
            data = {"number": number, **call_dict(tool_call, with_fragments=detailed)}
            if turns[number - 1] is not None:
                data = {"turn": turns[number - 1], **data}
            extras = self.extras.get(number)
            if extras:
                data["extras"] = {extra.key: extra.data for extra in extras}
            yield data

    def to_dict(self, call: str | None = None) -> dict[str, Any]:
        """The JSON report (``replay --format json``) as plain data; ``call`` selects a call as ``--call`` does."""
        from stream_doctor.reporters._pieces import materialised

        return materialised(self.document(call))

    def document(self, call: str | None = None) -> dict[str, Any]:
        """``to_dict()`` with its long lists (messages, calls, executions, findings) as iterators,
        each element built when it is read: what the JSON report is written from, a call at a time."""
        if call is not None and call != self.selected:
            return replace(self, selected=call).document()
        stream = self.stream
        info = stream.capture
        source = self.source if self.conversation else None
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
                "duration": self.duration,
                "ended_cleanly": self.ended_cleanly,
            },
            "messages": (
                ({"turn": turn.number, **m} for turn in self.turns for m in _messages(turn.stream))
                if source
                else _messages(stream)
            ),
            "calls": self.call_dicts(),
            "executions": islice(
                ({"turn": turn.number, **e} for turn in self.turns for e in _executions(turn.stream))
                if source
                else _executions(stream),
                LISTED_EXECUTIONS,
            ),
            "execution_checks": self._execution_checks(),
            "event_counts": self.event_counts,
            "unknown_events": self.unknown_events,
            "findings": (finding_dict(f) for f in self.findings),
            "summary": self.summary(),
        }
        if source and source.files:
            data["capture"]["files"] = list(source.files)
            data["capture"]["order"] = source.order
        if source:
            data["interactions"] = {"total": source.interactions, "skipped": source.skipped}
            data["turns"] = (_turn(turn, bool(source.files)) for turn in self.turns)
        return data


# -- check ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Replayed:
    """What check keeps of one replay (a worker sends this back, not the whole ``Report``)."""

    provider: str
    calls: int
    findings: tuple[Finding, ...]
    # The replay's JSON report (report-v1), serialised: a worker sends one bytes object back rather
    # than a dict per call (pickling 100,000 call dicts costs more than the replay itself).
    report_json: bytes
    expected: tuple[Any, ...] = ()  # check.expectations.Expectation: what the envelope header's "expect" declares

    @property
    def report(self) -> dict[str, Any]:
        """The replay's JSON report as plain data (None when check was told not to keep it)."""
        import orjson

        return orjson.loads(self.report_json)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class CaptureResult:
    path: str
    options: Options
    replayed: Replayed | None  # None when the capture could not be replayed
    findings: tuple[Finding, ...]  # the replay's, or the SD000 finding
    expected: tuple[Finding, ...]
    unexpected: tuple[Finding, ...]  # including SD900 for each stale expectation
    stale: tuple[Expectation, ...]

    @property
    def unreadable(self) -> bool:
        return self.replayed is None

    @property
    def accepted_unreadable(self) -> bool:
        """Unreadable, and its expectations declare SD000: it passes, and every report still says so."""
        return self.replayed is None and any(f.code == "SD000" for f in self.expected)

    @cached_property
    def failures(self) -> tuple[Finding, ...]:
        """What fails this capture: unexpected findings at or above --fail-on (SD000 and SD900 are errors)."""
        return tuple(f for f in self.unexpected if f.severity >= self.options.fail_on)

    @cached_property
    def below_threshold(self) -> tuple[Finding, ...]:
        """Unexpected findings below --fail-on: reported, not failing."""
        return tuple(f for f in self.unexpected if f.severity < self.options.fail_on)

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    @cached_property
    def counts(self) -> dict[Severity, int]:
        return severity_counts(self.findings)

    def status(self, finding: Finding) -> str:
        """How check judged one of this capture's findings: expected, failure or below-fail-on."""
        if finding in self._expected_set:
            return "expected"
        return "failure" if finding.severity >= self.options.fail_on else "below-fail-on"

    @cached_property
    def _expected_set(self) -> frozenset[Finding]:
        return frozenset(self.expected)

    @cached_property
    def reported(self) -> tuple[Finding, ...]:
        """Every finding of the capture once: the replay's, then the SD900 ones check added."""
        seen = set(self.findings)
        return self.findings + tuple(f for f in self.unexpected if f not in seen)


@dataclass(frozen=True)
class SpecialFile:
    """A file ``check`` met but never opened, because it is not a regular file: reading a FIFO waits
    for a writer, a device never ends."""

    path: str
    kind: str  # fifo, character-device, block-device, socket, directory, broken-link, outside-link, other

    @property
    def described(self) -> str:
        from stream_doctor.capture.limits import KIND_WORDS

        return KIND_WORDS.get(self.kind, KIND_WORDS["other"])


@dataclass(frozen=True)
class CheckResult:
    captures: tuple[CaptureResult, ...]  # sorted by path
    skipped: tuple[str, ...]
    fail_on: Severity
    config: str | None  # the configuration file used
    updated: tuple[str, ...] = ()  # sidecars written or removed by --update-expectations
    special: tuple[SpecialFile, ...] = ()  # not regular files (FIFOs, devices, sockets), never opened
    accepted: tuple[str, ...] = ()  # unreadable captures whose SD000 --update-expectations just declared
    # Where the run's paths are (SARIF's URIs): the repository root holding the working directory (or
    # the working directory outside a repository), absolute, and the working directory relative to it.
    root: str | None = None
    base: str = ""

    @property
    def failed(self) -> bool:
        return any(c.failed for c in self.captures)

    @cached_property
    def failures(self) -> tuple[tuple[CaptureResult, Finding], ...]:
        return tuple((c, f) for c in self.captures for f in c.failures)

    @cached_property
    def expected(self) -> tuple[tuple[CaptureResult, Finding], ...]:
        return tuple((c, f) for c in self.captures for f in c.expected)

    @cached_property
    def below_threshold(self) -> tuple[tuple[CaptureResult, Finding], ...]:
        return tuple((c, f) for c in self.captures for f in c.below_threshold)

    @cached_property
    def totals(self) -> dict[Severity, int]:
        return {s: sum(c.counts[s] for c in self.captures) for s in Severity}

    @property
    def failed_captures(self) -> int:
        return sum(1 for c in self.captures if c.failed)

    @property
    def unreadable(self) -> int:
        return sum(1 for c in self.captures if c.unreadable)

    @cached_property
    def accepted_unreadable(self) -> tuple[CaptureResult, ...]:
        """Unreadable captures that pass because their expectations declare SD000. Accepting one is
        allowed (a fixture kept broken on purpose), hiding it is not: every check report says
        ``unreadable_accepted_words`` in its summary."""
        return tuple(c for c in self.captures if c.accepted_unreadable)

    @property
    def unreadable_accepted_words(self) -> str | None:
        """``1 capture unreadable (accepted by its expectations)``, or None when there is none."""
        count = len(self.accepted_unreadable)
        if not count:
            return None
        if count == 1:
            return "1 capture unreadable (accepted by its expectations)"
        return f"{count:,} captures unreadable (accepted by their expectations)"

    @property
    def stale(self) -> int:
        return sum(len(c.stale) for c in self.captures)

    @cached_property
    def code_counts(self) -> dict[str, int]:
        """How many findings of each code over every capture, sorted by code."""
        return _codes(f for c in self.captures for f in c.reported)

    @cached_property
    def statistics(self) -> tuple[Statistic, ...]:
        """One row per code over every capture (``--statistics``): most frequent first, then by code."""
        return _statistics(f for c in self.captures for f in c.reported)

    def summary(self) -> dict[str, Any]:
        """The JSON report's ``summary``: captures and findings counted."""
        captures = self.captures
        return {
            "captures": len(captures),
            "passed": len(captures) - self.failed_captures,
            "failed": self.failed_captures,
            "unreadable": self.unreadable,
            "unreadable_accepted": len(self.accepted_unreadable),
            "skipped": len(self.skipped),
            "special_files": len(self.special),
            "findings": {s.label: self.totals[s] for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)},
            "expected": len(self.expected),
            "failures": len(self.failures),
            "stale_expectations": self.stale,
        }

    def to_dict(self, raw_reports: bool = False) -> dict[str, Any]:
        """The JSON report of ``check`` (schema ``check-report-v1``), as plain data.

        ``raw_reports``: each capture's replay report as an ``orjson.Fragment`` of its serialised
        text, for the JSON reporter, which then never decodes and re-encodes them.
        """
        data = self.document("fragment" if raw_reports else "data")
        return {**data, "captures": list(data["captures"])}

    def document(self, reports: ReportForm = "bytes") -> dict[str, Any]:
        """``to_dict()`` with the captures and each capture's findings as iterators, each replay's
        report as its serialised bytes: what the JSON report is written from (``reporters/_pieces.py``)."""
        return {
            "schema_version": CHECK_SCHEMA_VERSION,
            "tool": {"name": "stream-doctor", "version": __version__},
            "configuration": self.config,
            "fail_on": self.fail_on.label,
            "failed": self.failed,
            "summary": self.summary(),
            "captures": (_capture(c, reports) for c in self.captures),
            "skipped": list(self.skipped),
            "special_files": [{"path": f.path, "kind": f.kind} for f in self.special],
            "updated_expectations": list(self.updated),
            "accepted_unreadable": list(self.accepted),
        }


# -- plain data, shared by both JSON reports ----------------------------------------------------


def call_status(call: ToolCall) -> str:
    """The status word every human format shows: ``complete``, ``unparseable (kind)`` or ``abandoned (cause)``."""
    if call.status == "abandoned":
        return f"abandoned ({call.abandon_cause})"
    if call.parse_failure is not None:
        return f"unparseable ({call.parse_failure.kind})"
    return "complete"


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
    first: dict[str, Finding] = {}
    counts: dict[str, int] = {}
    for finding in findings:
        first.setdefault(finding.code, finding)
        counts[finding.code] = counts.get(finding.code, 0) + 1
    rows = [Statistic(code, first[code].name, first[code].severity, count) for code, count in counts.items()]
    return tuple(sorted(rows, key=lambda row: (-row.count, row.code)))


def _codes(findings: Iterable[Finding]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding.code] = counts.get(finding.code, 0) + 1
    return dict(sorted(counts.items()))


def _capture(capture: CaptureResult, reports: ReportForm = "data") -> dict[str, Any]:
    replayed = capture.replayed
    report: Any
    if replayed is None:
        report = None
    elif reports == "bytes":
        report = replayed.report_json
    elif reports == "fragment":
        import orjson

        report = orjson.Fragment(replayed.report_json)
    else:
        report = replayed.report
    findings = ({**finding_dict(f), "status": capture.status(f)} for f in capture.reported)
    return {
        "path": capture.path,
        "failed": capture.failed,
        "unreadable": capture.unreadable,
        "findings": findings if reports == "bytes" else list(findings),
        "stale_expectations": [_expectation(e) for e in capture.stale],
        "report": report,
    }


def _expectation(expectation: Expectation) -> dict[str, Any]:
    return {
        "code": expectation.code,
        "call_id": expectation.call_id,
        "line": expectation.line,
        "declared_at": {"path": expectation.declared_at.path, "line": expectation.declared_at.line},
    }


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
