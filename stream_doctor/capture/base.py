"""What every capture reader produces: frames that know where in the file they came from."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, NamedTuple, Protocol

from stream_doctor.capture.problem_facts import ProblemFacts


class Pos(NamedTuple):
    """Where a frame starts: its ordinal among frames, its 1-based line and its byte offset."""

    number: int
    line: int
    offset: int


#: A frame's ``value`` when its payload could not be decoded as JSON (see ``Frame.error``).
NOT_JSON: Any = type("NotJson", (), {"__repr__": lambda self: "NOT_JSON"})()

#: A frame's ``value`` after an adapter translated it and let the decoded payload go (see
#: ``providers.base.Translator.translate``); ``data`` still holds the payload as read.
RELEASED: Any = type("Released", (), {"__repr__": lambda self: "RELEASED"})()

FrameKind = str  # "event" | "request" | "execute" | "result"; envelope records other than events


@dataclass(slots=True)
class Frame:
    """One unit read from a capture: an SSE event, a JSONL line, an element of a JSON array.

    ``data`` keeps the payload exactly as read (so ``[DONE]`` and keep-alives survive);
    ``value`` is the decoded JSON, or ``NOT_JSON`` with the reason in ``error``.
    """

    pos: Pos
    data: bytes
    value: Any
    error: str | None = None
    event: str | None = None  # the SSE ``event:`` field, when there was one
    t: float | None = None  # seconds since the stream started, when the capture recorded it
    kind: FrameKind = "event"
    sse_id: str | None = None
    interaction: int | None = None  # HAR/cassette: the 1-based interaction (request/response pair) it belongs to
    #: SSE: (n, of) when the frame is data line n of one event of ``of`` data lines written without the blank
    #: lines between them (SD005), which the reader splits into a frame per line and a client that follows the
    #: SSE rules reads as one event, dispatched at its last line, whose data is the lines joined
    joined: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class InputProblem:
    """Something wrong with the capture itself, reported as a finding by the SD0xx rules."""

    kind: str  # see rules/capture for the kinds and their codes
    message: str
    pos: Pos | None
    interaction: int | None = None  # HAR/cassette: the interaction whose response body it is about
    facts: ProblemFacts | None = None  # what an adapter saw, for the rule that words it


@dataclass(slots=True)
class Exchange:
    """One request/response pair of a HAR file or a VCR cassette (an "interaction").

    An interaction that is an LLM call contributes a ``request`` frame (its ``pos``) followed by the
    frames of its response body; one that is not (a page, a token request) is only counted.
    """

    number: int  # 1-based, among every interaction of the file
    pos: Pos  # where the interaction's request starts in the file (``number`` 0: it is not an event)
    method: str | None
    url: str | None  # with secrets redacted
    status: int | None
    body_container: str | None  # the reader that cut the response body into frames; None: not a stream
    body_size: int = 0
    ended_cleanly: bool = True
    skipped: str | None = None  # why it is not diagnosed (not an LLM call); it then has no frames
    request_places: dict[str, Pos] = field(default_factory=dict)  # JSON path in the request body -> position
    coding: str | None = None  # the response's Content-Encoding as recorded (what ``serve`` applies again)
    #: the response's headers as recorded, by lower-case name, credentials ``[redacted]`` (what ``serve`` sends again)
    response_headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Body:
    """One response body as the HTTP client received it, and where each of its frames lies in it: what a
    real client library is fed when it is replayed on the capture's original bytes.

    ``data`` is the body once the container's storage is undone (a cassette's base64 or ``!binary``, HAR
    base64, nock hex, Polly chunks, gzip and the other content codings, a gzipped capture file): the bytes
    a client's HTTP stack hands to its stream decoder. ``frames`` are the capture's own frames of that body
    (their ``pos`` in the capture file, as findings give it); ``spans[i]`` is where ``frames[i]`` lies in
    ``data``, from its first byte to the next frame's first byte (the last one to the end of the body).
    """

    interaction: int | None  # HAR/cassette: the interaction it answers; None: the capture file is the body
    container: str  # the reader that cut the body into frames (sse, jsonl, json, eventstream, prefixed)
    data: bytes
    frames: tuple[Frame, ...]
    spans: tuple[tuple[int, int], ...]
    ended_cleanly: bool

    @classmethod
    def of(cls, interaction: int | None, container: str, data: bytes, frames: list[Frame], ended_cleanly: bool) -> Body:
        """A body whose ``frames`` still carry their positions in ``data`` (as the inner reader placed them)."""
        starts = [frame.pos.offset for frame in frames]
        spans = tuple(zip(starts, [*starts[1:], len(data)], strict=True))
        return cls(interaction, container, data, tuple(frames), spans, ended_cleanly)


#: The response bodies a ``load(..., bodies=True)`` collects while its reader runs; None: not asked.
KEPT_BODIES: ContextVar[list[Body] | None] = ContextVar("KEPT_BODIES", default=None)

#: The readers a HAR entry's or a cassette interaction's response body can be in (one stream each).
BODY_READERS: tuple[str, ...] = ("sse", "jsonl", "json", "eventstream", "prefixed")


def keep_file_body(capture: Capture, data: bytes) -> None:
    """When ``load`` collects bodies: a bare stream's, the capture file's bytes (gzip undone) being the body."""
    kept = KEPT_BODIES.get()
    if kept is not None and capture.container in BODY_READERS:
        kept.append(Body.of(None, capture.container, data, capture.frames, capture.ended_cleanly))


@dataclass(slots=True)
class Capture:
    """A capture read into frames, with what the reader noticed about the file."""

    path: str  # as the user named it; "<stdin>" for -
    container: str  # registry name of the reader that read it
    size: int
    frames: list[Frame]
    compressed: str | None = None  # "gzip" when the bytes were compressed
    header: dict[str, Any] | None = None  # the envelope's header record
    problems: list[InputProblem] = field(default_factory=list)
    comments: int = 0  # SSE comment lines (keep-alives) skipped
    ended_cleanly: bool = True  # False when the last frame was cut off (no terminating blank line)
    exchanges: list[Exchange] = field(default_factory=list)  # HAR and cassettes: every interaction, in order
    #: each response body as its client received it (``Body``); only when read with ``load(..., bodies=True)``
    bodies: list[Body] | None = None


class CaptureError(Exception):
    """The capture cannot be read at all. The CLI prints ``path:line: message`` and exits 2."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class Reader(Protocol):
    """A container format: how to recognise it and how to cut it into frames."""

    name: str
    title: str

    def sniff(self, head: bytes) -> int:
        """How sure (0-100) this reader is that a capture starting with ``head`` is its format."""
        ...

    def read(self, data: bytes, path: str) -> Capture:
        """Cut the whole capture into frames. Raises CaptureError only when nothing can be read."""
        ...

    def reject_reason(self, head: bytes) -> str:
        """Why ``sniff`` gave ``head`` 0, for the error that lists what each reader saw."""
        ...


