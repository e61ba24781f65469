"""Cutting a response body into provider events as its bytes arrive, in linear time and bounded memory.

Server-sent events (``text/event-stream``) and JSON lines (``application/x-ndjson``) are cut
incrementally; any other body (a JSON document, an error page) is kept and read whole when it
ends. ``gzip`` and ``deflate`` bodies are decoded for reading only (what is forwarded is never
touched), a bounded piece at a time. Two limits hold whatever the upstream sends: an event (or a
whole body) keeps at most ``max_event`` bytes, the rest of it counted and dropped until the next
event begins; and at most ``max_decoded`` bytes of the body are decoded at all, after which the
parser stops (``exhausted``) and the recorder marks the capture cut.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import orjson

from stream_doctor.util import jsontext

#: How much of one event, or of a body that is not a stream, is kept (``stream-doctor record --max-event``).
MAX_EVENT = 8 * 1024 * 1024
#: How many decoded bytes of one body are read at most (``--max-capture``).
MAX_DECODED = 64 * 1024 * 1024
#: Decompressed output is produced this much at a time: a 3 MB gzip body that expands to 3 GB is
#: read in pieces of this size, never at once.
_PIECE = 64 * 1024

#: (the SSE event name, the payload, how many bytes of the payload were dropped: 0 for a whole event)
Event = tuple[str | None, bytes, int]


class BodyParser:
    """Feed it the body's bytes as they arrive; it returns each complete event once."""

    def __init__(
        self,
        content_type: str | None,
        content_encoding: str | None,
        max_event: int = MAX_EVENT,
        max_decoded: int = MAX_DECODED,
    ) -> None:
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
        self.max_event = max(1, max_event)
        self.max_decoded = max(1, max_decoded)
        self.decoded = 0  # bytes read into the parser (after decoding)
        self.exhausted = False  # ``max_decoded`` reached: nothing more is read
        self.buffer = bytearray()
        self.scanned = 0  # how far ``buffer`` has been searched for a line end
        self.name: str | None = None
        self.data: list[bytes] = []
        self.data_size = 0
        # An event beyond ``max_event``: its kept start, what was dropped, and where its end is looked for.
        self.oversized: bytes | None = None
        self.dropped = 0
        self.at_line_start = True
        self.after_cr = False

    def feed(self, chunk: bytes) -> Iterable[list[Event]]:
        """The events ``chunk`` completes, a batch per decoded piece of at most ``_PIECE`` bytes: a few
        hundred KB of gzip can expand to the whole ``max_decoded``, and its events are never all held."""
        if self.problem is not None or self.exhausted:
            return ()
        if self.decoder is None:  # one batch, and no generator made for it (this runs for every read)
            events: list[Event] = []
            self._take(chunk, events)
            return (events,)
        return self._decoded(chunk)

    def feed_reads(self, reads: Sequence[bytes]) -> tuple[list[Event], list[int]] | None:
        """``reads`` fed as one piece: the events they complete and, for each, the index of the read its last
        byte came in. None (nothing fed) where reading them at once could read them otherwise than ``feed`` a
        read at a time: a coded body, a CR (one at a read's end waits for the next read), an unfinished event
        that could pass ``max_event`` or a body ``max_decoded`` on the way (``feed`` checks both at every read)."""
        if self.decoder is not None or self.problem is not None or self.exhausted or self.kind == "whole":
            return None
        joined = b"".join(reads)
        buffer = self.buffer
        if (
            self.oversized is not None
            or len(buffer) + self.data_size + len(joined) > self.max_event
            or self.decoded + len(joined) > self.max_decoded
            or b"\r" in joined
            or b"\r" in buffer
        ):
            return None
        before = len(buffer)  # an unfinished line: no newline in it, so every event ends in ``joined``
        self.decoded += len(joined)
        buffer += joined
        ends: list[int] = []
        events = self._lines(False, ends)
        places: list[int] = []
        read, read_end = 0, len(reads[0]) if reads else 0
        for end in ends:
            while end - before >= read_end:
                read += 1
                read_end += len(reads[read])
            places.append(read)
        return events, places

    def _decoded(self, chunk: bytes) -> Iterator[list[Event]]:
        pending = chunk
        while pending and not self.exhausted:
            try:
                piece = self.decoder.decompress(pending, _PIECE)
            except zlib.error as error:
                self.problem = f"the body could not be decompressed ({error}); events after this not recorded"
                return
            pending = self.decoder.unconsumed_tail
            events: list[Event] = []
            self._take(piece, events)
            yield events

    def _take(self, piece: bytes, events: list[Event]) -> None:
        room = self.max_decoded - self.decoded
        if len(piece) > room:
            piece = piece[:room]
            self.exhausted = True
        self.decoded += len(piece)
        if self.kind == "whole":
            space = self.max_event - len(self.buffer)
            self.buffer += piece[:space]
            self.dropped += max(0, len(piece) - space)
            return
        while piece:
            if self.oversized is not None:
                end = self._skip(piece)
                if end < 0:
                    self.dropped += len(piece)
                    return
                self.dropped += end
                events.append((self.name, self.oversized, self.dropped))
                self.name, self.oversized, self.dropped = None, None, 0
                piece = piece[end:]
                continue
            self.buffer += piece
            piece = b""
            events.extend(self._lines(final=False))
            if len(self.buffer) + self.data_size > self.max_event:
                self._overflow()

    def _overflow(self) -> None:
        """The unfinished event passed ``max_event``: keep its start, drop the rest until it ends."""
        if self.kind == "sse" and self.buffer.startswith(b"data:"):  # the payload, as a whole event's would be
            del self.buffer[: 6 if self.buffer[5:6] == b" " else 5]
        if self.data:  # the event's data lines, then its unfinished line: one copy at most
            held = bytearray(b"\n".join(self.data))
            if self.buffer:
                held += b"\n"
            held += self.buffer
        else:
            held = self.buffer
        self.dropped = max(0, len(held) - self.max_event)
        del held[self.max_event :]
        self.oversized = bytes(held)
        self.at_line_start = not self.buffer
        self.after_cr = self.buffer.endswith(b"\r")
        if self.after_cr:
            self.at_line_start = True
        self.buffer = bytearray()
        self.scanned = 0
        self.data, self.data_size = [], 0

    def _skip(self, piece: bytes) -> int:
        """Where in ``piece`` the oversized event ends (just after its last line end), or -1. An SSE
        event ends at a blank line, a JSON line at its line end."""
        at = 0
        size = len(piece)
        if self.after_cr:
            self.after_cr = False
            if size and piece[0] == 10:
                at = 1  # the \n of a \r\n split between chunks
        while at < size:
            newline = piece.find(b"\n", at)
            cr = piece.find(b"\r", at, newline if newline >= 0 else size)
            end = cr if cr >= 0 else newline
            if end < 0:
                self.at_line_start = False
                return -1
            after = end + 1
            if piece[end] == 13:
                if after < size and piece[after] == 10:
                    after += 1
                elif after == size:
                    self.after_cr = True
            blank = end == at and self.at_line_start
            if self.kind == "lines" or blank:
                self.at_line_start = True
                return after
            self.at_line_start = True
            at = after
        return -1

    def close(self) -> tuple[list[Event], bytes, int]:
        """Events the end of the body completes, what is left over (the bytes of an unfinished event)
        and how many bytes of that unfinished event were dropped."""
        if self.problem is not None:
            return [], b"", 0
        if self.kind == "whole":
            return self._whole(), b"", 0
        if self.oversized is not None:
            return [], self.oversized, self.dropped
        events = self._lines(final=True)
        leftover = bytes(self.buffer)
        if self.kind == "sse" and self.data:  # data lines read but no blank line after them
            joined = b"\n".join(self.data)
            leftover = joined + (b"\n" + leftover if leftover else b"")
        return events, leftover, 0

    def _lines(self, final: bool, ends: list[int] | None = None) -> list[Event]:
        """The events the buffer's complete lines make (with ``final``, an unended last JSON line too); with
        ``ends`` (a buffer with no CR), where in the buffer each event's last byte was."""
        buffer = self.buffer
        if buffer.find(b"\r", self.scanned) >= 0:
            lines = self._cut_lines(final)
        else:  # no CR (nearly every body): the line ends are the newlines, cut in one call
            end = buffer.rfind(b"\n", self.scanned)
            with memoryview(buffer) as view:
                lines = bytes(view[:end]).split(b"\n") if end >= 0 else []
            del buffer[: end + 1]
            self.scanned = len(buffer)
        if final and self.kind == "lines" and buffer.strip():
            lines.append(bytes(buffer))
            del buffer[:]
            self.scanned = 0
        events: list[Event] = []
        if self.kind == "lines":
            self._json_lines(lines, events, ends)
        else:
            self._fields(lines, events, ends)
        return events

    def _json_lines(self, lines: list[bytes], events: list[Event], ends: list[int] | None) -> None:
        at = -1  # (each line's newline, in the buffer)
        for line in lines:
            at += len(line) + 1
            if line.strip():
                events.append(self._bounded(None, line))
                if ends is not None:
                    ends.append(at)

    def _cut_lines(self, final: bool) -> list[bytes]:
        """The buffer's complete lines, ended by CR, LF or CRLF (a CR at its end waits for a LF, unless ``final``)."""
        lines: list[bytes] = []
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
            lines.append(bytes(buffer[start:end]))
            start = position = after
        del buffer[:start]
        self.scanned = max(0, resume - start)
        return lines

    def _fields(self, lines: list[bytes], events: list[Event], ends: list[int] | None) -> None:
        """SSE lines read in order: a blank line ends the event its ``data`` lines make (the state in locals:
        this runs for every line of every body); ``ends`` as ``_lines``'s."""
        name, data, data_size = self.name, self.data, self.data_size
        at = -1  # (each line's newline, in the buffer)
        for line in lines:
            at += len(line) + 1
            if not line:
                if data:
                    events.append(self._bounded(name, b"\n".join(data)))
                    if ends is not None:
                        ends.append(at)
                name, data, data_size = None, [], 0
            elif line[0] != 58:  # (a line starting with ":" is a comment: keep-alive)
                field, _, value = line.partition(b":")
                if value[:1] == b" ":
                    value = value[1:]
                if field == b"data":
                    data.append(value)
                    data_size += len(value) + 1
                elif field == b"event":
                    name = value.decode("utf-8", "replace")
        self.name, self.data, self.data_size = name, data, data_size

    def _bounded(self, name: str | None, payload: bytes) -> Event:
        """An event that came whole within one chunk is held to ``max_event`` too."""
        if len(payload) <= self.max_event:
            return (name, payload, 0)
        return (name, payload[: self.max_event], len(payload) - self.max_event)

    def _whole(self) -> list[Event]:
        body = bytes(self.buffer)
        if self.dropped:
            return [(None, body, self.dropped)]
        if not body.strip():
            return []
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            return [(None, body, 0)]
        if type(value) is list:  # Gemini without alt=sse: a JSON array of responses
            return [(None, jsontext.dumps(item), 0) for item in value]  # at any depth
        return [(None, body, 0)]


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
