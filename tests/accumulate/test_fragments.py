"""A completed call keeps its fragments compactly, reading exactly like the tuples they replace, and
the accumulator lets go of its own lists once a call completes: what a replay keeps per call is
its arguments and a few bytes per fragment, not a string and a position tuple per fragment."""

from __future__ import annotations

import pickle
import tracemalloc
from typing import Iterator

import pytest

from stream_doctor.accumulate.accumulator import Accumulator
from stream_doctor.accumulate.fragments import FragmentPositions, FragmentTexts
from stream_doctor.accumulate.stream import AccumulatedStream, CaptureInfo
from stream_doctor.capture.base import Pos
from stream_doctor.values.events import ArgsDelta, BlockStop, Event, Finish, MessageStart, MessageStop, ToolStart

TEXTS = ('{"a"', "", ": 1", "é\U0001f600", "}")
POSITIONS = (Pos(1, 2, 3), Pos(4, 5, 6), Pos(7, 8, 9), Pos(10, 11, 1 << 40), Pos(12, 13, 14))


@pytest.mark.parametrize(
    ("compact", "plain"),
    [(FragmentTexts.of(TEXTS, "".join(TEXTS)), TEXTS), (FragmentPositions.of(POSITIONS), POSITIONS)],
    ids=["texts", "positions"],
)
def test_compact_fragments_read_like_tuples(compact: FragmentTexts | FragmentPositions, plain: tuple) -> None:  # type: ignore[type-arg]
    assert len(compact) == len(plain) and tuple(compact) == plain and compact == plain
    assert [compact[i] for i in range(-len(plain), len(plain))] == [plain[i] for i in range(-len(plain), len(plain))]
    assert compact[1:4] == plain[1:4] and compact[::-2] == plain[::-2] and compact[9:] == ()
    assert repr(compact) == repr(plain) and hash(compact) == hash(plain)
    assert pickle.loads(pickle.dumps(compact)) == plain
    with pytest.raises(IndexError):
        compact[len(plain)]
    assert all(type(p) is Pos for p in FragmentPositions.of(POSITIONS))


def calls(count: int, fragments: int) -> Iterator[Event]:
    number = 0

    def pos() -> Pos:
        nonlocal number
        number += 1
        return Pos(number, number * 2, number * 100)

    yield MessageStart(pos(), "msg_1", "model")
    for index in range(count):
        yield ToolStart(pos(), index, index, "tool_use", f"toolu_{index}", "write_file", {})
        yield ArgsDelta(pos(), index, '{"text": "', "input_json_delta")
        for _ in range(fragments):
            yield ArgsDelta(pos(), index, "x" * 10, "input_json_delta")
        yield ArgsDelta(pos(), index, '"}', "input_json_delta")
        yield BlockStop(pos(), index)
    yield Finish(pos(), "tool_use", "tool_calls")
    yield MessageStop(pos())


def kept(count: int, fragments: int) -> tuple[int, int, AccumulatedStream]:
    """Bytes still held once the stream is built, and the peak while building it."""
    info = CaptureInfo("capture.sse", "sse", None, "anthropic", False, 0, 0, None, None)
    tracemalloc.start()
    try:
        accumulator = Accumulator()
        accumulator.feed_all(calls(count, fragments))
        stream = accumulator.result(info, True, (), {})
        del accumulator
        held, top = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return held, top, stream


def test_a_completed_call_keeps_a_few_bytes_per_fragment() -> None:
    held, top, stream = kept(2_000, 50)
    assert len(stream.calls) == 2_000
    call = stream.calls[-1]
    assert call.fragment_count == 52 and "".join(call.fragment_texts) == call.raw_arguments
    assert call.fragment_positions[1] == Pos(
        call.started.number + 2, 2 * (call.started.number + 2), 100 * (call.started.number + 2)
    )
    arguments = sum(len(c.raw_arguments) for c in stream.calls)
    per_call = (held - 2 * arguments) / 2_000  # the raw text and the parsed value's string, then the rest
    # 52 fragments kept as strings and Pos tuples cost ~12 KB a call; compactly 32 bytes each (~1.7 KB),
    # with the call's own records ~3.7 KB
    assert per_call < 5_000, per_call
    # The peak is the kept calls plus the one being read: no list of every call's fragments.
    assert top < held * 1.3, (top, held)
