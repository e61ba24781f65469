"""A replay's state goes when the replay does: nothing is left for the cyclic collector.

A process that replays capture after capture (a library user, the pytest plugin, a ``scan`` worker)
otherwise holds every replay's calls and blocks until a full collection, which then costs more than
the replays' own reading (``util/gcpause.py`` runs one every few replays).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.sessions import PROVIDERS, session
from stream_doctor import replay
from stream_doctor.accumulate.accumulator import Accumulator
from stream_doctor.accumulate.stream import CaptureInfo
from stream_doctor.capture.base import Pos
from stream_doctor.values.events import ArgsDelta, BlockStop, MessageStart, MessageStop, ToolStart


@pytest.fixture
def collector_paused() -> Iterator[None]:
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_session_replayed_and_dropped_leaves_no_cycle(provider: str, tmp_path: Path, collector_paused: None) -> None:
    capture = tmp_path / "session.jsonl"
    capture.write_bytes(session(provider, 12, broken=5))
    replay(capture)  # what the first replay imports (its modules' own cycles) is not the replay's
    gc.collect()
    report = replay(capture)
    assert len(report.turns) == 12 and sum(len(turn.stream.calls) for turn in report.turns) == 12
    assert [f.code for f in report.findings if f.severity.name == "ERROR"] == ["SD102"]
    del report
    assert gc.collect() == 0  # before: each call and its block, with what they held (15 objects a turn)


def test_an_accumulator_gives_its_result_once() -> None:
    """Its blocks let go of their calls as it gives the result: a second one would lose them."""
    accumulator = Accumulator()
    at = iter(range(1, 100))

    def pos() -> Pos:
        number = next(at)
        return Pos(number, number, 0)

    accumulator.feed_all(
        [
            MessageStart(pos(), "msg_1", "m"),
            ToolStart(pos(), 0, 0, "tool_use", "toolu_1", "write_file", {}),
            ArgsDelta(pos(), 0, '{"path": "a"}', "input_json_delta"),
            BlockStop(pos(), 0),
            MessageStop(pos()),
        ]
    )
    info = CaptureInfo("capture.sse", "sse", None, "anthropic", False, 0, 0, None, None)
    stream = accumulator.result(info, True, (), {})
    assert stream.messages[0].calls == (0,) and stream.calls[0].raw_arguments == '{"path": "a"}'
    with pytest.raises(RuntimeError, match="gives its result once"):
        accumulator.result(info, True, (), {})
