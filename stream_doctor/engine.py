"""The pipeline on one screen: capture → frames → events → accumulated stream → findings → report.

A capture of several turns (a HAR file, a cassette, an envelope with several requests) is split
into turns first; each is replayed on its own (its own accumulator, stream and findings), then
the conversation rules look across them all: calls against results, arguments against schemas.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from itertools import chain, islice
from typing import TYPE_CHECKING, Iterable, Iterator

from stream_doctor.accumulate.accumulator import Accumulator
from stream_doctor.accumulate.spill import ArgumentStore
from stream_doctor.accumulate.stream import AccumulatedStream, CaptureInfo
from stream_doctor.capture import Interactions, ManyTurns, Streamed, load, open_capture
from stream_doctor.capture.base import Capture, CaptureError, Frame, InputProblem
from stream_doctor.conversation.build import Section, facts, request_info, sections_of, split
from stream_doctor.conversation.model import Turn
from stream_doctor.envelope_events import envelope_event
from stream_doctor.events import Event
from stream_doctor.findings import Finding
from stream_doctor.gcpause import no_gc
from stream_doctor.options import Options
from stream_doctor.protocol import records_sentinel
from stream_doctor.providers import ADAPTERS, SNIFF_FRAMES, DetectionError, detect
from stream_doctor.providers.base import Adapter, Translator
from stream_doctor.report import Report, Source
from stream_doctor.rules import rules_of
from stream_doctor.rules.base import Rule, Scope
from stream_doctor.supplements import add_executions, given_after, supplied_of, timed, with_timings
from stream_doctor.timeline import NO_TIMELINE, Budget, Rows, Timeline, joined

if TYPE_CHECKING:
    from stream_doctor.capture.session import Session
    from stream_doctor.clients import Running
    from stream_doctor.clients.base import Profile
    from stream_doctor.clients.compare import ClientReview
    from stream_doctor.conversation.model import Conversation
    from stream_doctor.supplied import Supplied


class RunError(Exception):
    """The capture could not be replayed at all; the CLI prints it on one line and exits 2."""

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        where = path if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {message}")
        self.path, self.message, self.line = path, message, line  # `check` turns these into an SD000 finding


def replay(path: str, options: Options, data: bytes | None = None) -> Report:
    """Replay the capture at ``path`` (or ``data``, named ``path``); RunError when it cannot be replayed.

    This is the engine's entry point; the library API (``stream_doctor.replay``) builds on it.
    A capture that its reader can read piece by piece (SSE, JSON Lines, the envelope) is replayed
    as it is read, one turn, without a list of its frames; the rest (several turns, executions
    given after the fact, containers read whole) from the list of all its frames.
    """
    # The calls' argument text, in memory and past a threshold in a temporary file, which goes
    # with the report (or now, if the replay fails).
    store = ArgumentStore()
    try:
        # Everything built here is kept until the report is done: cyclic collections would only
        # re-scan it, at about a third of the replay's time (see gcpause).
        with no_gc():
            try:
                opened = open_capture(path, options.container, data, options.limits)
                # executions given after the fact are placed on the whole list
                after_fact = given_after(options)
                if isinstance(opened, Streamed):
                    if not after_fact:
                        try:
                            return _replay_streamed(opened, options, store)
                        except ManyTurns:
                            pass  # several turns: split from the whole list
                    opened = opened.whole()
                elif isinstance(opened, Interactions):
                    if not after_fact:
                        return _replay_interactions(opened, options, store)
                    opened = opened.whole()
            except CaptureError as error:
                raise RunError(path if path != "-" else "<stdin>", error.message, error.line) from None
            return _replay(opened, options, store)
    except BaseException:
        store.close()
        raise


def replay_many(paths: list[str], options: Options) -> Report:
    """Replay several captures of one session (or a folder of them) as one conversation, in the order
    ``capture.session.collect`` finds (recorded time, else file names); one path is ``replay``.

    Each file is read whole and split into its turns, which are replayed in the session's order,
    each with its own file's name, so that every position points into the real file; of a turn's
    frames only its request is kept once it is accumulated (what pairing across turns reads). The
    files must be of one container and one provider; a mix is a RunError.
    """
    from stream_doctor.capture.session import SessionError, collect

    try:
        session = collect(paths, options.limits)
    except SessionError as error:
        raise RunError(error.path or "stream-doctor", error.message) from None
    if len(session.files) == 1:
        return replay(session.files[0], options)
    if options.executed or options.executions is not None:
        raise RunError(
            session.label,
            "--executed and --executions take one capture: give the executions with the capture that holds the call",
        )
    store = ArgumentStore()
    try:
        with no_gc():
            return _replay_session(session, options, store)
    except BaseException:
        store.close()
        raise


def _replay_session(session: Session, options: Options, store: ArgumentStore) -> Report:
    adapter: Adapter | None = None
    first: Capture | None = None
    sections: list[Section] = []
    replayed: list[tuple[AccumulatedStream, Kept]] = []
    captures: list[Capture] = []  # each section's file
    detected_in = ""  # the file the provider was found in
    size = frames = interactions = skipped = 0
    budget = _budget(options)
    for path in session.files:
        try:
            capture = load(path, options.container, None, options.limits)
        except CaptureError as error:
            raise RunError(path, error.message, error.line) from None
        if first is None:
            first = capture
        elif capture.container != first.container:
            raise RunError(
                path,
                f"its format is {capture.container}, but {first.path}'s is {first.container}: "
                "the captures of one conversation are of one format",
            )
        size, frames = size + capture.size, frames + len(capture.frames)
        interactions += len(capture.exchanges)
        skipped += sum(1 for e in capture.exchanges if e.skipped is not None)
        for section in split(capture):
            section.number = len(sections) + 1
            section.interaction = section.number  # positions name the turn of the conversation, and the file
            sections.append(section)
            captures.append(capture)
            if section.has_events:
                adapter, detected_in = session_adapter(capture, options, section.frames, path, adapter, detected_in)
            if adapter is None and options.provider is None:
                continue  # accumulated once a later turn tells the provider
            if adapter is None:
                adapter = adapter_for(capture, options)
            for number in range(len(replayed), len(sections)):
                waiting = sections[number]
                replayed.append(
                    accumulate_turn(captures[number], adapter, options, waiting, budget=budget, store=store)
                )
                waiting.frames = [
                    f if f.kind == "request" else Frame(f.pos, b"", None, t=f.t)
                    for f in waiting.frames
                    if f.kind == "request" or f.t is not None
                ]
    assert first is not None
    if adapter is None:
        adapter = adapter_for(first, options)  # no turn with events: says why
    if not sections:
        raise RunError(session.label, "none of its interactions is an LLM call")
    replayed = _unknown_fields_once(replayed)
    if any(stream.capture.duration is not None for stream, _ in replayed):
        # each file's times count from its own start: a turn's clock ends at the next turn of its file
        timed_turns: list[tuple[AccumulatedStream, Kept]] = []
        for capture in {id(c): c for c in captures}.values():
            mine = [n for n, c in enumerate(captures) if c is capture]
            timed_turns += timed([sections[n].frames for n in mine], [replayed[n] for n in mine])
        replayed = timed_turns
    source = Source(
        session.label,
        first.container,
        first.compressed,
        size,
        frames,
        interactions,
        skipped,
        session.files,
        session.order_note,
    )
    return _report(adapter, options, sections, replayed, source)


def _replay(capture: Capture, options: Options, store: ArgumentStore | None = None) -> Report:
    sections = split(capture)
    adapter = adapter_for(capture, options, next((s.frames for s in sections if s.has_events), None))
    if not sections:
        raise RunError(capture.path, "none of its interactions is an LLM call")
    supplied = _supplied(capture.path, options)
    budget = _budget(options)
    replayed = [
        accumulate_turn(capture, adapter, options, section, release=not supplied, budget=budget, store=store)
        for section in sections
    ]
    if supplied:
        replayed = _with_supplied(capture, adapter, options, sections, replayed, supplied, budget, store)
    if len(replayed) > 1:
        replayed = _unknown_fields_once(replayed)
    if any(stream.capture.duration is not None for stream, _ in replayed):
        replayed = timed([s.frames for s in sections], replayed)
    source = Source(
        capture.path,
        capture.container,
        capture.compressed,
        capture.size,
        len(capture.frames),
        len(capture.exchanges),
        sum(1 for e in capture.exchanges if e.skipped is not None),
    )
    return _report(adapter, options, sections, replayed, source)


def _replay_streamed(streamed: Streamed, options: Options, store: ArgumentStore | None = None) -> Report:
    """One turn replayed as its frames are read (see ``capture.streamed``); ManyTurns when it is not one turn."""
    capture = streamed.capture
    # The hot path reads runs of the adapter's fragment events whole (capture/runs.py): from the
    # first byte when the provider is forced, else once it is detected from the first frames.
    runs = not (options.keep_events or options.clients or options.timeline)  # those see each event
    try:
        frames = streamed.frames(runs=runs)
        forced = ADAPTERS.get(options.provider) if runs and options.provider is not None else None
        if forced is not None:
            streamed.read_runs(getattr(forced, "run_form", None))
        head = list(islice(frames, SNIFF_FRAMES * 4))
        if not any(frame.kind == "event" for frame in head):
            raise ManyTurns  # nothing to detect the provider from so early: the whole list says why
        adapter = adapter_for(capture, options, head)
        if runs:
            streamed.read_runs(getattr(adapter, "run_form", None))
        section = Section(1, None, streamed.requests, capture.problems)
        replayed = [
            accumulate_turn(
                capture,
                adapter,
                options,
                section,
                frames=chain(head, frames),
                streamed=streamed,
                budget=_budget(options),
                store=store,
            )
        ]
    except CaptureError as error:
        raise RunError(capture.path, error.message, error.line) from None
    section.ended_cleanly = capture.ended_cleanly
    if replayed[0][0].capture.duration is not None:
        replayed = timed([streamed.times()], replayed, [streamed.first_t])
    source = Source(capture.path, capture.container, capture.compressed, capture.size, streamed.count, 0, 0)
    return _report(adapter, options, [section], replayed, source)


def _replay_interactions(opened: Interactions, options: Options, store: ArgumentStore | None = None) -> Report:
    """A HAR file or a cassette replayed a turn at a time as its interactions are read (as ``_replay``
    does from the whole list): once a turn is accumulated its frames go, but for its request (what
    pairing across turns reads) and the times of timed frames, so memory follows the largest
    interaction and what each turn keeps, not every turn's frames."""
    capture = opened.capture
    adapter: Adapter | None = None
    sections: list[Section] = []
    replayed: list[tuple[AccumulatedStream, Kept]] = []
    frames = 0
    budget = _budget(options)
    try:
        for section in sections_of(opened.turns()):
            sections.append(section)
            frames += len(section.frames)
            if adapter is None:
                if options.provider is None and not section.has_events:
                    continue  # accumulated once a later turn tells the provider
                adapter = adapter_for(capture, options, section.frames)
            for waiting in sections[len(replayed) :]:
                replayed.append(accumulate_turn(capture, adapter, options, waiting, budget=budget, store=store))
                waiting.frames = [
                    f if f.kind == "request" else Frame(f.pos, b"", None, t=f.t)
                    for f in waiting.frames
                    if f.kind == "request" or f.t is not None
                ]
    except CaptureError as error:
        raise RunError(capture.path, error.message, error.line) from None
    if adapter is None:
        adapter = adapter_for(capture, options)  # no turn with events: says why
    if not sections:
        raise RunError(capture.path, "none of its interactions is an LLM call")
    if len(replayed) > 1:
        replayed = _unknown_fields_once(replayed)
    if any(stream.capture.duration is not None for stream, _ in replayed):
        replayed = timed([s.frames for s in sections], replayed)
    skipped = sum(1 for e in capture.exchanges if e.skipped is not None)
    source = Source(
        capture.path, capture.container, capture.compressed, capture.size, frames, len(capture.exchanges), skipped
    )
    return _report(adapter, options, sections, replayed, source)


