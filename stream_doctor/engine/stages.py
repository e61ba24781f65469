"""The stages of one turn, which every way of replaying shares (the engine, a session, ``convert``,
the live proxy): the adapter that reads it, its events translated and accumulated into a stream,
and the rules (stream, client and conversation scopes) that --select and --ignore leave.

``RunError`` is the one error of a replay that cannot go on: the CLI prints it on one line and exits 2.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

from stream_doctor.accumulate.accumulator import Accumulator
from stream_doctor.accumulate.spill import ArgumentStore
from stream_doctor.accumulate.stream import AccumulatedStream, CaptureInfo, Message
from stream_doctor.capture import Streamed
from stream_doctor.capture.base import Capture, CaptureError, Frame
from stream_doctor.conversation.build import Section
from stream_doctor.conversation.model import Turn
from stream_doctor.providers import ADAPTERS, DetectionError, detect
from stream_doctor.providers.base import Adapter, Translator
from stream_doctor.rules import rules_of
from stream_doctor.rules.base import Rule, Scope
from stream_doctor.rules.dispatch import Dispatch
from stream_doctor.values.envelope_events import envelope_event
from stream_doctor.values.events import Event
from stream_doctor.values.findings import Finding
from stream_doctor.values.options import Options
from stream_doctor.values.protocol import records_sentinel

if TYPE_CHECKING:
    from stream_doctor.clients import Running
    from stream_doctor.clients.base import Profile
    from stream_doctor.clients.compare import ClientReview
    from stream_doctor.clients.framing import Framing
    from stream_doctor.clients.runs import LibraryRuns
    from stream_doctor.conversation.model import Conversation
    from stream_doctor.values.timeline_rows import Budget, Rows


class RunError(Exception):
    """The capture could not be replayed at all; the CLI prints it on one line and exits 2."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        where = path if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {message}")
        self.path, self.message, self.line = path, message, line  # `check` turns these into an SD000 finding


def profiles_named(path: str, options: Options) -> tuple[Profile, ...]:
    """The client profiles ``--client`` names; RunError (exit 2) for a name that is none."""
    if not options.clients:
        return ()
    from stream_doctor.clients import UnknownClient, resolve

    try:
        return resolve(options.clients)
    except UnknownClient as error:
        raise RunError(path, str(error)) from None


#: a capture given as bytes (standard input, the API's ``data``), by the path its turns carry, and the
#: temporary file a library's process reads it from (``run_file``)
RunFiles = dict[str, str]


def library_runs(
    paths: list[str], files: RunFiles | None, provider: str, profiles: tuple[Profile, ...], options: Options
) -> LibraryRuns | None:
    """The real libraries' runs of the capture files these turns come from (``paths``; ``files``: those
    given as bytes), started now, so they run while the turns are reviewed; None without ``--client``."""
    if not profiles:
        return None
    from stream_doctor.clients.runs import LibraryRuns

    given = files or {}
    readable = {path: given.get(path, path if path != "<stdin>" else None) for path in paths}
    return LibraryRuns(readable, options.container, provider, profiles, options.client_mode, options.node_modules)


@contextmanager
def run_file(path: str, data: bytes | None, options: Options) -> Iterator[tuple[bytes | None, RunFiles | None]]:
    """A capture on standard input or given as bytes, written to a temporary file for the libraries'
    processes to read, when ``--client`` may run one: its bytes (read now, under the size cap) and the
    file by the name its turns carry; else ``data`` as it was, and None. The file goes with the replay."""
    if (path != "-" and data is None) or not _runs_a_library(path, options):
        yield data, None
        return
    import tempfile

    from stream_doctor.capture.limits import read_file

    if data is None:
        try:
            data = read_file(path, options.limits, sys.stdin.buffer)
        except CaptureError as error:
            raise RunError("<stdin>", error.message, error.line) from None
    with tempfile.TemporaryDirectory(prefix="stream-doctor-") as folder:
        spooled = os.path.join(folder, "capture")
        with open(spooled, "wb") as file:
            file.write(data)
        yield data, {"<stdin>" if path == "-" else path: spooled}


def _runs_a_library(path: str, options: Options) -> bool:
    """Whether ``--client`` names a library and ``--client-mode`` may run it."""
    if options.client_mode == "model":
        return False
    from stream_doctor.clients.runs import compared

    return any(compared(profile.name) is not None for profile in profiles_named(path, options))


