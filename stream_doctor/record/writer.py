"""Writing an envelope as a stream arrives: one JSON line per record, flushed at once.

Shared by the httpx transport and the recording proxy. Lines are written whole under a lock and
flushed right away, so a crash (of the application, the proxy or the upstream) leaves a readable
envelope that ends at the last record received (docs/envelope.md).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from typing import IO, Any, Callable, Iterator

import orjson

from stream_doctor.capture.base import Pos
from stream_doctor.capture.http_frames import redact_body, redact_url
from stream_doctor.util import jsontext
from stream_doctor.util.credentials import REDACTED, is_secret_header

VERSION = 1


#: Called with each record written, its line (without the line end) and its position as the
#: envelope reader gives it (frame number, line, byte offset); the header has frame number 0.
Observer = Callable[[dict[str, Any], bytes, Pos], None]

#: Called, when given, with the event records written at once by ``EnvelopeWriter.events`` (a ``Slice``), in place
#: of ``Observer`` for each: they are made as the slice is read, by whoever reads it.
SliceObserver = Callable[["Slice"], None]

#: The digits kept for a header's ``exchanges`` count, which is rewritten in place as a conversation grows.
_COUNT_WIDTH = 10


class EnvelopeWriter:
    """Appends envelope records to an open binary file; ``t`` counts from ``start`` (``time.monotonic``).

    It counts lines, bytes and frames as it writes, so that ``observe`` sees each record at the
    position a reader of the file will give it (a file reopened to append to: ``at`` the counts so far);
    ``observe_slice``, when given, is handed the records ``events`` writes as one ``Slice`` instead.
    """

    def __init__(
        self,
        file: IO[bytes],
        start: float | None = None,
        observe: Observer | None = None,
        at: tuple[int, int, int] = (0, 0, 0),  # frames, lines and bytes already in the file
        observe_slice: SliceObserver | None = None,
    ) -> None:
        self.file = file
        self.start = time.monotonic() if start is None else start
        self.lock = threading.Lock()
        self.closed = False
        self.observe = observe
        self.observe_slice = observe_slice
        self.frames, self.lines, self.size = at
        self.count_at: int | None = None  # where the header's ``exchanges`` digits are
        self._held: list[bytes] | None = None  # lines not yet written (``held``)

    @contextmanager
    def held(self) -> Iterator[None]:
        """The lines written meanwhile go to the file in one write and one flush at the end (``serve`` records
        an answer already sent a slice of reads at a time: a flush per line cost more than the line)."""
        with self.lock:
            self._held = []
        try:
            yield
        finally:
            with self.lock:
                lines, self._held = self._held, None
                if lines and not self.closed:
                    self.file.write(b"".join(lines))
                    self.file.flush()

    def now(self) -> float:
        return round(time.monotonic() - self.start, 6)

    def write(self, record: dict[str, Any]) -> int:
        """Write one record; returns the bytes written."""
        # the line end written on its own: ``observe`` gets the line as the reader will, and no copy
        # of a line that may hold a whole --max-event payload is made for it
        # jsontext: a body nested deeper than orjson writes (254 levels) is recorded too, never an exception
        return self._line(record, jsontext.dumps(record, orjson.OPT_NON_STR_KEYS))

    def events(self, records: Callable[[], Iterable[dict[str, Any]]], lines: Sequence[bytes]) -> int:
        """Write event records whose lines are already made (``serve.lines``: a plan's lines kept from an earlier
        answer), each as ``write`` would, under one lock; returns the bytes written. ``records`` makes the records
        of those lines, in order, when called: the observer's ``Slice`` calls it as it is read. They are records
        the recorder made, each fitting the format (``capture.envelope.check_record``): a reader of the ``Slice``
        does not check them again."""
        with self.lock:
            if self.closed:
                return 0
            at = (self.frames, self.lines, self.size)
            text = b"\n".join(lines) + b"\n" if lines else b""
            if self._held is not None:
                self._held.append(text)
            else:
                self.file.write(text)
                self.file.flush()
            self.frames += len(lines)
            self.lines += len(lines)
            self.size += len(text)
        written = Slice(records, lines, at)
        if self.observe_slice is not None:
            self.observe_slice(written)
        elif self.observe is not None:
            for record, line, pos in written:
                self.observe(record, line, pos)
        return len(text)

    def _line(self, record: dict[str, Any], line: bytes) -> int:
        with self.lock:
            if self.closed:
                return 0
            if self._held is not None:
                self._held += (line, b"\n")
            else:
                self.file.write(line)
                self.file.write(b"\n")
                self.file.flush()
            frame = 0 if record.get("sd") == "header" else self.frames + 1
            pos = Pos(frame, self.lines + 1, self.size)
            self.frames += frame != 0
            self.lines += 1
            self.size += len(line) + 1
        if self.observe is not None:
            self.observe(record, line, pos)
        return len(line) + 1

    def header(self, provider: str | None, source: str, note: str | None = None, **fields: Any) -> None:
        """The header line. With ``exchanges`` among ``fields``, that count ends the line, padded so
        that ``count`` can rewrite it in place (the line stays valid JSON at every moment)."""
        record: dict[str, Any] = {"sd": "header", "version": VERSION}
        if provider is not None:
            record["provider"] = provider
        record["source"] = source
        if note is not None:
            record["note"] = note
        exchanges = fields.pop("exchanges", None)
        record.update(fields)
        if exchanges is None:
            self.write(record)
            return
        head = orjson.dumps(record)[:-1] + b',"exchanges":'
        self.count_at = self.size + len(head)
        record["exchanges"] = exchanges
        self._line(record, head + f"{exchanges:<{_COUNT_WIDTH}}".encode() + b"}")

    def count(self, exchanges: int) -> None:
        """Rewrite the header's ``exchanges`` count in place (a few bytes inside its line, never its length)."""
        with self.lock:
            if self.closed or self.count_at is None:
                return
            os.pwrite(self.file.fileno(), f"{exchanges:<{_COUNT_WIDTH}}".encode(), self.count_at)

    def execute(self, call_id: str | None, name: str | None, input: Any, t: float | None = None) -> None:
        self.write(
            {"sd": "execute", "t": self.now() if t is None else t, "call_id": call_id, "name": name, "input": input}
        )

    def close(self) -> None:
        with self.lock:
            if not self.closed:
                self.closed = True
                if self._held:  # (a close inside ``held``: what was written is kept)
                    self.file.write(b"".join(self._held))
                    self._held = []
                self.file.close()


