"""The body parser's limits: an oversized event is cut to ``max_event`` and the next event read whole,
however the bytes are split; decoding stops at ``max_decoded``."""

from __future__ import annotations

import gzip

import pytest

from stream_doctor.record.parse import BodyParser


def feed(parser: BodyParser, body: bytes, size: int) -> list[tuple[str | None, bytes, int]]:
    events = []
    for at in range(0, len(body), size):
        for batch in parser.feed(body[at : at + size]):
            events += batch
    events += parser.close()[0]
    return events


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("size", [1, 2, 3, 7, 64, 10_000])
def test_an_oversized_event_is_cut_and_the_next_one_read_whole(newline: bytes, size: int) -> None:
    big = b"event: big" + newline + b"data: " + b"x" * 300 + newline + b"data: " + b"y" * 300 + newline + newline
    small = b"event: small" + newline + b'data: {"ok": 1}' + newline + newline
    events = feed(BodyParser("text/event-stream", None, max_event=100), big + small, size)
    assert len(events) == 2
    (name, kept, dropped), after = events
    # at most the limit is kept (the line's ``data: `` counts while it is read), from the event's start
    assert name == "big" and 90 <= len(kept) <= 100 and kept == b"x" * len(kept) and len(kept) + dropped >= 600
    assert after == ("small", b'{"ok": 1}', 0)


def test_an_event_at_the_limit_is_whole() -> None:
    """The near miss: exactly ``max_event`` bytes of data is an ordinary event."""
    body = b"data: " + b"z" * 94 + b"\n\n"
    assert feed(BodyParser("text/event-stream", None, max_event=100), body, 5) == [(None, b"z" * 94, 0)]


@pytest.mark.parametrize("size", [1, 3, 50])
def test_an_oversized_json_line_ends_at_its_line_end(size: int) -> None:
    body = b'{"a": "' + b"q" * 500 + b'"}\n{"b": 2}\n'
    events = feed(BodyParser("application/x-ndjson", None, max_event=64), body, size)
    assert [e[2] > 0 for e in events] == [True, False] and events[1][1] == b'{"b": 2}'


def test_decoding_stops_at_max_decoded() -> None:
    body = gzip.compress(b": ping\n\n" * 1_000_000)  # 8 MB decoded, a few KB sent
    parser = BodyParser("text/event-stream", "gzip", max_decoded=100_000)
    for at in range(0, len(body), 1000):
        list(parser.feed(body[at : at + 1000]))
    assert parser.exhausted and parser.decoded == 100_000
