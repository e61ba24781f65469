"""A capture cut at any byte (``head -c N capture.sse``) reads as a cut: SD003, never a framing problem.

Every fixture of a line-based container (SSE, JSON Lines, the envelope, prefixed lines) is cut at
offsets hypothesis draws anywhere, not only at line ends. The cut capture must end cleanly exactly
when the cut falls between frames (the EventSource spec dispatches an event only on a blank line,
and a browser discards an unterminated last line), and otherwise say it was cut; what was read
before the cut is what reading the whole file gives, frame for frame and problem for problem; the
piece-by-piece reader agrees with the whole one; and httpx-sse, the reference SSE parser,
dispatches exactly the events that are complete.
"""

from __future__ import annotations

import re
from dataclasses import astuple
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from httpx_sse import EventSource

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from stream_doctor.api import replay  # noqa: E402
from stream_doctor.capture import READERS, load  # noqa: E402
from stream_doctor.capture._text import BOM  # noqa: E402
from stream_doctor.capture.base import Capture, Frame  # noqa: E402
from stream_doctor.capture.chunks import pieces  # noqa: E402
from stream_doctor.engine.pipeline import RunError  # noqa: E402
from tests.conftest import FIXTURES, fixture_files  # noqa: E402

#: hypothesis: every line-based fixture cut at generated places, against httpx-sse
pytestmark = [pytest.mark.slow]

LINE_BASED = ("sse", "jsonl", "envelope", "prefixed")
STREAMING = ("sse", "jsonl", "envelope")
CUTS = settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
_LINE_END = re.compile(rb"\r\n|\r|\n")


def _line_based() -> list[tuple[Path, str]]:
    found = []
    for path in fixture_files(check_tree=True, sidecars=True):
        if path.suffix == ".gz":
            continue
        try:
            capture = load(str(path))
        except Exception:  # noqa: BLE001 - unreadable fixtures are other tests' business
            continue
        if capture.container in LINE_BASED:
            found.append((path, capture.container))
    return found


FIXTURE_FILES = _line_based()
IDS = [str(path.relative_to(FIXTURES)) for path, _ in FIXTURE_FILES]


@cache
def _whole(path: Path, container: str) -> Capture:
    return READERS[container].read(path.read_bytes(), "cut")


def _frame(frame: Frame) -> tuple[Any, ...]:
    return (frame.pos, frame.data, repr(frame.value), frame.error, frame.event, frame.kind, frame.sse_id)


def _between_frames(cut: bytes, container: str) -> bool:
    """Whether ``cut`` ends where a frame may end, worked out from the bytes alone (not the reader)."""
    if container != "sse":
        # a line with its line end, or one the cut left whole; a line of only blanks is no frame
        last = _LINE_END.split(cut)[-1]
        if not last.strip():
            return True
        if container == "prefixed":  # the part's type id, then its JSON
            part = re.match(rb"[0-9a-z]:", last)
            if part is None:
                return False
            last = last[part.end() :]
        try:
            orjson.loads(last)
        except orjson.JSONDecodeError:
            return False
        return True
    if not cut.endswith((b"\n", b"\r")):
        return False  # a browser discards the unterminated last line: the stream stopped inside it
    lines = _LINE_END.split(cut)[:-1]
    since_blank = lines[len(lines) - lines[::-1].index(b"") :] if b"" in lines else lines
    # no line of an open event: comments and unknown fields (which SD005 reports in the whole file too)
    return all(line.partition(b":")[0] not in (b"data", b"event", b"id", b"retry") for line in since_blank)


def _check_cut(path: Path, container: str, size: int) -> Capture:
    data = path.read_bytes()
    cut = data[:size]
    read = READERS[container].read(cut, "cut")
    whole = _whole(path, container)
    cut_problems = [p for p in read.problems if p.kind == "unterminated-event"]
    if _between_frames(cut, container):
        assert read.ended_cleanly and not cut_problems, cut[-60:]
    else:
        assert not read.ended_cleanly, cut[-60:]
        assert len(cut_problems) == 1 and read.problems[-1] is cut_problems[0], read.problems
    # Everything before the cut reads as it does in the whole file: the frames (but the cut one,
    # which holds only part of its data) and the problems (no unknown field made of a cut line).
    frames = read.frames
    if cut_problems and frames and cut_problems[0].pos == frames[-1].pos:
        frames = frames[:-1]
    assert [_frame(f) for f in frames] == [_frame(f) for f in whole.frames[: len(frames)]]
    seen = {(p.kind, p.pos) for p in whole.problems}
    assert [p for p in read.problems if p.kind != "unterminated-event" and (p.kind, p.pos) not in seen] == []
    return read


