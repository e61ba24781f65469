"""What a provider adapter is: a sniffer and a translator from frames to neutral events."""

from __future__ import annotations

from typing import Protocol, Sequence

from stream_doctor.capture.base import Frame
from stream_doctor.events import Event


class Translator(Protocol):
    """Turns one capture's provider frames into neutral events; one instance per capture."""

    #: provider event type -> number of frames of that type seen
    counts: dict[str, int]

    def feed(self, frame: Frame) -> list[Event]: ...

    # Optional, for speed: ``translate(frames, release) -> Iterator[Event]`` gives every event of
    # all the frames in order (envelope records included, via envelope_events.envelope_event),
    # without a list per frame; with ``release`` it may set a translated frame's ``value`` to
    # ``capture.base.RELEASED``. The engine uses it when present and ``feed`` otherwise.

    def close(self) -> list[Event]:
        """Events implied by the end of the capture (most providers: none)."""
        ...


class Adapter(Protocol):
    name: str
    title: str
    #: Block indices are positions in the final message (Anthropic): a gap or reuse is an anomaly.
    positional_indices: bool

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
