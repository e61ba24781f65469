"""Build streams from neutral events in tests, without a capture file."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

from stream_doctor.accumulate.accumulator import Accumulator
from stream_doctor.accumulate.stream import AccumulatedStream, CaptureInfo
from stream_doctor.capture.base import Pos
from stream_doctor.events import Event
from stream_doctor.protocol import ProtocolFacts
from stream_doctor.providers import anthropic


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
