"""How a recorded response is framed (server-sent events, an AWS event stream, JSON lines), and the plans the
variants build from pieces of it."""

from __future__ import annotations

import random
from typing import Callable, Iterable, Literal

from stream_doctor.serve.wire import Header, Plan, Recorded

Framing = Literal["sse", "eventstream", "lines"]

#: the media types that name a framing; anything else is told by its first bytes
_BY_MEDIA_TYPE: dict[str, Framing] = {
    "text/event-stream": "sse",
    "application/vnd.amazon.eventstream": "eventstream",
    "application/x-ndjson": "lines",
    "application/jsonl": "lines",
}
#: how an event stream's first line can begin (https://html.spec.whatwg.org/#event-stream: a field or a comment)
_SSE_STARTS = (b"data:", b"event:", b"id:", b"retry:", b":", b"data\n", b"data\r")


def header(headers: Iterable[Header], name: str) -> str | None:
    """The first value of the header ``name`` (any case), or None."""
    wanted = name.lower()
    return next((value for key, value in headers if key.lower() == wanted), None)


def framing(recorded: Recorded) -> Framing:
    """The response's framing: by its content type when that names one, else by its first bytes (an AWS
    event-stream message begins with its 4-byte big-endian length, so with a NUL for any message under
    16 MiB)."""
    media = (header(recorded.headers, "content-type") or "").split(";", 1)[0].strip().lower()
    if media in _BY_MEDIA_TYPE:
        return _BY_MEDIA_TYPE[media]
    head = recorded.body.lstrip(b"\xef\xbb\xbf")[:16]
    if head.startswith(b"\x00"):
        return "eventstream"
    return "sse" if head.lstrip(b"\r\n").startswith(_SSE_STARTS) else "lines"


def plan_of(recorded: Recorded, reads: Iterable[tuple[float, bytes]], then: Literal["end", "close"] = "end") -> Plan:
    """A plan with the response's status and headers and these reads; a ``content-length`` is dropped when
    the reads do not add up to the body (the server then frames the body itself)."""
    reads = tuple(reads)
    headers = recorded.headers
    if sum(len(data) for _, data in reads) != len(recorded.body) or then == "close":
        headers = tuple((k, v) for k, v in headers if k.lower() != "content-length")
    return Plan(recorded.status, headers, reads, then)


def pieces_plan(recorded: Recorded, pieces: Iterable[bytes], then: Literal["end", "close"] = "end") -> Plan:
    """A plan writing ``pieces`` one read each, with no pauses."""
    return plan_of(recorded, ((0.0, piece) for piece in pieces), then)


def ends_line(data: bytes) -> bool:
    """Whether an event's bytes end at a line end: a line of another event may follow."""
    return data.endswith((b"\n", b"\r"))


def ends_event(data: bytes) -> bool:
    """Whether an event's bytes end with its blank line: another event may follow."""
    return data.endswith((b"\n\n", b"\r\r", b"\r\n\r\n"))


def inserted(
    recorded: Recorded, rng: random.Random, extra: bytes, fits: Callable[[bytes], bool], first: int = 0
) -> Plan:
    """``extra`` in a read of its own before half of the events from the ``first`` on (seeded), where the
    event before it ``fits`` (at the start, when ``first`` is 0)."""
    events = [data for _, data in recorded.events]
    places = [at for at in range(max(1, first), len(events)) if fits(events[at - 1])]
    if first == 0 and events:
        places.insert(0, 0)
    chosen = set(rng.sample(places, max(1, len(places) // 2))) if places else set()
    pieces = []
    for at, data in enumerate(events):
        if at in chosen:
            pieces.append(extra)
        pieces.append(data)
    return pieces_plan(recorded, pieces)
