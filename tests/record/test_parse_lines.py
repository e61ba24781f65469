"""The body parser cuts lines two ways: a body without CR in one call at its newlines, one with CR a line end at a
time. Both must give the same events, whatever the line ends and however the bytes arrive."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from stream_doctor.record.parse import BodyParser, Event

#: SSE lines as a provider (or a proxy between) sends them: fields, comments, a name not UTF-8, blank lines.
_LINES = st.sampled_from(
    [b'data: {"a":1}', b"data:x", b"data", b"event: e", b"event:\xc3", b": ping", b"id: 3", b"", b"", b"zz", b" "]
)


def _events(kind: str, body: bytes, cuts: list[int], max_event: int = 1000) -> tuple[list[Event], bytes, int]:
    parser = BodyParser(kind, None, max_event=max_event)
    events: list[Event] = []
    at = 0
    for cut in [*sorted(c for c in cuts if c <= len(body)), len(body)]:
        for batch in parser.feed(body[at:cut]):
            events += batch
        at = cut
    found, leftover, dropped = parser.close()
    return events + found, leftover, dropped


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_LINES, max_size=30),
    st.lists(st.integers(0, 300), max_size=6),
    st.sampled_from([b"\n", b"\r\n", b"\r"]),
    st.sampled_from(["text/event-stream", "application/x-ndjson"]),
)
def test_the_same_events_whatever_the_line_ends_and_the_reads(
    lines: list[bytes], cuts: list[int], line_end: bytes, kind: str
) -> None:
    body = b"\n".join(lines) + b"\n"
    events = _events(kind, body, [])
    assert _events(kind, body, cuts) == events
    crossed, left, dropped = _events(kind, body.replace(b"\n", line_end), cuts)
    # (the bytes of an unfinished event are kept as they came, with their own line ends)
    assert (crossed, left.replace(b"\r\n", b"\n").replace(b"\r", b"\n"), dropped) == events


def test_events_a_comment_and_an_unended_event_over_any_reads() -> None:
    body = b'event: a\ndata: {"x":\ndata: 1}\n\n: keep-alive\n\ndata: [DONE]\n\nevent: cut\ndata: {"y'
    expected = ([("a", b'{"x":\n1}', 0), (None, b"[DONE]", 0)], b'data: {"y', 0)
    for size in range(1, len(body) + 1):
        assert _events("text/event-stream", body, list(range(size, len(body), size))) == expected
    lines = b'{"a":1}\n\n  \n{"b":2}'  # JSON lines: blank ones skipped, the last one read at the end
    assert _events("application/x-ndjson", lines, [3, 9]) == ([(None, b'{"a":1}', 0), (None, b'{"b":2}', 0)], b"", 0)
