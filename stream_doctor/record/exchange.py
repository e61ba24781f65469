"""One recorded request/response pair: the request record, then each event as its bytes arrive.

The transport and the proxy call ``chunk`` with every piece of the body right after handing it
on, and ``end`` once, with why the body ended when it did not end normally. What happened is
written into the envelope: a body cut by the upstream or abandoned by the client leaves its
unfinished event as a ``raw`` record marked ``unterminated-event``, so the replay reports the cut
(SD003) instead of a stream that merely looks short.
"""

from __future__ import annotations

from typing import Any

from stream_doctor.record.parse import BodyParser, event_record
from stream_doctor.record.writer import EnvelopeWriter


class RecordedExchange:
    def __init__(self, writer: EnvelopeWriter, content_type: str | None, content_encoding: str | None) -> None:
        self.writer = writer
        self.parser = BodyParser(content_type, content_encoding)
        self.size = 0
        self.events = 0
        self.ended = False

    def chunk(self, data: bytes) -> None:
        self.size += len(data)
        if self.ended:
            return
        events = self.parser.feed(data)
        if events:
            t = self.writer.now()
            for name, payload in events:
                self.writer.write(event_record(t, name, payload))
            self.events += len(events)

    def end(self, cause: str | None = None) -> None:
        """The body is over: normally (``cause`` None), or cut for the reason given."""
        if self.ended:
            return
        self.ended = True
        events, leftover = self.parser.close()
        t = self.writer.now()
        for name, payload in events:
            self.writer.write(event_record(t, name, payload))
        self.events += len(events)
        problem = self.parser.problem
        if problem is not None:  # reported as a frame that could not be read (SD001), with this reason
            self.writer.write({"sd": "event", "t": t, "raw": "", "error": problem})
        if cause is not None or leftover.strip():
            why = cause or "the body ended inside an event"
            self.writer.write(
                _cut(t, leftover, "unterminated-event", f"{why}: the stream was cut after {self.size} bytes")
            )


def _cut(t: float, leftover: bytes, kind: str, message: str) -> dict[str, Any]:
    """A record saying the stream stopped here: the unfinished event's bytes (possibly none), and why."""
    return {
        "sd": "event",
        "t": t,
        "raw": leftover.decode("utf-8", "replace"),
        "error": message,
        "problems": [{"kind": kind, "message": message}],
    }