def _report(
    adapter: Adapter,
    options: Options,
    sections: list[Section],
    replayed: list[tuple[AccumulatedStream, Kept]],
    source: Source,
) -> Report:
    """The turns' findings, the conversation's, and the report."""
    path = source.path
    profiles = _profiles(path, options)
    turns: list[Turn] = []
    events: list[tuple[Frame, Event]] = []
    timelines: list[Timeline] = []
    reviews: list[tuple[int, tuple[ClientReview, ...]]] = []
    for section, (stream, kept) in zip(sections, replayed, strict=True):
        request = request_info(section)
        findings = diagnose(stream, options)
        if profiles:
            from stream_doctor.clients import reviews as client_reviews

            # an SSE body cut inside its last event: the libraries' SSE decoders never dispatch it
            turn_reviews = client_reviews(stream, kept.clients, kept.sse and not section.ended_cleanly)
            reviews.append((len(turns), turn_reviews))
            findings = diagnose_clients(turn_reviews, findings, options)
        status = section.status
        turn_facts = facts(adapter.name, request)
        turns.append(Turn(section.number, section.interaction, request, turn_facts, stream, findings, status))
        events += kept.events or ()
        if kept.rows is not None:
            timelines.append(kept.rows.timeline())
    across: list[Finding] = []
    if options.tools is not None or any(turn.request is not None for turn in turns):
        across = diagnose_conversation(_conversation(path, adapter.name, turns, options), options)
    timeline = joined(timelines) if timelines else NO_TIMELINE
    note = _execution_note(turns, options)
    report = Report.build(tuple(turns), across, options, tuple(events), source, timeline, note)
    if profiles:
        from stream_doctor.clients.extras import attach

        report = attach(report, reviews)
    return with_timings(report) if any(t.stream.capture.clock is not None for t in turns) else report


