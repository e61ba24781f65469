"""What a provider adapter is: its protocol's facts, a sniffer and a translator from frames to neutral events."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Hashable, Iterable, Iterator, Protocol, Sequence

from stream_doctor.capture.base import RELEASED, Frame
from stream_doctor.capture.runs import Positions
from stream_doctor.values.envelope_events import envelope_event
from stream_doctor.values.events import ArgsDelta, ArgsRun, Event
from stream_doctor.values.protocol import ProtocolFacts

if TYPE_CHECKING:
    from stream_doctor.capture.runs import FrameRun

# What ``translate`` holds before its first run of fragments: never written (a run makes its own), as a
# Positions costs about 2 us to make and most turns of a session yield one run or none.
_NO_RUN = Positions()


class Translator(Protocol):
    """Turns one capture's provider frames into neutral events; one instance per capture."""

    #: provider event type -> number of frames of that type seen
    counts: dict[str, int]

    def feed(self, frame: Frame) -> list[Event]:
        """The events of one event frame (the timeline and tests translate frame by frame)."""
        ...

    def translate(self, frames: Iterable[Frame], release: bool = False) -> Iterator[Event]:
        """Every event of all the frames in order, envelope records included (via
        ``envelope_events.envelope_event``), without a list per frame; with ``release`` (the events
        go straight to an accumulator) it may set a translated frame's ``value`` to
        ``capture.base.RELEASED`` and batch a call's consecutive fragments into one ``ArgsRun``.
        Translating frame by frame with ``feed`` gives the same events (``FrameByFrame`` and
        ``FeedByFeed`` define one from the other); ``ArgsRun.deltas()`` are the events it stands for.
        """
        ...

    def close(self) -> list[Event]:
        """Events implied by the end of the capture (most providers: none)."""
        ...


class Adapter(Protocol):
    name: str
    title: str
    #: What the protocol promises (what ends a stream, completes a call …), copied onto the capture's info.
    protocol: ProtocolFacts

    def sniff(self, frames: Sequence[Frame]) -> int:
        """How sure (0-100) the adapter is that these (first few) event frames are its provider's."""
        ...

    def translator(self) -> Translator: ...


class FrameByFrame:
    """For translators whose one entry point is ``translate``: ``feed`` translates a single frame.

    The hot path then lives in ``translate`` alone; ``feed`` (the timeline, tests) reuses it.
    Every such ``translate`` writes its state back to the translator when it finishes, so
    translating frame by frame gives the same events as translating all frames at once.
    """

    __slots__ = ()

    def feed(self, frame: Frame) -> list[Event]:
        return list(self.translate((frame,)))  # type: ignore[attr-defined]


class FeedByFeed:
    """For translators whose one entry point is ``feed``: ``translate`` feeds frame after frame."""

    __slots__ = ()

    def translate(self, frames: Iterable[Frame], release: bool = False) -> Iterator[Event]:
        feed = self.feed  # type: ignore[attr-defined]
        for frame in frames:
            if frame.kind == "event":
                yield from feed(frame)
            else:
                yield envelope_event(frame)


