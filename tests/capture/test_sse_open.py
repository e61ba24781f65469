"""Comment and unknown-field runs inside an SSE event, read a piece at a time (issue 31: ``event: ping`` and
100 MiB of comments took 2.8 GB, and 32 MiB of ``f: x`` lines 787 MB): generated framings (runs of comments
and unknown fields, some not UTF-8, before, between and after the fields and at the capture's end,
blank-line runs, ids; LF, CRLF, CR and mixed line ends), cut into pieces at random sizes, read the same as whole, dispatch what
httpx-sse (the reference parser) dispatches, and put each event where the generator wrote it."""

from __future__ import annotations

import os
from dataclasses import astuple
from typing import Any
from unittest.mock import patch

import httpx
import orjson
import pytest
from httpx_sse import EventSource

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from stream_doctor.capture import _sse_open  # noqa: E402
from stream_doctor.capture.base import Capture  # noqa: E402
from stream_doctor.capture.chunks import pieces, sse_cut  # noqa: E402
from stream_doctor.capture.sse import read_sse, stream_sse  # noqa: E402

#: hypothesis: 150 generated streams per test, read in pieces, whole and by httpx-sse (3.6 s of CPU)
pytestmark = [pytest.mark.slow]

EXAMPLES = int(os.environ.get("STREAM_DOCTOR_DIFF_EXAMPLES", "150"))
GENERATED = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=EXAMPLES <= 150,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: A line of an event: (kind, text); runs of comments and unknown fields (more names than are reported one
#: by one, some not UTF-8, some starting like a JSON body) may come before, between and after its fields.
ignored = [b":", b": keep-alive", b":\xe2\x82\xac", b":\xff", b"f: x", b"f", b"\xff: x", b"{x", b" data: 1"]
comments = st.lists(st.sampled_from(ignored + [b"g%d: y" % n for n in range(14)]), max_size=60)
fields = st.lists(
    st.one_of(
        st.builds(lambda n: ("data", b"data: t%d" % n), st.integers(0, 99)),
        st.builds(lambda n: ("event", b"event: e%d" % n), st.integers(0, 9)),
        st.builds(lambda n: ("id", b"id: %d" % n), st.integers(0, 9)),
        st.just(("unknown", b"f: x")),
        st.just(("retry", b"retry: 10")),
    ),
    max_size=5,
)
event = st.tuples(comments, fields, st.lists(comments, min_size=6, max_size=6), comments, st.integers(1, 4))
framing = st.tuples(
    st.lists(event, min_size=1, max_size=6),
    st.sampled_from(["\n", "\r\n", "\r", "mixed"]),
    st.booleans(),  # the last event ended (a blank line) or the capture stops inside it
    st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=16, max_size=16),
)


def _written(drawn: Any) -> tuple[bytes, list[tuple[int, int]]]:
    """The capture's bytes and, for each event with a data line, its first field line's line and offset."""
    events, kind, ended, mixed = drawn
    out = bytearray()
    line_number = 1
    places: list[tuple[int, int]] = []
    turn = 0
    previous = b""

    def put(text: bytes) -> None:
        nonlocal line_number, turn, previous
        end = (mixed[turn % len(mixed)] if kind == "mixed" else kind).encode()
        turn += 1
        if previous == b"\r" and not text:
            end = b"\r"  # an LF after a lone CR would make the two one line end, not a blank line
        out.extend(text + end)
        line_number += 1
        previous = end

    for number, (before, lines, between, after, blanks) in enumerate(events):
        last = number == len(events) - 1
        place = None
        for text in before:
            if place is None and text[:1] != b":":  # an event starts at its first line that is not a comment
                place = (line_number, len(out))
            put(text)
        if any(name == "data" for name, _ in lines):
            places.append(place or (line_number, len(out)))
        else:  # no event: an id would set httpx-sse's last id, which no frame here carries
            lines = [(name, text) for name, text in lines if name != "id"]
        for place, (_, text) in enumerate(lines):
            put(text)
            for comment in between[place]:
                put(comment)
        for text in after:
            put(text)
        for _ in range(blanks if ended or not last else 0):
            put(b"")
    return bytes(out), places