def _profiles(path: str, options: Options) -> tuple[Profile, ...]:
    """The client profiles ``--client`` names; RunError (exit 2) for a name that is none."""
    if not options.clients:
        return ()
    from stream_doctor.clients import UnknownClient, resolve

    try:
        return resolve(options.clients)
    except UnknownClient as error:
        raise RunError(path, str(error)) from None


def _budget(options: Options) -> Budget | None:
    """The timeline rows one replay may keep, when its report shows a timeline (``timeline.py``)."""
    return Budget() if options.timeline or options.keep_events else None


def diagnose_clients(
    reviews: tuple[ClientReview, ...], findings: tuple[Finding, ...], options: Options
) -> tuple[Finding, ...]:
    """The stream's findings with the SD8xx findings of each client review added, in report order."""
    found = [
        finding
        for review in reviews
        for rule in _rules(options.select, options.ignore, "client")
        for finding in rule.check(review, rule)
    ]
    if not found:
        return findings
    return tuple(sorted((*findings, *found), key=lambda f: f.sort_key))


def session_adapter(
    capture: Capture, options: Options, frames: list[Frame], path: str, adapter: Adapter | None, detected_in: str
) -> tuple[Adapter, str]:
    """The adapter of one more capture of a session: the session's, or a RunError naming both files."""
    found = adapter_for(capture, options, frames)
    if adapter is None:
        return found, path
    if found.name != adapter.name:
        raise RunError(
            path,
            f"its provider is {found.name}, but {detected_in}'s is {adapter.name}: "
            "the captures of one conversation are of one provider",
        )
    return adapter, detected_in