@pytest.mark.parametrize(("path", "container"), FIXTURE_FILES, ids=IDS)
@CUTS
@given(place=st.floats(0, 1, exclude_max=True), chunk=st.integers(1, 600))
def test_a_cut_anywhere_reads_as_a_cut(path: Path, container: str, place: float, chunk: int) -> None:
    data = path.read_bytes()
    size = 1 + int(place * (len(data) - 1))
    read = _check_cut(path, container, size)
    if container in STREAMING:  # read piece by piece, cut where the engine cuts: the same
        reader = READERS[container]
        chunks = iter([data[:size][i : i + chunk] for i in range(0, size, chunk)])
        streamed = Capture("cut", container, size, [])
        for batch in reader.stream(pieces(chunks, reader.cut), streamed):  # type: ignore[attr-defined]
            streamed.frames += batch
        assert [_frame(f) for f in streamed.frames] == [_frame(f) for f in read.frames]
        assert [astuple(p) for p in streamed.problems] == [astuple(p) for p in read.problems]
        assert streamed.ended_cleanly == read.ended_cleanly


def test_every_line_end_and_every_byte_of_a_small_capture() -> None:
    """Every cut of one fixture per container, not a sample: the property holds at each byte."""
    chosen = {
        "sse": "anthropic/one_call.sse",
        "jsonl": "anthropic/sdk_helper_one_call.jsonl",
        "envelope": "anthropic/empty_input_bug.jsonl",
        "prefixed": "vercel-ai/data_stream_v4_one_call.txt",
    }
    for container, name in chosen.items():
        path = FIXTURES / name
        assert load(str(path)).container == container
        for size in range(1, len(path.read_bytes())):
            _check_cut(path, container, size)


def _sse_events(data: bytes) -> list[tuple[str, str]]:
    """What httpx-sse (the reference parser of httpx clients) dispatches for these bytes."""
    response = httpx.Response(200, headers={"content-type": "text/event-stream; charset=utf-8"}, content=data)
    return [(event.event, event.data) for event in EventSource(response).iter_sse()]


#: the problems of a capture on which httpx-sse and this reader differ on purpose: httpx-sse dispatches a
#: block with no data line, which the spec (and this reader) drops; this reader shows data lines without
#: blank lines between them as a frame each (reported, SD005), and a JSON object written without data:
#: prefixes as one frame (reported, as google-genai reads it), where httpx-sse, as the spec says, ignores
#: each of its lines (test_sse_eventsource.py's EXPECTED_DIFFERENCES quotes the spec on both)
HTTPX_SSE_DIFFERENCES = ("event-without-data", "data-lines-not-separated", "unprefixed-json")


def httpx_sse_difference(capture: Capture) -> str | None:
    """The listed difference (``HTTPX_SSE_DIFFERENCES``) a read SSE capture holds, if any."""
    return next((p.kind for p in capture.problems if p.kind in HTTPX_SSE_DIFFERENCES), None)


SSE_FILES = [
    (path, container)
    for path, container in FIXTURE_FILES
    if container == "sse" and httpx_sse_difference(_whole(path, container)) is None
]


def against_httpx_sse(cut: bytes) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The complete events of ``cut`` as this reader gives them, and as httpx-sse dispatches them."""
    read = READERS["sse"].read(cut, "cut")
    frames = read.frames
    if not read.ended_cleanly and frames and read.problems[-1].pos == frames[-1].pos:
        frames = frames[:-1]  # dispatched (and reported) here; a client discards it
    ours = [(f.event or "message", f.data.decode("utf-8", "replace")) for f in frames]
    return ours, _sse_events(cut)


@pytest.mark.parametrize(("path", "container"), SSE_FILES, ids=[str(p.relative_to(FIXTURES)) for p, _ in SSE_FILES])
@CUTS
@given(place=st.floats(0, 1, exclude_max=True))
def test_the_complete_events_are_those_httpx_sse_dispatches(path: Path, container: str, place: float) -> None:
    data = path.read_bytes().removeprefix(BOM)
    ours, theirs = against_httpx_sse(data[: 1 + int(place * (len(data) - 1))])
    assert ours == theirs


ENGINE_FILES = [(path, container) for path, container in FIXTURE_FILES if container != "envelope"]


@pytest.mark.parametrize(
    ("path", "container"), ENGINE_FILES, ids=[str(p.relative_to(FIXTURES)) for p, _ in ENGINE_FILES]
)
@settings(CUTS, max_examples=6)
@given(place=st.floats(0, 1, exclude_max=True))
def test_a_cut_replay_says_sd003_never_sd005(path: Path, container: str, place: float) -> None:
    data = path.read_bytes()
    size = 1 + int(place * (len(data) - 1))
    cut = data[:size]
    try:
        report = replay(cut, name=path.name)
    except RunError as error:
        # a cut early in the capture may leave too little to tell its format or provider: one line, exit 2
        assert "\n" not in str(error)
        assert re.search(
            "holds no events|could not (tell|recognise)|fits several providers|not a readable JSON", str(error)
        ), error
        return
    whole = replay(data, name=path.name)
    if "SD005" not in whole.codes:
        assert "SD005" not in report.codes
    if not _between_frames(cut, container):
        assert "SD003" in report.codes