def _read_in(data: bytes, size: int) -> Capture:
    capture = Capture("g", "sse", len(data), [])
    chunks = iter([data[i : i + size] for i in range(0, len(data), size)])
    for batch in stream_sse(pieces(chunks, sse_cut), capture):
        capture.frames += batch
    return capture


def _summary(capture: Capture) -> tuple[Any, ...]:
    frames = [(f.pos, f.data, f.event, f.sse_id, f.error) for f in capture.frames]
    return frames, [astuple(p) for p in capture.problems], capture.comments, capture.ended_cleanly


@GENERATED
@given(drawn=framing, size=st.integers(1, 300))
def test_comment_runs_inside_events_read_in_pieces_as_whole_and_as_httpx_sse(drawn: Any, size: int) -> None:
    data, places = _written(drawn)
    whole = read_sse(data, "g")
    streamed = _read_in(data, size)
    assert _summary(streamed) == _summary(whole)
    # where the generator put each event with data (a cut last one too)
    assert [(f.pos.line, f.pos.offset) for f in whole.frames] == places
    frames = whole.frames
    cut = [p.pos for p in whole.problems if p.kind == "unterminated-event"]
    if not whole.ended_cleanly and frames and cut[-1:] == [frames[-1].pos]:
        frames = frames[:-1]  # dispatched (and reported) here; httpx-sse drops a cut event
    ours = []
    last_id = ""
    for frame in frames:  # httpx-sse's id is the last one set before the event, not the block's own
        last_id = frame.sse_id if frame.sse_id is not None else last_id
        ours.append((frame.event or "message", frame.data.decode(), last_id))
    assert ours == [event for event in _httpx_sse(data) if event[1]]  # empty: a block of an id alone


def _httpx_sse(data: bytes) -> list[tuple[str, str, str]]:
    response = httpx.Response(200, headers={"content-type": "text/event-stream; charset=utf-8"}, content=data)
    return [(event.event, event.data, event.id) for event in EventSource(response).iter_sse()]


# ---------------------------------------------------------------------------------------------------- JSON bodies

#: JSON values a body written without data: prefixes may hold (google-genai joins its lines until braces balance).
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-999, 999) | st.text('ab"\\\u00e9\u20ac', max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text("ab", max_size=3), inner, max_size=3),
    max_leaves=8,
)
#: A line that may come into such a body: JSON text (a stray closing bracket), or what ends the candidate (a comment,
#: an unknown field, an SSE field, a line that is not JSON text, bytes that are not UTF-8).
intruders = [b"]", b"  1,", b":", b": keep-alive", b"f: x", b"{x", b'"\xff"', b"data: t", b"event: e", b"id: 7", b"g"]
body_block = st.tuples(
    st.dictionaries(st.text("ab", max_size=3), json_values, min_size=1, max_size=4),
    st.lists(st.tuples(st.integers(0, 40), st.sampled_from(intruders)), max_size=2),
    st.integers(1, 2),  # blank lines after it
)
bodies = st.tuples(
    st.lists(st.one_of(body_block, st.just(None)), min_size=1, max_size=5),  # None: an ordinary event
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.booleans(),  # the capture ends with blank lines, or inside its last block
    st.sampled_from([None, 24, 60, 200]),  # JSON_BODY_MAX, or a small one a generated body can pass
)


def _body_capture(drawn: Any) -> tuple[bytes, list[list[tuple[bytes, int, int]]]]:
    """The capture's bytes and, for each block, its lines with their line numbers and offsets."""
    blocks, end, ended, _ = drawn
    out = bytearray()
    written: list[list[tuple[bytes, int, int]]] = []
    line = 1
    for number, block in enumerate(blocks):
        if block is None:
            lines, blanks = [b"event: e", b'data: {"n": %d}' % number], 1
        else:
            value, inserted, blanks = block
            lines = orjson.dumps(value, option=orjson.OPT_INDENT_2).split(b"\n")
            for at, text in inserted:
                lines.insert(min(at, len(lines)), text)
        written.append([])
        for text in lines:
            written[-1].append((text, line, len(out)))
            out += text + end.encode()
            line += 1
        last = number == len(blocks) - 1
        for _ in range(blanks if ended or not last else 0):
            out += end.encode()
            line += 1
    return bytes(out), written


