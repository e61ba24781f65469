"""``translate(frames, release=True)``, the replay's hot path, may batch a call's fragments into one
``ArgsRun``: the run must stand for exactly the ArgsDelta events ``translate`` gives one by one,
and the accumulated stream must be the same either way."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from stream_doctor.accumulate.accumulator import Accumulator
from stream_doctor.accumulate.stream import CaptureInfo
from stream_doctor.capture import load
from stream_doctor.conversation.build import split
from stream_doctor.engine.stages import adapter_for
from stream_doctor.providers import anthropic
from stream_doctor.values.events import ArgsRun, Event
from stream_doctor.values.options import Options
from tests.conftest import FIXTURES
from tests.providers.test_frame_by_frame import CAPTURES


def _expanded(events: list[Event]) -> list[Event]:
    return [delta for event in events for delta in (event.deltas() if type(event) is ArgsRun else [event])]


@pytest.mark.parametrize("path", CAPTURES, ids=[str(Path(p).relative_to(FIXTURES)) for p in CAPTURES])
def test_batched_fragments_stand_for_the_same_events(path: str) -> None:
    capture = load(path)
    adapter = adapter_for(capture, Options(), next((s.frames for s in split(capture) if s.has_events), None))
    one_by_one = adapter.translator()
    events = list(one_by_one.translate(capture.frames)) + one_by_one.close()
    batching = adapter.translator()
    batched = list(batching.translate(load(path).frames, release=True)) + batching.close()
    assert not any(type(e) is ArgsRun for e in events)
    assert _expanded(batched) == events
    assert batching.counts == one_by_one.counts
    assert all(e.positions and len(e.pos_list()) == len(e.fragments) for e in batched if type(e) is ArgsRun)

    def accumulated(fed: list[Event]) -> object:
        accumulator = Accumulator(adapter.protocol.positional_indices)
        accumulator.feed_all(fed)
        info = CaptureInfo(path, capture.container, None, adapter.name, False, 0, 0, None, None)
        return accumulator.result(info, True, (), {})

    assert accumulated(batched) == accumulated(events)


def test_a_call_of_many_fragments_is_one_run() -> None:
    """The dominant case: thousands of fragments of one call cost one event, not one each."""
    fragments = [f'"{n}", ' for n in range(3000)]
    lines = [
        {"type": "message_start", "message": {"id": "msg_1", "model": "m", "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "n"}},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": f}}
            for f in fragments
        ),
        {"type": "content_block_stop", "index": 0},
    ]
    data = b"".join(b"event: " + v["type"].encode() + b"\ndata: " + orjson.dumps(v) + b"\n\n" for v in lines)
    capture = load("many.sse", data=data)
    events = list(anthropic.translator().translate(capture.frames, release=True))
    (run,) = [e for e in events if type(e) is ArgsRun]
    assert len(events) == 4 and run.fragments == fragments
    assert [p.number for p in run.pos_list()] == list(range(3, 3 + len(fragments)))
