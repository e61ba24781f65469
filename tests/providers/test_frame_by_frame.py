"""``feed`` (one frame at a time, as --timeline replays) gives exactly what ``translate`` gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_doctor.capture import load
from stream_doctor.conversation.build import split
from stream_doctor.engine.stages import adapter_for
from stream_doctor.values.options import Options
from tests.conftest import FIXTURES, fixture_files

CAPTURES = sorted(str(p) for p in fixture_files())


@pytest.mark.parametrize("path", CAPTURES, ids=[str(Path(p).relative_to(FIXTURES)) for p in CAPTURES])
def test_feed_and_translate_agree(path: str) -> None:
    capture = load(path)
    adapter = adapter_for(capture, Options(), next((s.frames for s in split(capture) if s.has_events), None))
    if not hasattr(adapter.translator(), "translate"):
        pytest.skip(f"{adapter.name} has no translate()")
    at_once = adapter.translator()
    whole = list(at_once.translate(capture.frames))
    one_by_one = adapter.translator()
    pieces = [event for frame in capture.frames for event in one_by_one.feed(frame)]
    assert [(type(e).__name__, e.pos) for e in pieces] == [(type(e).__name__, e.pos) for e in whole]
    assert pieces == whole
    assert at_once.counts == one_by_one.counts
