"""Build streams in tests without a capture file: from neutral events (``Script``), or from a
provider's frames through the real stages of one turn (``accumulated``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from stream_doctor.accumulate.accumulator import Accumulator
from stream_doctor.accumulate.stream import AccumulatedStream, CaptureInfo
from stream_doctor.capture.base import Capture, Frame, Pos
from stream_doctor.conversation.build import split
from stream_doctor.engine.stages import TurnContext, TurnFrames, accumulate_turn
from stream_doctor.providers import anthropic
from stream_doctor.providers.base import Adapter
from stream_doctor.values.events import Event
from stream_doctor.values.options import Options
from stream_doctor.values.protocol import ProtocolFacts


class Script:
    """Numbers events 1, 2, 3 … (event number = line number) as a capture would."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, make: Callable[..., Event], *args: Any, **kwargs: Any) -> Pos:
        number = len(self.events) + 1
        pos = Pos(number, number, (number - 1) * 100)
        self.events.append(make(pos, *args, **kwargs))
        return pos

    def stream(self, positional_indices: bool = True, protocol: ProtocolFacts | None = None) -> AccumulatedStream:
        """The accumulated stream, with the protocol facts a provider's adapter would state (Anthropic's by default)."""
        protocol = protocol or replace(anthropic.protocol, positional_indices=positional_indices)
        accumulator = Accumulator(protocol.positional_indices)
        accumulator.feed_all(self.events)
        info = CaptureInfo(
            "capture.sse", "sse", None, "anthropic", False, 0, len(self.events), None, None, protocol=protocol
        )
        return accumulator.result(info, True, (), {})


def accumulated(
    adapter: Adapter, frames: list[Frame], container: str = "sse", path: str = "c.sse"
) -> AccumulatedStream:
    """``frames`` replayed as one turn of a capture in ``container`` by the engine's own stages
    (``stages.accumulate_turn``: the adapter's translator on its hot path, then the accumulator)."""
    capture = Capture(path, container, 0, frames)
    (section,) = split(capture)
    return accumulate_turn(TurnContext.of(path, adapter, Options()), TurnFrames(capture, section))[0]
