"""What a capture holds to serve: its conversations, and for each turn the recorded request and response.

A capture's turns are grouped into conversations by the rule ``stream-doctor record`` groups requests by
(``record.echo.continues``): a turn whose request sends back an earlier answer (one of its calls by id, a
result for one, Responses' ``previous_response_id``, or its history followed by the assistant message)
continues that answer's conversation, any other starts one. A turn with no request recorded goes on with
the latest conversation: nothing says it starts another, so a bare stream or a capture that keeps no
requests is one conversation, as recorded. Each conversation is a ``Script``; a capture of two agents'
exchanges interleaved (a HAR file of both at once) is two.

Every container stream-doctor reads is read by ``capture.load(..., bodies=True)``: a HAR file's, a
cassette's or a recording's response bodies are the bytes their client received (codings undone, the
coding kept to apply again), a bare stream is its own body, and an envelope's events are written back
on the provider's wire (SSE, or JSON lines for Ollama). A capture that cannot be served is a
``ServeError``: one line, said by the CLI with exit code 2.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from stream_doctor.capture.base import Body, Capture, CaptureError, Frame
from stream_doctor.conversation.build import Section, split
from stream_doctor.record.echo import Reading, carried, continues, history_text, reading_for
from stream_doctor.record.writer import HOP_BY_HOP
from stream_doctor.serve.endpoints import SERVED
from stream_doctor.serve.wire import CONVERSATION_HEADER, TURN_HEADER, Header, Recorded
from stream_doctor.util.credentials import REDACTED, is_secret_header

if TYPE_CHECKING:
    from stream_doctor.providers.base import Adapter

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
_NOT_SENT = HOP_BY_HOP | {
    "content-type",
    "content-encoding",
    "content-length",
    "date",
    "server",
    TURN_HEADER,
    CONVERSATION_HEADER,
}

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
    """One conversation of a capture, as the server plays it: the ``conversation``-th of the capture's
    ``conversations`` (in the order each began)."""

    path: str
    provider: str
    turns: tuple[Turn, ...]
    conversation: int = 1
    conversations: int = 1

    @property
    def name(self) -> str:
        """The capture's path, and which of its conversations when it holds several: how reports name it."""
        if self.conversations == 1:
            return self.path
        return f"{self.path} (conversation {self.conversation} of {self.conversations})"


def load_script(path: str) -> Script:
    """The first conversation of the capture at ``path`` (its only one, for most captures)."""
    return load_scripts(path)[0]


def load_scripts(path: str) -> tuple[Script, ...]:
    """The conversations of the capture at ``path``, in the order each began; ``ServeError`` when it cannot be served."""
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
    groups = conversations_of(sections, adapter) if len(sections) > 1 else [sections]
    count = len(groups)
    return tuple(
        Script(
            path,
            provider,
            tuple(
                _turn(number, capture, section, bodies, provider, _named(path, conversation, count))
                for number, section in enumerate(group, 1)
            ),
            conversation,
            count,
        )
        for conversation, group in enumerate(groups, 1)
    )


#: The most recent conversations whose latest request's reading a request may repeat (read from there, not whole).
_READINGS = 16


@dataclass(eq=False)
class _Open:
    """A conversation of the capture as the grouping reads it: its turns so far, its latest request (its history
    and reading), the call and message ids its latest answer carried, and when it was last continued."""

    sections: list[Section]
    history: tuple[bytes, ...]
    reading: Reading | None
    ids: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())
    used: int = 0


def conversations_of(sections: list[Section], adapter: Adapter) -> list[list[Section]]:
    """``sections`` grouped into conversations as ``stream-doctor record`` groups requests (``continues``, the
    most recently continued conversation first, as the proxy does); each in the order recorded."""
    grouping = _Grouping(adapter)
    for used, section in enumerate(sections, 1):
        grouping.add(section, used)
    return sorted((o.sections for o in grouping.opened), key=lambda group: group[0].number)


class _Grouping:
    """The conversations so far, indexed by what a request may continue them by (an id of the latest answer, the
    latest request's history by its length and last message), so each request asks ``continues`` of the few it may
    continue, not of every conversation: linear in the capture, however many conversations it holds."""

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self.opened: list[_Open] = []
        self.by_id: dict[str, set[_Open]] = {}
        self.by_history: dict[tuple[int, bytes], set[_Open]] = {}
        self.latest: _Open | None = None
        self.recent: dict[_Open, None] = {}  # every conversation, the most recently continued last

    def add(self, section: Section, used: int) -> None:
        body = _request_body(section)
        if body is None and self.latest is not None:  # no request recorded: nothing says it starts a conversation
            self._moved(self.latest, section, self.latest.history, self.latest.reading, used)
            return
        text = history_text(body)
        reading = reading_for(text, islice(reversed(self.recent), _READINGS))
        echo = reading.read(self.adapter.name, body, text)
        candidates = {
            o for i in (*echo.call_ids, echo.previous_response_id) if i is not None for o in self.by_id.get(i, ())
        }
        for known in range(1, len(echo.history)):
            candidates |= self.by_history.get((known, echo.history[known - 1]), set())
        fitting = [o for o in candidates if continues(echo, o.history, *o.ids)]
        found = max(fitting, key=lambda o: o.used) if fitting else None
        if found is None:
            found = _Open([], (), reading)
            self.opened.append(found)
        self._moved(found, section, echo.history, reading, used)

    def _moved(
        self, found: _Open, section: Section, history: tuple[bytes, ...], reading: Reading | None, used: int
    ) -> None:
        """``found`` continued by ``section``: its indexes moved to its new latest request and answer."""
        for key in (*found.ids[0], *found.ids[1]):
            self.by_id.get(key, set()).discard(found)
        if found.history:
            self.by_history.get((len(found.history), found.history[-1]), set()).discard(found)
        found.sections.append(section)
        found.history, found.reading, found.used = history, reading, used
        found.ids = _carried(section, self.adapter)
        for key in (*found.ids[0], *found.ids[1]):
            self.by_id.setdefault(key, set()).add(found)
        if history:
            self.by_history.setdefault((len(history), history[-1]), set()).add(found)
        self.latest = found
        self.recent.pop(found, None)
        self.recent[found] = None


def _request_body(section: Section) -> dict[str, Any] | None:
    request = section.request
    body = request.value.get("body") if request is not None and isinstance(request.value, dict) else None
    return body if isinstance(body, dict) else None


def _carried(section: Section, adapter: Adapter) -> tuple[frozenset[str], frozenset[str]]:
    """The call ids and message ids of ``section``'s stream: what a request sends back to continue it."""
    calls: set[str] = set()
    messages: set[str] = set()
    carried(adapter.translator().translate(f for f in section.frames if f.kind == "event"), calls, messages)
    return frozenset(calls), frozenset(messages)


def _named(path: str, conversation: int, count: int) -> tuple[Header, ...]:
    """The header naming which conversation of a capture of several answers (none for a capture of one)."""
    if count == 1:
        return ()
    return ((CONVERSATION_HEADER, f"{conversation} of {count} in {quote(os.path.basename(path))}"),)


def _turn(
    number: int,
    capture: Capture,
    section: Section,
    bodies: dict[int | None, Body],
    provider: str,
    named: tuple[Header, ...] = (),
) -> Turn:
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
    headers = (
        *_headers(CONTENT_TYPES.get(container, "application/octet-stream"), recorded, len(data) if as_read else None),
        *named,
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
