"""What a capture holds to serve: its conversation, and for each turn the recorded request and response.

Every container stream-doctor reads is read by ``capture.load(..., bodies=True)``: a HAR file's, a
cassette's or a recording's response bodies are the bytes their client received (codings undone, the
coding kept to apply again), a bare stream is its own body, and an envelope's events are written back
on the provider's wire (SSE, or JSON lines for Ollama). A capture that cannot be served is a
``ServeError``: one line, said by the CLI with exit code 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stream_doctor.capture.base import Body, Capture, CaptureError, Frame
from stream_doctor.conversation.build import Section, split
from stream_doctor.record.writer import HOP_BY_HOP
from stream_doctor.serve.endpoints import SERVED
from stream_doctor.serve.wire import TURN_HEADER, Header, Recorded
from stream_doctor.util.credentials import REDACTED, is_secret_header

#: The Content-Type each body container is served with: the body is written as that container, whatever
#: the recorded headers said (a disagreement is the capture's problem, SD007, not the application's).
CONTENT_TYPES = {
    "sse": "text/event-stream; charset=utf-8",
    "jsonl": "application/x-ndjson",
    "json": "application/json",
    "eventstream": "application/vnd.amazon.eventstream",
    "prefixed": "text/plain; charset=utf-8",
}

#: Recorded response headers never sent again: hop-by-hop ones, and those that describe the body and the
#: connection as the server's own HTTP stack writes them (its type and coding above, its date, its name).
#: ``content-length`` is sent again only with the very bytes it counts (``_headers``).
_NOT_SENT = HOP_BY_HOP | {"content-type", "content-encoding", "content-length", "date", "server", TURN_HEADER}

#: Providers whose envelope can be written back on the wire, and how: as SSE or as JSON lines.
_ENVELOPE_WIRE = {
    "anthropic": "sse",
    "openai": "sse",
    "openai-responses": "sse",
    "gemini": "sse",
    "mistral": "sse",
    "cohere": "sse",
    "vercel-ai": "sse",
    "ollama": "jsonl",
}


class ServeError(Exception):
    """The capture cannot be served; the message is one line."""


@dataclass(frozen=True)
class Turn:
    """One turn of a served conversation: what the application should send, and what it is answered."""

    number: int  # 1-based
    request: dict[str, Any] | None  # method, url, headers, body as recorded; None: the capture has none
    recorded: Recorded


@dataclass(frozen=True)
class Script:
    """One capture's conversation, as the server plays it."""

    path: str
    provider: str
    turns: tuple[Turn, ...]


def load_script(path: str) -> Script:
    """The conversation of the capture at ``path``; ``ServeError`` when it cannot be served."""
    from stream_doctor.capture import load
    from stream_doctor.providers import DetectionError, detect

    try:
        capture = load(path, bodies=True)
    except CaptureError as error:
        raise ServeError(f"{path}: {error.message}") from None
    sections = [s for s in split(capture) if s.has_events]
    if not sections:
        raise ServeError(f"{path}: no streamed response to serve (the capture holds no response events)")
    hint = capture.header.get("provider") if capture.header else None
    try:
        adapter, _ = detect(sections[0].frames, hint if isinstance(hint, str) else None)
    except DetectionError as error:
        raise ServeError(f"{path}: {error}") from None
    provider = adapter.name
    if provider.endswith("-sdk"):
        raise ServeError(f"{path}: an SDK helper's event log ({provider}), not the provider's wire: nothing to serve")
    if provider not in SERVED:
        raise ServeError(f"{path}: a {provider} stream, which no provider endpoint of this server answers")
    bodies = {body.interaction: body for body in capture.bodies or ()}
    turns = tuple(_turn(number, capture, section, bodies, provider) for number, section in enumerate(sections, 1))
    return Script(path, provider, turns)


