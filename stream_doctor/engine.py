"""The pipeline on one screen: capture → frames → events → accumulated stream → findings → report.

A capture of several turns (a HAR file, a cassette, an envelope with several requests) is split
into turns first; each is replayed on its own (its own accumulator, stream and findings), then
the conversation rules look across them all: calls against results, arguments against schemas.
The stages of one turn (adapter, accumulator, the selected rules) are in ``stages.py``, shared with
``convert`` and the live proxy; this module decides how a capture, or a session's captures, is read
and put together into one report.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from itertools import chain, islice
from typing import TYPE_CHECKING

from stream_doctor.accumulate.spill import ArgumentStore
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture import UNRECOGNISED, Interactions, ManyTurns, Streamed, load, open_capture
from stream_doctor.capture.base import Capture, CaptureError, Frame
from stream_doctor.conversation.build import RequestReader, Section, request_info, sections_of, split
from stream_doctor.conversation.model import Turn
from stream_doctor.events import Event
from stream_doctor.findings import Finding
from stream_doctor.gcpause import no_gc
from stream_doctor.options import Options
from stream_doctor.providers import ADAPTERS, SNIFF_FRAMES
from stream_doctor.providers.base import Adapter
from stream_doctor.report import Report, Source
from stream_doctor.rules.requested import known
from stream_doctor.stages import (
    Kept,
    RunError,
    accumulate_turn,
    adapter_for,
    budget_of,
    conversation_of,
    diagnose,
    diagnose_clients,
    diagnose_conversation,
    execution_note,
    library_runs,
    profiles_named,
    refuse_unread,
    review_turn,
    run_file,
    unknown_fields_once,
)
from stream_doctor.supplements import add_executions, given_after, supplied_of, timed, with_timings
from stream_doctor.timeline import NO_TIMELINE, Budget, Timeline, joined

if TYPE_CHECKING:
    from stream_doctor.capture.session import Session
    from stream_doctor.clients.base import Profile
    from stream_doctor.clients.compare import ClientReview
    from stream_doctor.clients.runs import LibraryRuns
    from stream_doctor.stages import RunFiles
    from stream_doctor.supplied import Supplied


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
        with no_gc(), run_file(path, data, options) as (data, files):
            try:
                opened = open_capture(path, options.container, data, options.limits)
                # executions given after the fact are placed on the whole list
                after_fact = given_after(options)
                if isinstance(opened, Streamed):
                    if not after_fact:
                        try:
                            return _replay_streamed(opened, options, store, files)
                        except ManyTurns:
                            pass  # several turns: split from the whole list
                    opened = opened.whole()
                elif isinstance(opened, Interactions):
                    if not after_fact:
                        return _replay_interactions(opened, options, store, files)
                    opened = opened.whole()
            except CaptureError as error:
                raise RunError(path if path != "-" else "<stdin>", error.message, error.line) from None
            return _replay(opened, options, store, files)
    except BaseException:
        store.close()
        raise


def replay_loaded(capture: Capture, options: Options) -> Report:
    """Replay a capture already read whole (``capture.load``), as ``replay`` would its bytes: for the
    minimizer, which cuts the capture into frames and needs its findings, so that a large capture is
    read once. The replay lets go of the frames' decoded values: read them before."""
    store = ArgumentStore()
    try:
        with no_gc():
            return _replay(capture, options, store)
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
        folder = error.path if error.folders else None  # check searches the folders; an empty one has nothing
        raise RunError(error.path or "stream-doctor", _in_folder(error.message, folder)) from None
    try:
        return _replay_collected(session, options)
    except RunError as error:
        if session.folder is None:
            raise
        raise RunError(error.path, _in_folder(error.message, session.folder), error.line) from None


def _in_folder(message: str, folder: str | None) -> str:
    """A folder's replay error, shortened, and what replays each of its captures on its own (issue 36:
    a README among a folder's captures, or a folder of folders, had left a user without a way on)."""
    if folder is None:
        return message
    if message.startswith(UNRECOGNISED):
        message = "not a capture (no capture format recognises it)"
    return f"{message}; replay reads a folder's files as one conversation: `stream-doctor check {shlex.quote(folder)}` replays each capture under it on its own"


def _replay_collected(session: Session, options: Options) -> Report:
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
    head: list[Frame] = []  # the first frames with events
    size = frames = interactions = skipped = 0
    budget = budget_of(options)
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
                head = head or section.frames[: SNIFF_FRAMES * 4]
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
    replayed = unknown_fields_once(replayed)
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
    return _report(adapter, options, sections, replayed, source, head)


def _replay(
    capture: Capture, options: Options, store: ArgumentStore | None = None, files: RunFiles | None = None
) -> Report:
    sections = split(capture)
    head = next((s.frames[: SNIFF_FRAMES * 4] for s in sections if s.has_events), None)
    adapter = adapter_for(capture, options, head)
    if not sections:
        raise RunError(capture.path, "none of its interactions is an LLM call")
    supplied = _supplied(capture.path, options)
    budget = budget_of(options)
    replayed = [
        accumulate_turn(capture, adapter, options, section, release=not supplied, budget=budget, store=store)
        for section in sections
    ]
    if supplied:
        replayed = _with_supplied(capture, adapter, options, sections, replayed, supplied, budget, store)
    if len(replayed) > 1:
        replayed = unknown_fields_once(replayed)
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
    return _report(adapter, options, sections, replayed, source, head or [], files)