def _expected(written: list[list[tuple[bytes, int, int]]], cap: int) -> tuple[list[tuple[int, int]], list[Any]]:
    """Where the unknown fields are told (each name where first met, then the summary's first line past them),
    and the bodies read as one frame: a block of unknown fields alone (after any comments it starts with), no
    comment among them, under ``cap``
    (each line and a byte for its end), whose lines joined by LF are one JSON object."""
    told: list[tuple[int, int]] = []
    names: set[bytes] = set()
    first_more = None
    bodies: list[Any] = []
    for lines in written:
        # comments before its first line are no part of a body (google-genai yields each line whose braces
        # balance, a comment alone, and joins the lines from "{" on): the candidate starts after them
        start = next((at for at, (text, _, _) in enumerate(lines) if text[:1] != b":"), len(lines))
        texts = [text for text, _, _ in lines[start:]]
        fields = [text.partition(b":")[0] for text in texts if text[:1] != b":"]
        plain = texts and len(fields) == len(texts) and not set(fields) & {b"data", b"event", b"id", b"retry"}
        if plain and sum(len(text) + 1 for text in texts) <= cap and texts[0][:1] == b"{":
            try:
                value = orjson.loads(b"\n".join(texts))
            except orjson.JSONDecodeError:
                value = None
            if isinstance(value, dict):
                bodies.append((value, lines[start][1], lines[start][2]))
                continue
        for text, line, offset in lines:
            name = text.partition(b":")[0]
            if text[:1] == b":" or name in (b"data", b"event", b"id", b"retry") or name in names:
                continue
            if len(names) < 10:
                names.add(name)
                told.append((line, offset))
            elif first_more is None:
                first_more = (line, offset)
    return told + ([first_more] if first_more else []), bodies


@GENERATED
@given(drawn=bodies, size=st.integers(1, 300))
def test_a_block_that_may_be_an_unprefixed_json_body_is_held_only_while_it_can_be(drawn: Any, size: int) -> None:
    # issue 31: "{" and 32 MiB of "f: x" lines were all held as a possible JSON body (2.75 GB). The candidate
    # ends at its first line that cannot be JSON text, a comment or its size cap; its lines are then told
    # in order where they are, in pieces as whole; a real body spanning many lines is still one frame.
    data, written = _body_capture(drawn)
    cap = drawn[3] or _sse_open.JSON_BODY_MAX
    with patch.object(_sse_open, "JSON_BODY_MAX", cap):
        whole = read_sse(data, "g")
        streamed = _read_in(data, size)
    assert _summary(streamed) == _summary(whole)
    told, bodies = _expected(written, cap)
    unknown = [(p.pos.line, p.pos.offset) for p in whole.problems if p.kind == "unknown-sse-field" and p.pos]
    assert unknown == told
    unprefixed = {p.pos for p in whole.problems if p.kind == "unprefixed-json"}
    assert [(f.value, f.pos.line, f.pos.offset) for f in whole.frames if f.pos in unprefixed] == bodies
    frames = [f for f in whole.frames if f.pos not in unprefixed]
    cut = [p.pos for p in whole.problems if p.kind == "unterminated-event"]
    if not whole.ended_cleanly and frames and cut[-1:] == [frames[-1].pos]:
        frames = frames[:-1]  # dispatched (and reported) here; httpx-sse drops a cut event
    ours = [(f.event or "message", f.data.decode()) for f in frames]  # ids: the test above
    assert ours == [event[:2] for event in _httpx_sse(data) if event[1]]
