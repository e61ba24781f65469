"""The pipeline on one screen: capture → frames → events → accumulated stream → findings → report.

``replay`` opens the capture and picks its shape; every shape gives its turns, as sections, to the
one turn loop (``_replayed``), which finds the provider, accumulates each turn with the stages of
``engine/stages.py`` (adapter, accumulator; shared with ``convert`` and the live proxy) and hands them to
``_report``: each turn's rules, the conversation rules across the turns (calls against results,
arguments against schemas), and the report. The shapes, below: a capture read whole (``Whole``),
one stream replayed as it is read (``OneStream``), a HAR file or cassette read an interaction at a
time (``ByInteraction``), and a session's several files (``SessionFiles``, ``replay_many``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from itertools import chain, islice
from typing import TYPE_CHECKING

from stream_doctor.accumulate.spill import ArgumentStore
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture import UNRECOGNISED, Interactions, ManyTurns, Streamed, load, open_capture
from stream_doctor.capture.base import Capture, CaptureError, Frame
from stream_doctor.conversation.build import RequestReader, Section, request_info, sections_of, split
from stream_doctor.conversation.model import Turn
from stream_doctor.engine.additions import add_executions, frame_times, given_after, supplied_of, timed, with_timings
from stream_doctor.engine.stages import (
    Kept,
    RunError,
    TurnContext,
    TurnFrames,
    accumulate_turn,
    adapter_for,
    conversation_of,
    diagnose,
    diagnose_clients,
    diagnose_conversation,
    execution_note,
    library_runs,
    refuse_unread,
    review_turn,
    run_file,
    unknown_fields_once,
)
from stream_doctor.providers import ADAPTERS, SNIFF_FRAMES
from stream_doctor.providers.base import Adapter
from stream_doctor.rules.requested import known
from stream_doctor.util.gcpause import no_gc
from stream_doctor.values.events import Event
from stream_doctor.values.findings import Finding
from stream_doctor.values.options import Options
from stream_doctor.values.report import Report, Source
from stream_doctor.values.timeline import NO_TIMELINE, Timeline, joined

#: Each turn's stream, and what was kept of its events.
Replayed = list[tuple[AccumulatedStream, Kept]]

if TYPE_CHECKING:
    from stream_doctor.capture.session import Session
    from stream_doctor.clients.base import Profile
    from stream_doctor.clients.compare import ClientReview
    from stream_doctor.clients.runs import LibraryRuns
    from stream_doctor.engine.stages import RunFiles


def replay(path: str, options: Options, data: bytes | None = None) -> Report:
    """Replay the capture at ``path`` (or ``data``, named ``path``); RunError when it cannot be replayed.

    This is the engine's entry point; the library API (``stream_doctor.replay``) builds on it.
    A capture that its reader can read piece by piece (SSE, JSON Lines, the envelope) is replayed
    as it is read, one turn, without a list of its frames; the rest (several turns, executions
    given after the fact, containers read whole) from the list of all its frames.
    """
    with _replaying() as store, run_file(path, data, options) as (data, files):
        with _reading(path):
            opened = open_capture(path, options.container, data, options.limits)
            if given_after(options) and isinstance(opened, (Streamed, Interactions)):
                opened = opened.whole()  # executions given after the fact are placed on the whole list
        if isinstance(opened, Streamed):
            try:
                return _replayed(OneStream(opened, options), options, store, files)
            except ManyTurns:  # several turns, or no event to detect the provider from early on
                with _reading(path):
                    opened = opened.whole()
        shape = ByInteraction(opened, options) if isinstance(opened, Interactions) else Whole(opened, options)
        return _replayed(shape, options, store, files)


def replay_loaded(capture: Capture, options: Options) -> Report:
    """Replay a capture already read whole (``capture.load``), as ``replay`` would its bytes: for the
    minimizer, which cuts the capture into frames and needs its findings, so that a large capture is
    read once. The replay lets go of the frames' decoded values: read them before."""
    with _replaying() as store:
        return _replayed(Whole(capture, options), options, store)


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