#: A piece of a capture (``chunks.pieces``): ``data[start:end]``, and whether it is the last. A piece is
#: handed on in the chunk it was read in, with its bounds, rather than sliced out of it: slicing copied
#: every byte of a file once more (and joining the chunk to the bytes held before it, a second time).
Piece = tuple[bytes, int, int, bool]


class StreamingReader(Reader, Protocol):
    """A reader that can also read a capture piece by piece (SSE, JSON Lines, the envelope, a JSON array), so a replay
    need not hold the file's frames (``capture.streamed``)."""

    def cut(self, data: bytes, start: int, fresh: bool = False) -> int:
        """Where the last place in ``data`` (searching from ``start``) that a frame may end is; 0: none.
        ``fresh``: ``data`` starts where a frame may (``chunks.pieces`` says so when it knows)."""
        ...

    def stream(self, pieces: Iterable[Piece], capture: Capture) -> Iterator[list[Frame]]:
        """The frames of ``pieces`` (each cut at a ``cut``; the last marked), a list per piece;
        what it notices goes to ``capture`` (problems as read, the rest once the last piece is read)."""
        ...


class InteractionsReader(Reader, Protocol):
    """A reader of HTTP exchanges (HAR, cassettes) that can hand them over one at a time, so a replay
    need not hold every turn's frames (``capture.streamed.Interactions``)."""

    def turns(
        self, data: bytes, path: str, capture: Capture
    ) -> Iterator[tuple[Exchange, list[Frame], list[InputProblem]]]:
        """Each interaction as it is read: its exchange, frames and problems (the exchanges and problems
        also go to ``capture``, as ``read`` would give them)."""
        ...