def review_turn(
    path: str, stream: AccumulatedStream, kept: Kept, cut_last: bool, runs: LibraryRuns | None, turn: int
) -> tuple[ClientReview, ...]:
    """Each client's review of one turn (the ``turn``-th of the capture): the library's run where it
    answered, else the model ``kept`` fed; RunError when ``--client-mode run`` cannot run a library."""
    from stream_doctor.clients import reviews
    from stream_doctor.clients.runs import RunRequired

    try:
        return reviews(stream, kept.clients, cut_last, runs, turn)
    except RunRequired as error:
        raise RunError(path, str(error)) from None


def budget_of(options: Options) -> Budget | None:
    """The timeline rows one replay may keep, when its report shows a timeline (``values/timeline.py``)."""
    if not (options.timeline or options.keep_events):
        return None
    from stream_doctor.values.timeline_rows import Budget

    return Budget()


def diagnose_clients(
    reviews: tuple[ClientReview, ...], findings: tuple[Finding, ...], options: Options
) -> tuple[Finding, ...]:
    """The stream's findings with the SD8xx findings of each client review added, in report order."""
    found = [
        finding
        for review in reviews
        for rule in selected_rules(options.select, options.ignore, "client")
        for finding in rule.check(review, rule)
    ]
    if not found:
        return findings
    return tuple(sorted((*findings, *found), key=lambda f: f.sort_key))


def unknown_fields_once(
    replayed: list[tuple[AccumulatedStream, Kept]],
    seen: set[str] | None = None,
) -> list[tuple[AccumulatedStream, Kept]]:
    """Each undocumented field path reported once per capture (SD006): at the first turn that has it.
    ``seen``: the paths of earlier turns, for a conversation given a turn at a time (``live``)."""

    if seen is None:
        seen = set()
    out = []
    for stream, kept in replayed:
        fields = [p for p in stream.problems if p.kind == "unknown-field"]
        if fields:
            again = {id(p) for p in fields if p.message in seen}
            seen.update(p.message for p in fields)
            if again:
                stream = replace(stream, problems=tuple(p for p in stream.problems if id(p) not in again))
        out.append((stream, kept))
    return out


def conversation_of(path: str, provider: str, turns: list[Turn], options: Options) -> Conversation:
    from stream_doctor.conversation.build import load_tools
    from stream_doctor.conversation.model import Conversation
    from stream_doctor.conversation.pairing import pair

    tools = None
    if options.tools is not None:
        try:
            tools = load_tools(options.tools)
        except CaptureError as error:
            raise RunError(path, error.message) from None
    return Conversation(path, provider, tuple(turns), tools, tuple(pair(turns)), options.tools)


def diagnose_conversation(conversation: Conversation, options: Options) -> list[Finding]:
    """The conversation rules' findings (pairing across turns, schemas)."""
    return [
        finding
        for rule in selected_rules(options.select, options.ignore, "conversation")
        for finding in rule.check(conversation, rule)
    ]


@dataclass(frozen=True, eq=False)
class TurnContext:
    """What every turn of one replay shares, built once, when its provider is known (``of``)."""

    adapter: Adapter
    options: Options
    profiles: tuple[Profile, ...] = ()  # what --client names, fed each turn's events
    budget: Budget | None = None  # the timeline rows the whole replay may keep (``budget_of``)
    store: ArgumentStore | None = None  # the calls' argument text, spilled past a threshold
    release: bool = True  # let go of the frames' decoded values once translated (none read them again)

    @classmethod
    def of(
        cls, path: str, adapter: Adapter, options: Options, store: ArgumentStore | None = None, release: bool = True
    ) -> TurnContext:
        """The context of a replay of ``path``: RunError for a ``--client`` name that is none."""
        return cls(adapter, options, profiles_named(path, options), budget_of(options), store, release)


@dataclass(eq=False)
class TurnFrames:
    """One turn as a capture shape gives it to the turn loop: its section, the capture it comes from,
    and, for a stream read as it is read, the frames still to read (``section.frames`` otherwise)."""

    capture: Capture
    section: Section
    frames: Iterable[Frame] | None = None
    streamed: Streamed | None = None  # what counted and timed those frames