def _unknown_fields_once(
    replayed: list[tuple[AccumulatedStream, Kept]],
    seen: set[str] | None = None,
) -> list[tuple[AccumulatedStream, Kept]]:
    """Each undocumented field path reported once per capture (SD006): at the first turn that has it.
    ``seen``: the paths of earlier turns, for a conversation given a turn at a time (``live``)."""
    from dataclasses import replace

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


def _supplied(path: str, options: Options) -> list[Supplied]:
    """The executions given after the fact, read and checked; RunError when one cannot be used."""
    if not given_after(options):
        return []
    from stream_doctor.supplied import SuppliedError

    try:
        return supplied_of(options)
    except SuppliedError as error:
        raise RunError(path, str(error)) from None


def _with_supplied(
    capture: Capture,
    adapter: Adapter,
    options: Options,
    sections: list[Section],
    replayed: list[tuple[AccumulatedStream, Kept]],
    supplied: list[Supplied],
    budget: Budget | None = None,
    store: ArgumentStore | None = None,
) -> list[tuple[AccumulatedStream, Kept]]:
    """Each turn that executions given after the fact name, replayed again with them at its end."""
    from stream_doctor.supplied import SuppliedError

    try:
        read = add_executions(supplied, sections, [stream.calls for stream, _ in replayed])
    except SuppliedError as error:
        raise RunError(capture.path, str(error)) from None
    replayed = list(replayed)
    for number, frames in read.items():
        stream, kept = accumulate_turn(capture, adapter, options, sections[number], budget=budget, store=store)
        # the capture's size stays what was read: the given executions are not its events
        replayed[number] = (replace(stream, capture=replace(stream.capture, frames=frames)), kept)
    return replayed


def _conversation(path: str, provider: str, turns: list[Turn], options: Options) -> Conversation:
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
        for rule in _rules(options.select, options.ignore, "conversation")
        for finding in rule.check(conversation, rule)
    ]


