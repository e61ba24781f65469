"""The project's fixtures as the server plays them: a ``Recorded`` response cut at the reader's frames, the
bytes each variant's plan writes, and what a real library hands the tool when it reads those bytes."""

from __future__ import annotations

from pathlib import Path

from stream_doctor.capture import load
from stream_doctor.serve.wire import Plan, Recorded

#: the content type each framing is served with
_MEDIA = {
    "sse": "text/event-stream",
    "eventstream": "application/vnd.amazon.eventstream",
    "jsonl": "application/x-ndjson",
}


def recorded_of(path: Path, provider: str) -> Recorded:
    """A bare capture file as one recorded 200 response (see ``recorded_from``)."""
    return recorded_from(path.read_bytes(), str(path), provider)


def recorded_from(data: bytes, name: str, provider: str) -> Recorded:
    """A bare capture's bytes as one recorded 200 response, its events cut where its reader's frames begin
    (with no times: the fixtures record none)."""
    (body,) = load(name, None, data, bodies=True).bodies or [None]
    assert body is not None, f"{name} is no bare stream"
    starts = [0, *(start for start, _ in body.spans[1:])]
    ends = [*starts[1:], len(body.data)]
    events = tuple((None, body.data[a:b]) for a, b in zip(starts, ends, strict=True))
    headers = (("content-type", _MEDIA.get(body.container, "application/octet-stream")),)
    return Recorded(provider, 200, headers, body.data, events)


def written(plan: Plan) -> bytes:
    """The body a plan writes, its reads joined."""
    return b"".join(data for _, data in plan.reads)


def cuts(plan: Plan) -> tuple[int, ...]:
    """Where a plan's reads end, as byte offsets of the body it writes."""
    offsets, at = [], 0
    for _, data in plan.reads:
        at += len(data)
        offsets.append(at)
    return tuple(offsets)