def _replayed(shape: Shape, options: Options, store: ArgumentStore, files: RunFiles | None = None) -> Report:
    """The one turn loop: each turn the shape gives is accumulated once the provider is known (the turns
    before the first with events wait for it); then, unless the shape holds them anyway, its frames go
    but for its request (what pairing across turns reads) and the times of timed frames, so memory
    follows the largest turn and what each turn keeps, not every turn's frames."""
    turns: list[TurnFrames] = []
    replayed: Replayed = []
    context: TurnContext | None = None
    with _reading(shape.path):
        for turn in shape.turns():
            turns.append(turn)
            adapter = shape.adapter(turn, None if context is None else context.adapter)
            if adapter is None:
                continue  # accumulated once a later turn tells the provider
            if context is None:
                context = TurnContext.of(turn.capture.path, adapter, options, store, release=not given_after(options))
            for waiting in turns[len(replayed) :]:
                replayed.append(accumulate_turn(context, waiting))
                if not shape.holds_frames:
                    waiting.section.frames = [
                        f if f.kind == "request" else Frame(f.pos, b"", None, t=f.t)
                        for f in waiting.section.frames
                        if f.kind == "request" or f.t is not None
                    ]
    if context is None:
        adapter_for(shape.capture, options)  # no turn with events: says why (a forced provider: no turn)
        raise RunError(shape.path, "none of its interactions is an LLM call")
    replayed = shape.supplied(context, turns, replayed)
    if len(replayed) > 1:
        replayed = unknown_fields_once(replayed)
    if any(stream.capture.duration is not None for stream, _ in replayed):
        replayed = shape.timed(turns, replayed)
    sections = [turn.section for turn in turns]
    return _report(context, options, sections, replayed, shape.source(), shape.head, files)


@contextmanager
def _replaying() -> Iterator[ArgumentStore]:
    """The calls' argument text of one replay, in memory and past a threshold in a temporary file, which
    goes with the report (or now, if the replay fails); the cyclic collector paused meanwhile."""
    store = ArgumentStore()
    try:
        # Everything built here is kept until the report is done: cyclic collections would only
        # re-scan it, at about a third of the replay's time (see gcpause).
        with no_gc():
            yield store
    except BaseException:
        store.close()
        raise


@contextmanager
def _reading(path: str) -> Iterator[None]:
    """A capture that cannot be read (as it is opened, or as its frames are read): the replay's one-line error."""
    try:
        yield
    except CaptureError as error:
        raise RunError(path if path != "-" else "<stdin>", error.message, error.line) from None


def _in_folder(message: str, folder: str | None) -> str:
    """A folder's replay error, shortened, and what replays each of its captures on its own (issue 36:
    a README among a folder's captures, or a folder of folders, had left a user without a way on)."""
    if folder is None:
        return message
    if message.startswith(UNRECOGNISED):
        message = "not a capture (no capture format recognises it)"
    import shlex  # not at import: only a folder's replay error quotes

    return f"{message}; replay reads a folder's files as one conversation: `stream-doctor check {shlex.quote(folder)}` replays each capture under it on its own"


def _replay_collected(session: Session, options: Options) -> Report:
    if len(session.files) == 1:
        return replay(session.files[0], options)
    if options.executed or options.executions is not None:
        raise RunError(
            session.label,
            "--executed and --executions take one capture: give the executions with the capture that holds the call",
        )
    with _replaying() as store:
        return _replayed(SessionFiles(session, options), options, store)


def _report(
    context: TurnContext,
    options: Options,
    sections: list[Section],
    replayed: Replayed,
    source: Source,
    head: list[Frame],
    files: RunFiles | None = None,
) -> Report:
    """The turns' findings, the conversation's, and the report (``head``: the first frames with events;
    ``files``: the file a library's process reads for a capture given as bytes, ``run_file``'s)."""
    path, adapter, profiles = source.path, context.adapter, context.profiles  # --client's, resolved once a replay
    refuse_unread(path, adapter, options, [stream for stream, _ in replayed], head)
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
    replayed: Replayed,
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


