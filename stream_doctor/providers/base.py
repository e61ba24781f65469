"""What a provider adapter is: its protocol's facts, a sniffer and a translator from frames to neutral events."""

from __future__ import annotations

from typing import Iterable, Iterator, Protocol, Sequence

from stream_doctor.capture.base import Frame
from stream_doctor.envelope_events import envelope_event
from stream_doctor.events import Event
from stream_doctor.protocol import ProtocolFacts


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