def accumulate_turn(context: TurnContext, turn: TurnFrames) -> tuple[AccumulatedStream, Kept]:
    """One turn's stream: its frames translated and accumulated, and what was kept of its events."""
    adapter, options = context.adapter, context.options
    capture, section, streamed = turn.capture, turn.section, turn.streamed
    frames = turn.frames if turn.frames is not None else section.frames
    accumulator = Accumulator(adapter.protocol.positional_indices, context.store)
    translator = adapter.translator()
    exchange = section.exchange
    container = (exchange.body_container or "none") if exchange is not None else capture.container
    end_not_recorded = getattr(translator, "end_not_recorded", None)  # the adapters whose end is a sentinel
    if end_not_recorded is not None and not records_sentinel(container, capture.header):
        end_not_recorded()
    if context.budget is not None or options.keep_events or options.clients:
        kept = Kept(options, adapter.name, context.budget, context.profiles, container == "sse")
    else:
        kept = NOTHING_KEPT
    if kept.wanted:  # the events also go to what keeps them (client profiles are fed the same events)
        accumulator.feed_all(kept_events(frames, translator, kept))
    else:  # the hot path: one generator, no list per frame
        accumulator.feed_all(translator.translate(frames, release=context.release))
        accumulator.feed_all(translator.close())
    # (a streamed capture's count, size and end are known once its frames have been read)
    ended_cleanly = section.ended_cleanly if streamed is None else capture.ended_cleanly
    info = CaptureInfo(
        path=capture.path,
        container=container,
        compressed=capture.compressed,
        provider=adapter.name,
        provider_forced=options.provider is not None,
        size=exchange.body_size if exchange is not None else capture.size,
        frames=streamed.count if streamed is not None else len(frames),  # type: ignore[arg-type]
        duration=streamed.duration() if streamed is not None else duration_of(frames),  # type: ignore[arg-type]
        header=capture.header,
        interaction=section.interaction,
        protocol=adapter.protocol,
    )
    stream = accumulator.result(info, ended_cleanly, section.problems, translator.counts)
    return stream, kept


def diagnose(stream: AccumulatedStream, options: Options) -> tuple[Finding, ...]:
    """The stream rules' findings about one stream."""
    rules = stream_dispatch(options.select, options.ignore).rules_for(stream)
    findings = [finding for rule in rules for finding in rule.check(stream, rule)]
    return tuple(sorted(findings, key=lambda f: f.sort_key))


class Kept:
    """What one turn keeps of its events for the features that look at them afterwards, made as
    they are read: every event (``keep_events``, the library's), the timeline's compact rows
    (``--timeline``, the HTML report) and each client profile's run (``--client``)."""

    def __init__(
        self,
        options: Options,
        provider: str,
        budget: Budget | None = None,
        profiles: tuple[Profile, ...] = (),
        sse: bool = False,  # the capture is an SSE body: a frame's ``event:`` line reaches the profiles
    ) -> None:
        self.sse = sse
        self.events: list[tuple[Frame, Event]] | None = [] if options.keep_events else None
        self.rows: Rows | None = None
        if budget is not None:
            from stream_doctor.values.timeline_rows import Rows

            self.rows = Rows(budget)
        self.clients: list[Running] = []
        self.framing_of: Callable[[Frame], Framing] | None = None  # the SSE framing facts the profiles read
        if profiles:
            from stream_doctor.clients import Running
            from stream_doctor.clients.framing import framing_of

            self.clients = [Running(p, provider) for p in profiles if p.applies_to(provider)]
            self.framing_of = framing_of if sse else None

    @property
    def wanted(self) -> bool:
        return self.events is not None or self.rows is not None or bool(self.clients)

    def take(self, frame: Frame, produced: Iterable[Event]) -> None:
        events, rows, clients = self.events, self.rows, self.clients
        framing = self.framing_of(frame) if self.framing_of is not None else None
        for event in produced:
            if events is not None:
                events.append((frame, event))
            if rows is not None:
                rows.add(frame, event)
            for running in clients:
                running.feed(event, framing)


NOTHING_KEPT = Kept(Options(), "")


def kept_events(frames: Iterable[Frame], translator: Translator, kept: Kept) -> Iterator[Event]:
    """Every event, handed to what ``kept`` keeps with the frame it came from (for --timeline and the
    client profiles, which are not fed the events an adapter makes up when the stream ends: no frame
    sent them)."""
    for frame in frames:
        produced = translator.feed(frame) if frame.kind == "event" else [envelope_event(frame)]
        kept.take(frame, produced)
        yield from produced
    yield from translator.close()


