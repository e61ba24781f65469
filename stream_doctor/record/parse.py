"""Cutting a response body into provider events as its bytes arrive, in linear time.

Server-sent events (``text/event-stream``) and JSON lines (``application/x-ndjson``) are cut
incrementally; any other body (a JSON document, an error page) is kept up to a limit and read
whole when it ends. ``gzip`` and ``deflate`` bodies are decoded for reading only: what is
forwarded is never touched.
"""

from __future__ import annotations

import zlib
from typing import Any

import orjson

#: How much of a body that is not a stream is kept to be recorded at its end.
WHOLE_BODY_LIMIT = 16 * 1024 * 1024

Event = tuple[str | None, bytes]  # (the SSE event name, the payload)


class BodyParser:
    """Feed it the body's bytes as they arrive; it returns each complete event once."""

    def __init__(self, content_type: str | None, content_encoding: str | None) -> None:
        kind = (content_type or "").split(";")[0].strip().lower()
        self.kind = "sse" if kind == "text/event-stream" else "lines" if kind in _LINE_TYPES else "whole"
        encoding = (content_encoding or "identity").strip().lower()
        self.decoder: Any = None
        self.problem: str | None = None
        if encoding in ("gzip", "x-gzip"):
            self.decoder = zlib.decompressobj(zlib.MAX_WBITS | 16)
        elif encoding == "deflate":
            self.decoder = zlib.decompressobj()
        elif encoding not in ("identity", ""):
            self.problem = f"the body is {encoding}-encoded, which the recorder cannot decode; events not recorded"
        self.buffer = bytearray()
        self.scanned = 0  # how far ``buffer`` has been searched for a line end
        self.name: str | None = None
        self.data: list[bytes] = []
        self.dropped = 0  # bytes of a whole body beyond the limit

    def feed(self, chunk: bytes) -> list[Event]:
        if self.problem is not None:
            return []
        if self.decoder is not None:
            try:
                chunk = self.decoder.decompress(chunk)
            except zlib.error as error:
                self.problem = f"the body could not be decompressed ({error}); events after this not recorded"
                return []
        if self.kind == "whole":
            room = WHOLE_BODY_LIMIT - len(self.buffer)
            self.buffer += chunk[:room]
            self.dropped += max(0, len(chunk) - room)
            return []
        self.buffer += chunk
        return self._lines(final=False)

    def close(self) -> tuple[list[Event], bytes]:
        """Events the end of the body completes, and what is left over: the bytes of an unfinished event."""
        if self.problem is not None:
            return [], b""
        if self.kind == "whole":
            return self._whole(), b""
        events = self._lines(final=True)
        leftover = bytes(self.buffer)
        if self.kind == "sse" and self.data:  # data lines read but no blank line after them
            joined = b"\n".join(self.data)
            leftover = joined + (b"\n" + leftover if leftover else b"")
        return events, leftover

    def _lines(self, final: bool) -> list[Event]:
        events: list[Event] = []
        buffer = self.buffer
        start = 0
        position = self.scanned
        size = len(buffer)
        resume = size
        while True:
            newline = buffer.find(b"\n", position)
            cr = buffer.find(b"\r", position, newline if newline >= 0 else size)
            if cr >= 0:
                if cr + 1 == size and not final:
                    resume = cr  # a \r at the end: a \n may follow in the next chunk
                    break
                end, after = cr, cr + 2 if cr + 1 < size and buffer[cr + 1] == 10 else cr + 1
            elif newline >= 0:
                end, after = newline, newline + 1
            else:
                break
            self._line(bytes(buffer[start:end]), events)
            start = position = after
        if final and start < size and self.kind == "lines" and buffer[start:].strip():
            self._line(bytes(buffer[start:]), events)
            start = size
        del buffer[:start]
        self.scanned = max(0, resume - start)
        return events

    def _line(self, line: bytes, events: list[Event]) -> None:
        if self.kind == "lines":
            if line.strip():
                events.append((None, line))
            return
        if not line:
            if self.data:
                events.append((self.name, b"\n".join(self.data)))
            self.name, self.data = None, []
            return
        if line.startswith(b":"):
            return  # a comment: keep-alive
        field, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            self.data.append(value)
        elif field == b"event":
            self.name = value.decode("utf-8", "replace")

    def _whole(self) -> list[Event]:
        body = bytes(self.buffer)
        if not body.strip():
            return []
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            return [(None, body)]
        if type(value) is list:  # Gemini without alt=sse: a JSON array of responses
            return [(None, orjson.dumps(item)) for item in value]
        return [(None, body)]


_LINE_TYPES = ("application/x-ndjson", "application/jsonl", "application/json-lines", "application/ndjson")


def event_record(t: float, name: str | None, payload: bytes) -> dict[str, Any]:
    """The ``event`` record of one payload: ``data`` when it is JSON, ``raw`` text otherwise."""
    record: dict[str, Any] = {"sd": "event", "t": t}
    if name is not None:
        record["event"] = name
    try:
        record["data"] = orjson.loads(payload)
    except orjson.JSONDecodeError:
        record["raw"] = payload.decode("utf-8", "replace")
    return record