class Batching(FrameByFrame):
    """A FrameByFrame translator whose hot path is one argument-fragment event: the loop is here, once.

    The adapter says how to read one such event, ``fast_fragment(frame)``: ``(key, fragment)`` when
    the frame is the fragment event in the shape the provider always sends (checked with plain
    subscripts, any state it changes changed), a list of events when it is that event but needs more
    than one ArgsDelta (the loop yields them as they are), None for everything else, which takes the
    checked path, ``_feed(frame)``. Every frame ``fast_fragment`` takes counts as one
    ``fragment_event`` in ``counts``.

    With ``release`` (the events go straight to an accumulator) a taken frame lets go of its decoded
    value (kept for every event, those dicts are most of a replay's memory) and consecutive fragments
    of one call go out as one ``ArgsRun``. A ``capture.runs.FrameRun`` whose head was taken as
    ``(key, fragment)`` is taken whole, its events differing from the head only in their fragment
    (and free groups), when ``run_fragments(run, key)`` gives its fragments; otherwise its frames are
    translated one by one.
    """

    __slots__ = ()

    #: The provider's name for the fragment event (its count in ``counts``).
    fragment_event: ClassVar[str]
    #: The ``delta_type`` of the ArgsDelta events it becomes.
    delta_type: ClassVar[str]

    def fast_fragment(self, frame: Frame) -> tuple[Hashable, str] | list[Event] | None:
        """One event frame's call key and fragment, the events it stands for, or None (see the class)."""
        raise NotImplementedError

    def run_fragments(self, run: FrameRun, key: Hashable) -> list[str] | None:
        """The fragments of a run whose head gave ``key`` (what follows a head on the wire is the same
        event, so most adapters take them as read), or None to translate ``run.frames()``."""
        return run.fragments

    def _feed(self, frame: Frame) -> list[Event]:
        """The checked path: the events of an event frame ``fast_fragment`` did not take."""
        raise NotImplementedError

    def _translated(self, last: Any) -> None:
        """Called with the last frame (or run) of each ``translate`` that had one."""

    def translate(self, frames: Iterable[Frame], release: bool = False) -> Iterator[Event]:
        """Every event of these frames, in order (see ``Translator.translate``)."""
        fast_fragment, feed, delta_type = self.fast_fragment, self._feed, self.delta_type
        deltas = 0  # frames fast_fragment took, added to counts at the end
        run_key: Hashable = None  # with ``release``: fragments of one call go out as one ArgsRun
        run_positions = _NO_RUN  # a run's Positions, made when its first fragment comes (a turn may have none)
        run_fragments: list[str] = []
        taken: Any = None  # the latest frame taken as (key, fragment)
        frame: Any = None
        for frame in frames:
            kind = frame.kind
            if kind == "event":
                found = fast_fragment(frame)
                if found is None:
                    if run_fragments:
                        yield ArgsRun(run_key, run_positions, run_fragments, delta_type)
                        run_fragments = []
                    yield from feed(frame)
                    continue
                deltas += 1
                if type(found) is tuple:
                    key, fragment = found
                    if not release:
                        yield ArgsDelta(frame.pos, key, fragment, delta_type)
                        continue
                    frame.value = RELEASED
                    if key != run_key:
                        if run_fragments:
                            yield ArgsRun(run_key, run_positions, run_fragments, delta_type)
                            run_fragments = []
                        run_key = key
                    if not run_fragments:
                        run_positions = Positions()
                    run_positions.extend(frame.pos)
                    run_fragments.append(fragment)
                    taken = frame
                    continue
                if run_fragments:
                    yield ArgsRun(run_key, run_positions, run_fragments, delta_type)
                    run_fragments = []
                if release:
                    frame.value = RELEASED
                yield from found  # type: ignore[misc]
                continue
            if kind == "run":
                run: FrameRun = frame
                if run.head is taken and release:
                    fragments = self.run_fragments(run, run_key)
                    if fragments is not None:
                        # computed from the run's own fragments: lazy only while those are the call's
                        if not run_fragments:
                            run_positions = Positions()
                        run_positions.add(run.positions if fragments is run.fragments else run.triples())
                        run_fragments += fragments
                        deltas += len(fragments)
                        continue
                if run_fragments:
                    yield ArgsRun(run_key, run_positions, run_fragments, delta_type)
                    run_fragments = []
                self._counted(deltas)
                deltas = 0
                yield from self.translate(run.frames(), release)
                continue
            if run_fragments:
                yield ArgsRun(run_key, run_positions, run_fragments, delta_type)
                run_fragments = []
            yield envelope_event(frame)
        if run_fragments:
            yield ArgsRun(run_key, run_positions, run_fragments, delta_type)
        self._counted(deltas)
        if frame is not None:
            self._translated(frame)

    def _counted(self, deltas: int) -> None:
        if deltas:
            counts: dict[str, int] = self.counts  # type: ignore[attr-defined]
            counts[self.fragment_event] = counts.get(self.fragment_event, 0) + deltas