class Shape:
    """How one capture shape gives its turns to the turn loop; the defaults serve a capture's sections."""

    holds_frames = False  # its turns' frames are held anyway (a capture read whole): none to let go

    def __init__(self, capture: Capture, options: Options) -> None:
        self.capture = capture  # what an error names, and the provider is detected in
        self.path = capture.path
        self.options = options
        self.head: list[Frame] = []  # the first frames with events (what ``refuse_unread`` detects from)

    def turns(self) -> Iterator[TurnFrames]:
        raise NotImplementedError

    def adapter(self, turn: TurnFrames, known: Adapter | None) -> Adapter | None:
        """The provider's adapter once this turn is read: the forced one, or detected at the first turn
        with events; None while it cannot be told."""
        section = turn.section
        if not self.head and section.has_events:
            self.head = section.frames[: SNIFF_FRAMES * 4]
        if known is not None or (self.options.provider is None and not self.head):
            return known
        return adapter_for(turn.capture, self.options, self.head)

    def supplied(self, context: TurnContext, turns: list[TurnFrames], replayed: Replayed) -> Replayed:
        """The turns with executions given after the fact (only a capture read whole has them)."""
        return replayed

    def timed(self, turns: list[TurnFrames], replayed: Replayed) -> Replayed:
        frames = [turn.section.frames for turn in turns]
        starts = [next(frame_times(turn), (0, None))[1] for turn in frames]
        return timed([frame_times(turn) for turn in frames], replayed, starts)

    def source(self) -> Source:
        capture = self.capture
        skipped = sum(1 for e in capture.exchanges if e.skipped is not None)
        frames = self.frames()
        return Source(
            capture.path, capture.container, capture.compressed, capture.size, frames, len(capture.exchanges), skipped
        )

    def frames(self) -> int:
        return len(self.capture.frames)


class Whole(Shape):
    """A capture read whole (``capture.load``): its sections (``split``), over the frame list it holds."""

    holds_frames = True

    def turns(self) -> Iterator[TurnFrames]:
        return (TurnFrames(self.capture, section) for section in split(self.capture))

    def supplied(self, context: TurnContext, turns: list[TurnFrames], replayed: Replayed) -> Replayed:
        """Each turn that executions given after the fact name, replayed again with them at its end."""
        if not given_after(self.options):
            return replayed
        from stream_doctor.engine.executions import SuppliedError

        try:
            supplied = supplied_of(self.options)
            read = add_executions(supplied, [t.section for t in turns], [stream.calls for stream, _ in replayed])
        except SuppliedError as error:
            raise RunError(self.path, str(error)) from None
        replayed = list(replayed)
        for number, frames in read.items():
            stream, kept = accumulate_turn(context, turns[number])
            # the capture's size stays what was read: the given executions are not its events
            replayed[number] = (replace(stream, capture=replace(stream.capture, frames=frames)), kept)
        return replayed


class OneStream(Shape):
    """One turn replayed as its frames are read (``capture.streamed``); ManyTurns when it is not one turn."""

    holds_frames = True  # its section's frames are its request record

    def __init__(self, streamed: Streamed, options: Options) -> None:
        super().__init__(streamed.capture, options)
        self.streamed = streamed
        self.found: Adapter | None = None

    def turns(self) -> Iterator[TurnFrames]:
        streamed, capture, options = self.streamed, self.capture, self.options
        # The hot path reads runs of the adapter's fragment events whole (capture/runs.py): from the
        # first byte when the provider is forced, else once it is detected from the first frames.
        runs = not (options.keep_events or options.clients or options.timeline)  # those see each event
        frames = streamed.frames(runs=runs)
        forced = ADAPTERS.get(options.provider) if runs and options.provider is not None else None
        if forced is not None:
            streamed.read_runs(getattr(forced, "run_form", None))
        self.head = list(islice(frames, SNIFF_FRAMES * 4))
        if not any(frame.kind == "event" for frame in self.head):
            raise ManyTurns  # nothing to detect the provider from so early: the whole list says why
        self.found = adapter_for(capture, options, self.head)
        if runs:
            streamed.read_runs(getattr(self.found, "run_form", None))
        section = Section(1, None, streamed.requests, capture.problems)
        yield TurnFrames(capture, section, chain(self.head, frames), streamed)
        section.ended_cleanly = capture.ended_cleanly  # known once its frames are read

    def adapter(self, turn: TurnFrames, known: Adapter | None) -> Adapter | None:
        return self.found

    def timed(self, turns: list[TurnFrames], replayed: Replayed) -> Replayed:
        return timed([self.streamed.times()], replayed, [self.streamed.first_t])

    def source(self) -> Source:
        capture = self.capture
        return Source(capture.path, capture.container, capture.compressed, capture.size, self.streamed.count, 0, 0)