def _turn(number: int, capture: Capture, section: Section, bodies: dict[int | None, Body], provider: str) -> Turn:
    request = section.request
    value = request.value if request is not None and isinstance(request.value, dict) else None
    exchange = section.exchange
    body = bodies.get(section.interaction if exchange is not None else None)
    if body is not None:
        events = tuple(
            (frame.t, body.data[start:end]) for frame, (start, end) in zip(body.frames, body.spans, strict=True)
        )
        head = body.data[: body.spans[0][0]] if body.spans else body.data
        if head:  # bytes before the first frame (a BOM, a comment) go with it
            events = ((events[0][0], head + events[0][1]), *events[1:]) if events else ((None, head),)
        container, coding = body.container, exchange.coding if exchange is not None else None
        if provider == "bedrock" and container != "eventstream":
            raise ServeError(
                f"{capture.path}: turn {section.number} holds Bedrock's events as {container}, not the AWS event "
                "stream its SDKs read: no response body this server can write"
            )
    else:
        container, events = _rewritten(capture, section, provider, value)
        coding = None
    status = section.status or 200
    data = b"".join(piece for _, piece in events)
    encoding = coding.strip().lower() if coding and coding.strip().lower() in ("gzip", "x-gzip", "deflate") else None
    recorded = exchange.response_headers if exchange is not None else _envelope_headers(value)
    as_read = body is not None and not coding  # the very bytes the client read, not coded again by the server
    headers = _headers(
        CONTENT_TYPES.get(container, "application/octet-stream"), recorded, len(data) if as_read else None
    )
    return Turn(number, value, Recorded(provider, status, headers, data, events, encoding))


def _envelope_headers(request: dict[str, Any] | None) -> dict[str, str]:
    """The response headers our recorder writes beside an envelope's request (``response.headers``)."""
    response = request.get("response") if request is not None else None
    headers = response.get("headers") if isinstance(response, dict) else None
    return (
        {k: v for k, v in headers.items() if isinstance(k, str) and isinstance(v, str)}
        if isinstance(headers, dict)
        else {}
    )


def _headers(content_type: str, recorded: dict[str, str], length: int | None) -> tuple[Header, ...]:
    """What the server sends with a turn's body: its Content-Type, then the recorded headers a client may read
    (request ids, rate limits, retry advice, processing time …) but no hop-by-hop header, no credential (a
    reader masked it ``[redacted]``) and no cookie; ``Content-Length`` only when ``length`` (the body as
    recorded, uncoded) is what it counts."""
    kept: list[Header] = [("Content-Type", content_type)]
    for name, value in recorded.items():
        lowered = name.lower()
        if lowered == "content-length" and length is not None and value.strip() == str(length):
            kept.append((name, value))
        elif lowered not in _NOT_SENT and REDACTED not in value and not is_secret_header(lowered, value):
            kept.append((name, value))
    return tuple(kept)


def _rewritten(
    capture: Capture, section: Section, provider: str, request: dict[str, Any] | None
) -> tuple[str, tuple[tuple[float | None, bytes], ...]]:
    """An envelope's events on the provider's wire, each with its time since the request."""
    from stream_doctor.clients.library import sse_chunks

    wire = _ENVELOPE_WIRE.get(provider)
    if capture.container != "envelope" or wire is None:
        raise ServeError(
            f"{capture.path}: turn {section.number} has no response body this server can write "
            f"({provider} from a {capture.container} capture)"
        )
    frames = [f for f in section.frames if f.kind == "event"]
    began = request.get("t") if request is not None else None
    zero = began if isinstance(began, (int, float)) else 0.0
    times = [None if f.t is None else round(max(0.0, f.t - zero), 6) for f in frames]
    if wire == "jsonl":
        pieces = [_line(frame) for frame in frames]
    else:
        section_capture = Capture(capture.path, "envelope", 0, frames, ended_cleanly=section.ended_cleanly)
        pieces = list(sse_chunks(section_capture, frames, [None]))
    return wire, tuple(zip(times, pieces, strict=True))


def _line(frame: Frame) -> bytes:
    from stream_doctor.capture.base import NOT_JSON
    from stream_doctor.util import jsontext

    payload = frame.data if frame.value is NOT_JSON else jsontext.dumps(frame.value)
    return payload + b"\n"