def adapter_for(capture: Capture, options: Options, frames: list[Frame] | None = None) -> Adapter:
    """The forced adapter, or the one detected (once, from the first turn with events)."""
    if options.provider is not None:
        from stream_doctor.config.selection import check_choice

        try:  # the resolver checked it; an Options built by hand is refused in the same words
            return ADAPTERS[check_choice(options.provider, ADAPTERS, "provider")]
        except ValueError as error:
            raise RunError(capture.path, str(error)) from None
    if frames is None:
        if capture.exchanges:
            skipped = sum(1 for e in capture.exchanges if e.skipped is not None)
            total = len(capture.exchanges)
            raise RunError(
                capture.path,
                f"no interaction holds a streamed response ({total} interaction{'s' if total != 1 else ''}, "
                f"{skipped} of them not LLM calls)",
            )
        raise RunError(capture.path, "the capture holds no events")
    hint = capture.header.get("provider") if capture.header else None
    try:
        adapter, _ = detect(frames, hint if isinstance(hint, str) else None)
    except DetectionError as error:
        raise RunError(capture.path, str(error)) from None
    return adapter


def _read(message: Message) -> bool:
    """Whether the adapter read anything of this message: a block, a stop reason, an error (an
    adapter opens a message of its own at the first event, or at a bare ``[DONE]``)."""
    return bool(message.blocks) or message.stop_reason is not None or message.error is not None


#: The problems an adapter records for an event it cannot read (rules/capture: SD002, SD001).
UNREAD = ("unknown-event", "malformed-frame")


def refuse_unread(
    path: str, adapter: Adapter, options: Options, streams: list[AccumulatedStream], head: list[Frame]
) -> None:
    """A RunError when the forced provider read none of the capture's events (issue 36).

    Each would be an unknown or malformed event, the turn would have no message and no call, and
    the report would say "passed": a wrong option, not a capture that proves anything. ``head`` (the
    first frames with events) says what detection would have picked.
    """
    if options.provider is None or any(stream.calls or any(map(_read, stream.messages)) for stream in streams):
        return
    unread = sum(1 for stream in streams for problem in stream.problems if problem.kind in UNREAD)
    if not unread:
        return  # nothing but keep-alives, or no events at all: read, and reported as such
    frames = sum(stream.capture.frames for stream in streams)
    hint = next((s.capture.header.get("provider") for s in streams if s.capture.header), None)
    try:
        detected = detect(head, hint if isinstance(hint, str) else None)[0].name
    except DetectionError:
        detected = None
    if detected == adapter.name:
        return  # the right provider on a capture of unknown events: its findings say so
    if detected is not None:
        advice = f"it looks like {detected} (detected): leave out --provider, or force {detected}"
    else:
        advice = "no provider is detected in it either: is it an LLM stream?"
    raise RunError(
        path, f"--provider {adapter.name} reads none of its {frames} frames ({unread} unknown or malformed); {advice}"
    )


def duration_of(frames: list[Frame]) -> float | None:
    times = [f.t for f in frames if f.t is not None]
    return max(times) - min(times) if len(times) > 1 else None


@lru_cache(maxsize=64)
def selected_rules(select: tuple[str, ...], ignore: tuple[str, ...], scope: Scope = "stream") -> tuple[Rule, ...]:
    """The rules of a scope that --select and --ignore leave (the most specific selector wins, see
    ``selection.enabled``); `check` asks once per capture."""
    from stream_doctor.config.selection import enabled

    return tuple(rule for rule in rules_of(scope) if enabled(rule.code, select, ignore))


@lru_cache(maxsize=64)
def stream_dispatch(select: tuple[str, ...], ignore: tuple[str, ...]) -> Dispatch:
    """The selected stream rules by what they read (``rules/dispatch.py``), arranged once a selection."""
    return Dispatch(selected_rules(select, ignore))


def execution_note(turns: list[Turn], options: Options) -> str | None:
    """Why the execution checks did not run: the capture has calls the application would run but records
    nothing it ran (a raw stream), and some SD1xx rule is selected; None when they ran or could not apply."""
    from stream_doctor.config.selection import enabled
    from stream_doctor.rules import codes
    from stream_doctor.values.report import NO_EXECUTIONS_NOTE

    streams = [turn.stream for turn in turns]
    if any(stream.executions for stream in streams) or all(c.server_side for s in streams for c in s.calls):
        return None
    select, ignore = options.select, options.ignore
    selected = (code for code in codes() if code.startswith("SD1") and enabled(code, select, ignore))
    return NO_EXECUTIONS_NOTE if any(selected) else None