class ByInteraction(Shape):
    """A HAR file or a cassette replayed a turn at a time as its interactions are read (as ``Whole``
    does from the whole list): memory follows the largest interaction, not every turn's frames."""

    def __init__(self, opened: Interactions, options: Options) -> None:
        super().__init__(opened.capture, options)
        self.opened = opened
        self.read = 0  # the frames of its LLM calls' interactions

    def turns(self) -> Iterator[TurnFrames]:
        for section in sections_of(self.opened.turns()):
            self.read += len(section.frames)
            yield TurnFrames(self.capture, section)

    def frames(self) -> int:
        return self.read


class SessionFiles(Shape):
    """A session's captures (``replay_many``), each read whole and split into its turns, numbered as the
    conversation's; each file's times count from its own start. Files of one container and one provider."""

    def __init__(self, session: Session, options: Options) -> None:
        self.session = session
        self.options = options
        self.path = session.label
        self.head = []
        self.detected_in = ""  # the file the provider was found in
        self.size = self.read = self.interactions = self.skipped = 0

    def turns(self) -> Iterator[TurnFrames]:
        number = 0
        first: Capture | None = None
        for path in self.session.files:
            try:
                capture = load(path, self.options.container, None, self.options.limits)
            except CaptureError as error:
                raise RunError(path, error.message, error.line) from None
            if first is None:
                first = self.capture = capture
            elif capture.container != first.container:
                raise RunError(
                    path,
                    f"its format is {capture.container}, but {first.path}'s is {first.container}: "
                    "the captures of one conversation are of one format",
                )
            self.size, self.read = self.size + capture.size, self.read + len(capture.frames)
            self.interactions += len(capture.exchanges)
            self.skipped += sum(1 for e in capture.exchanges if e.skipped is not None)
            for section in split(capture):
                number += 1
                # positions name the turn of the conversation, and the file
                section.number = section.interaction = number
                yield TurnFrames(capture, section)

    def adapter(self, turn: TurnFrames, known: Adapter | None) -> Adapter | None:
        """Every turn with events detected again: a turn of another provider is a RunError naming both files."""
        section = turn.section
        if section.has_events:
            path = turn.capture.path
            known, self.detected_in = session_adapter(
                turn.capture, self.options, section.frames, path, known, self.detected_in
            )
            self.head = self.head or section.frames[: SNIFF_FRAMES * 4]
        if known is None and self.options.provider is not None:
            known = adapter_for(turn.capture, self.options)
        return known

    def timed(self, turns: list[TurnFrames], replayed: Replayed) -> Replayed:
        """Each file's turns timed on their own: a turn's clock ends at the next turn of its file."""
        out: Replayed = []
        for capture in {id(t.capture): t.capture for t in turns}.values():
            mine = [n for n, turn in enumerate(turns) if turn.capture is capture]
            out += super().timed([turns[n] for n in mine], [replayed[n] for n in mine])
        return out

    def source(self) -> Source:
        first, session = self.capture, self.session
        return Source(
            session.label,
            first.container,
            first.compressed,
            self.size,
            self.read,
            self.interactions,
            self.skipped,
            session.files,
            session.order_note,
        )