class Slice:
    """Event records ``EnvelopeWriter.events`` wrote at once: their ``lines``, their positions from ``at`` (the
    writer's frames, lines and bytes before the first), and ``records``, which makes the records when called.
    Read, it gives each (record, line, position) as ``Observer`` is handed them, the records made by the thread
    that reads it (the live diagnosis'), not queued as values: a record queued a while outlives the cyclic
    collector's young generations, and CPython collects the whole heap each time those promoted pass a quarter
    of it (docs/performance.md, "Serving a capture")."""

    __slots__ = ("records", "lines", "at")

    def __init__(
        self, records: Callable[[], Iterable[dict[str, Any]]], lines: Sequence[bytes], at: tuple[int, int, int]
    ) -> None:
        self.records = records
        self.lines = lines
        self.at = at

    def __len__(self) -> int:
        return len(self.lines)

    def __iter__(self) -> Iterator[tuple[dict[str, Any], bytes, Pos]]:
        frames, number, size = self.at
        for record, line in zip(self.records(), self.lines, strict=True):
            frames += 1
            number += 1
            yield record, line, Pos(frames, number, size)
            size += len(line) + 1


def request_record(
    t: float,
    method: str,
    url: str,
    body: bytes,
    headers: list[tuple[str, str]],
    redact: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The ``request`` record: the body as sent (JSON, or ``raw_body`` text), URL and headers without secrets."""
    record: dict[str, Any] = {"sd": "request", "t": t, "method": method, "url": redact_url(url)}
    try:
        value = orjson.loads(body) if body else {}
    except orjson.JSONDecodeError:
        value = None
    if type(value) is dict:
        record["body"] = redact_body(value)
    elif value is not None:  # JSON, but not an object (an array, a string …): its credential fields masked
        record["body"] = {}
        record["raw_body"] = jsontext.dumps(redact_body(value)).decode()  # any depth (orjson writes 254 levels)
    else:  # not JSON (a form, multipart, cut or invalid JSON): masked as text
        record["body"] = {}
        record["raw_body"] = redact_body(body.decode("utf-8", "replace"))
    record["headers"] = redact_headers(headers, redact)
    return record


#: Hop-by-hop headers (RFC 9110 §7.6.1), and ``host``, which names the connection's server: what a proxy or
#: a server playing a recorded response never passes on (the proxy's and ``serve``'s HTTP stacks set their own).
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
    }
)


def redact_headers(headers: list[tuple[str, str]], redact: frozenset[str] = frozenset()) -> dict[str, str]:
    """Headers by lower-case name, credentials and every header named in ``redact`` replaced by ``[redacted]``."""
    out: dict[str, str] = {}
    for raw_name, value in headers:
        name = raw_name.lower()
        shown = REDACTED if is_secret_header(name, value) or name in redact else value
        out[name] = shown if name not in out else f"{out[name]}, {shown}"
    return out


def provider_of(path: str) -> str | None:
    """The provider a request path belongs to, when the path says so unambiguously (a hint for detection)."""
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "openai"
    if path.endswith("/responses"):
        return "openai-responses"
    if ":streamGenerateContent" in path or ":generateContent" in path:
        return "gemini"
    if path.endswith("/api/chat"):
        return "ollama"
    return None