def _replay_streamed(
    streamed: Streamed, options: Options, store: ArgumentStore | None = None, files: RunFiles | None = None
) -> Report:
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
                budget=budget_of(options),
                store=store,
            )
        ]
    except CaptureError as error:
        raise RunError(capture.path, error.message, error.line) from None
    section.ended_cleanly = capture.ended_cleanly
    if replayed[0][0].capture.duration is not None:
        replayed = timed([streamed.times()], replayed, [streamed.first_t])
    source = Source(capture.path, capture.container, capture.compressed, capture.size, streamed.count, 0, 0)
    return _report(adapter, options, [section], replayed, source, head, files)


def _replay_interactions(
    opened: Interactions, options: Options, store: ArgumentStore | None = None, files: RunFiles | None = None
) -> Report:
    """A HAR file or a cassette replayed a turn at a time as its interactions are read (as ``_replay``
    does from the whole list): once a turn is accumulated its frames go, but for its request (what
    pairing across turns reads) and the times of timed frames, so memory follows the largest
    interaction and what each turn keeps, not every turn's frames."""
    capture = opened.capture
    adapter: Adapter | None = None
    sections: list[Section] = []
    replayed: list[tuple[AccumulatedStream, Kept]] = []
    frames = 0
    head: list[Frame] = []  # the first frames with events
    budget = budget_of(options)
    try:
        for section in sections_of(opened.turns()):
            sections.append(section)
            frames += len(section.frames)
            if adapter is None:
                if options.provider is None and not section.has_events:
                    continue  # accumulated once a later turn tells the provider
                adapter = adapter_for(capture, options, section.frames)
            if not head and section.has_events:
                head = section.frames[: SNIFF_FRAMES * 4]
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
        replayed = unknown_fields_once(replayed)
    if any(stream.capture.duration is not None for stream, _ in replayed):
        replayed = timed([s.frames for s in sections], replayed)
    skipped = sum(1 for e in capture.exchanges if e.skipped is not None)
    source = Source(
        capture.path, capture.container, capture.compressed, capture.size, frames, len(capture.exchanges), skipped
    )
    return _report(adapter, options, sections, replayed, source, head, files)


def _report(
    adapter: Adapter,
    options: Options,
    sections: list[Section],
    replayed: list[tuple[AccumulatedStream, Kept]],
    source: Source,
    head: list[Frame],
    files: RunFiles | None = None,
) -> Report:
    """The turns' findings, the conversation's, and the report (``head``: the first frames with events;
    ``files``: the file a library's process reads for a capture given as bytes, ``run_file``'s)."""
    path = source.path
    refuse_unread(path, adapter, options, [stream for stream, _ in replayed], head)
    profiles = profiles_named(path, options)
    runs = library_runs([stream.capture.path for stream, _ in replayed], files, adapter.name, profiles, options)
    try:
        return _reported(adapter, options, sections, replayed, source, profiles, runs)
    finally:
        if runs is not None:
            runs.close()


def _reported(
    adapter: Adapter,
    options: Options,
    sections: list[Section],
    replayed: list[tuple[AccumulatedStream, Kept]],
    source: Source,
    profiles: tuple[Profile, ...],
    runs: LibraryRuns | None,
) -> Report:
    path = source.path
    turns: list[Turn] = []
    events: list[tuple[Frame, Event]] = []
    timelines: list[Timeline] = []
    reviews: list[tuple[int, tuple[ClientReview, ...]]] = []
    in_file: dict[str, int] = {}  # turns so far of each capture file (a session's): a library's run counts its own
    requests = RequestReader(adapter.name)
    for section, (stream, kept) in zip(sections, replayed, strict=True):
        request = request_info(section)
        turn_facts = requests.facts(request)
        with known(None if request is None else request.body, turn_facts):
            findings = diagnose(stream, options)
        if profiles:
            # an SSE body cut inside its last event: the libraries' SSE decoders never dispatch it
            cut_last = kept.sse and not section.ended_cleanly
            turn = in_file[stream.capture.path] = in_file.get(stream.capture.path, -1) + 1
            turn_reviews = review_turn(path, stream, kept, cut_last, runs, turn)
            reviews.append((len(turns), turn_reviews))
            findings = diagnose_clients(turn_reviews, findings, options)
        status = section.status
        turns.append(Turn(section.number, section.interaction, request, turn_facts, stream, findings, status))
        events += kept.events or ()
        if kept.rows is not None:
            timelines.append(kept.rows.timeline())
    across: list[Finding] = []
    if options.tools is not None or any(turn.request is not None for turn in turns):
        across = diagnose_conversation(conversation_of(path, adapter.name, turns, options), options)
    timeline = joined(timelines) if timelines else NO_TIMELINE
    note = execution_note(turns, options)
    report = Report.build(tuple(turns), across, options, tuple(events), source, timeline, note, requests.counts)
    if profiles:
        from stream_doctor.clients.extras import attach

        report = attach(report, reviews)
    return with_timings(report) if any(t.stream.capture.clock is not None for t in turns) else report


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