def accumulate_turn(
    capture: Capture,
    adapter: Adapter,
    options: Options,
    section: Section | None = None,
    release: bool = True,
    frames: Iterable[Frame] | None = None,
    streamed: Streamed | None = None,
    budget: Budget | None = None,
    store: ArgumentStore | None = None,
) -> tuple[AccumulatedStream, Kept]:
    """One turn's stream: its frames (``section.frames``, or ``frames`` as ``streamed`` reads them) translated and accumulated."""
    if frames is None:
        frames = section.frames if section is not None else capture.frames
    problems: list[InputProblem] = section.problems if section is not None else capture.problems
    accumulator = Accumulator(adapter.protocol.positional_indices, store)
    translator = adapter.translator()
    exchange = section.exchange if section is not None else None
    container = (exchange.body_container or "none") if exchange is not None else capture.container
    end_not_recorded = getattr(translator, "end_not_recorded", None)  # the adapters whose end is a sentinel
    if end_not_recorded is not None and not records_sentinel(container, capture.header):
        end_not_recorded()
    if budget is not None or options.keep_events or options.clients:
        kept = Kept(options, adapter.name, budget, _profiles(capture.path, options), capture.container == "sse")
    else:
        kept = NOTHING_KEPT
    if kept.wanted:  # the events also go to what keeps them (client profiles are fed the same events)
        accumulator.feed_all(_events(frames, translator, kept))
    else:  # the hot path: one generator, no list per frame
        accumulator.feed_all(translator.translate(frames, release=release))
        accumulator.feed_all(translator.close())
    # (a streamed capture's count, size and end are known once its frames have been read)
    ended_cleanly = section.ended_cleanly if section is not None and streamed is None else capture.ended_cleanly
    info = CaptureInfo(
        path=capture.path,
        container=container,
        compressed=capture.compressed,
        provider=adapter.name,
        provider_forced=options.provider is not None,
        size=exchange.body_size if exchange is not None else capture.size,
        frames=streamed.count if streamed is not None else len(frames),  # type: ignore[arg-type]
        duration=streamed.duration() if streamed is not None else _duration(frames),  # type: ignore[arg-type]
        header=capture.header,
        interaction=section.interaction if section is not None else None,
        protocol=adapter.protocol,
    )
    stream = accumulator.result(info, ended_cleanly, problems, translator.counts)
    return stream, kept


def diagnose(stream: AccumulatedStream, options: Options) -> tuple[Finding, ...]:
    """The stream rules' findings about one stream."""
    findings = [finding for rule in _rules(options.select, options.ignore) for finding in rule.check(stream, rule)]
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
        self.rows = Rows(budget) if budget is not None else None
        self.clients: list[Running] = []
        if profiles:
            from stream_doctor.clients import Running

            self.clients = [Running(p, provider) for p in profiles if p.applies_to(provider)]

    @property
    def wanted(self) -> bool:
        return self.events is not None or self.rows is not None or bool(self.clients)

    def take(self, frame: Frame, produced: Iterable[Event]) -> None:
        events, rows, clients = self.events, self.rows, self.clients
        for event in produced:
            if events is not None:
                events.append((frame, event))
            if rows is not None:
                rows.add(frame, event)
            for running in clients:
                running.feed(event, frame.event is not None if self.sse else None)


NOTHING_KEPT = Kept(Options(), "")


def _events(frames: Iterable[Frame], translator: Translator, kept: Kept) -> Iterator[Event]:
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
        adapter = ADAPTERS.get(options.provider)
        if adapter is None:
            raise RunError(
                capture.path, f"unknown provider {options.provider!r} (choose from {', '.join(sorted(ADAPTERS))})"
            )
        return adapter
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


def _duration(frames: list[Frame]) -> float | None:
    times = [f.t for f in frames if f.t is not None]
    return max(times) - min(times) if len(times) > 1 else None


@lru_cache(maxsize=64)
def _rules(select: tuple[str, ...], ignore: tuple[str, ...], scope: Scope = "stream") -> tuple[Rule, ...]:
    """The rules of a scope that --select and --ignore leave (the most specific selector wins, see
    ``selection.enabled``); `check` asks once per capture."""
    from stream_doctor.config.selection import enabled

    return tuple(rule for rule in rules_of(scope) if enabled(rule.code, select, ignore))


def _execution_note(turns: list[Turn], options: Options) -> str | None:
    """Why the execution checks did not run: the capture has calls the application would run but records
    nothing it ran (a raw stream), and some SD1xx rule is selected; None when they ran or could not apply."""
    from stream_doctor.config.selection import enabled
    from stream_doctor.report import NO_EXECUTIONS_NOTE
    from stream_doctor.rules import codes

    streams = [turn.stream for turn in turns]
    if any(stream.executions for stream in streams) or all(c.server_side for s in streams for c in s.calls):
        return None
    select, ignore = options.select, options.ignore
    selected = (code for code in codes() if code.startswith("SD1") and enabled(code, select, ignore))
    return NO_EXECUTIONS_NOTE if any(selected) else None
