"""The accumulator's memory is bounded by the calls it keeps, not by the length of the capture.

Events are fed from a generator, as the engine feeds them from the translator, and tracemalloc
measures the peak while feeding and building the stream. Content that is not a call (text,
thinking) is counted, never kept; a call keeps its fragments once (no growing buffer re-joined).
"""

from __future__ import annotations

import tracemalloc
from typing import Iterator

from stream_doctor.accumulate.accumulator import Accumulator
from stream_doctor.accumulate.stream import AccumulatedStream, CaptureInfo
from stream_doctor.capture.base import Pos
from stream_doctor.values.events import (
    ArgsDelta,
    BlockDelta,
    BlockStart,
    BlockStop,
    Event,
    Finish,
    MessageStart,
    MessageStop,
    ToolStart,
)

FRAGMENT = "abcdefghij"


def capture(text_deltas: int, call_fragments: int) -> Iterator[Event]:
    """A turn with ``text_deltas`` text deltas, then one call of ``call_fragments`` 10-character fragments."""
    number = 0

    def pos() -> Pos:
        nonlocal number
        number += 1
        return Pos(number, number, number * 80)

    yield MessageStart(pos(), "msg_1", "model")
    yield BlockStart(pos(), 0, 0, "text")
    for _ in range(text_deltas):
        yield BlockDelta(pos(), 0, "text_delta", 40)
    yield BlockStop(pos(), 0)
    yield ToolStart(pos(), 1, 1, "tool_use", "toolu_A", "write_file", {})
    yield ArgsDelta(pos(), 1, '{"content": "', "input_json_delta")
    for _ in range(call_fragments):
        yield ArgsDelta(pos(), 1, FRAGMENT, "input_json_delta")
    yield ArgsDelta(pos(), 1, '"}', "input_json_delta")
    yield BlockStop(pos(), 1)
    yield Finish(pos(), "tool_use", "tool_calls")
    yield MessageStop(pos())


def peak(text_deltas: int, call_fragments: int) -> tuple[int, AccumulatedStream]:
    """Peak bytes allocated while accumulating the capture, and the stream."""
    info = CaptureInfo("capture.sse", "sse", None, "anthropic", False, 0, 0, None, None)
    tracemalloc.start()
    try:
        accumulator = Accumulator()
        accumulator.feed_all(capture(text_deltas, call_fragments))
        stream = accumulator.result(info, True, (), {})
        _, top = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return top, stream


def test_linear_memory() -> None:
    # One call of 50,000 characters; the capture around it grows 50-fold.
    small, stream = peak(2_000, 5_000)
    large, _ = peak(100_000, 5_000)
    (call,) = stream.calls
    assert len(call.arguments["content"]) == 50_000 and call.fragment_count == 5_002
    call_size = sum(map(len, call.fragment_texts))
    # Bounded by the call, not the file: 50 times more events cost (almost) nothing more ...
    assert large < small * 1.2, (small, large)
    # ... and the whole peak is a small multiple of what the call itself keeps (its fragments,
    # their positions, the joined text and the parsed value).
    assert small < 60 * call_size, (small, call_size)
    # A call twice as long costs about twice as much: linear, never a re-joined growing buffer.
    double, _ = peak(2_000, 10_000)
    assert double < small * 2.4, (small, double)
