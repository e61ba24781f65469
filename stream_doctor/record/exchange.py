"""One recorded request/response pair: the request record, then each event as its bytes arrive.

The transport and the proxy call ``chunk`` with every piece of the body right after handing it
on, and ``end`` once, with why the body ended when it did not end normally. What happened is
written into the envelope: a body cut by the upstream or abandoned by the client before the
provider's last event leaves its unfinished event as a ``raw`` record marked
``unterminated-event``, so the replay reports the cut (SD003) instead of a stream that merely
looks short. A connection that stops after that last event (the OpenAI SDK closes the response
at ``[DONE]``, before the body's end) cut nothing: the stream is recorded as complete.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from stream_doctor.record.parse import MAX_DECODED, MAX_EVENT, BodyParser, Event, event_record
from stream_doctor.record.writer import EnvelopeWriter
from stream_doctor.values.protocol import StreamEnd


class RecordedExchange:
    def __init__(
        self,
        writer: EnvelopeWriter,
        content_type: str | None,
        content_encoding: str | None,
        ending: StreamEnd | None = None,
        max_event: int = MAX_EVENT,
        max_capture: int = MAX_DECODED,
    ) -> None:
        self.writer = writer
        self.parser = BodyParser(content_type, content_encoding, max_event, max_capture)
        self.ending = ending if ending is not None else stream_end(None)
        self.max_capture = max_capture
        self.size = 0
        self.events = 0
        self.written = 0  # bytes of event records written
        self.unrecorded = 0  # body bytes that arrived after the capture limit: forwarded, not read
        self.oversized = 0  # events cut to ``max_event``
        self.finished = False  # the provider's last event has arrived: nothing more is due
        self.ended = False
        self.cut: str | None = None  # why the capture is partial, for the log line

    @property
    def full(self) -> bool:
        """The capture limit is reached: the rest of the body is forwarded, counted and not recorded."""
        return self.parser.exhausted or self.written >= self.max_capture

    def chunk(self, data: bytes, t: float | None = None) -> None:
        """``data`` arrived (``t``: when, in seconds since the envelope's start, for a server recording what
        it wrote a moment ago; else now)."""
        self.size += len(data)
        if self.ended:
            return
        if self.full:
            self.unrecorded += len(data)
            return
        for events in self.parser.feed(data):
            self._write(events, t)

    def chunks(self, reads: Sequence[bytes], times: Sequence[float]) -> list[int]:
        """``chunk`` of each read at its time (``serve`` recording the reads it wrote): read as one piece where
        that reads them as read by read (``BodyParser.feed_reads``), each event at the time of the read that
        completed it. A record is at most ~40 times the bytes it is made of (a control byte written as a
        6-byte escape, a record's keys and time around a 2-byte JSON line): the capture limit is never
        reached inside the piece. Returns, for each event record written, the index of its read in ``reads``."""
        total = sum(map(len, reads))
        fed = None
        if not self.ended and not self.full and self.written + 40 * total < self.max_capture:
            fed = self.parser.feed_reads(reads)
        if fed is None:
            written: list[int] = []
            for place, (data, t) in enumerate(zip(reads, times, strict=True)):
                before = self.events
                self.chunk(data, t)
                written += [place] * (self.events - before)
            return written
        self.size += total
        events, places = fed
        first = 0
        for number in range(1, len(events) + 1):
            if number == len(events) or places[number] != places[first]:
                self._write(events[first:number], times[places[first]])
                first = number
        return places

    def end(self, cause: str | None = None, t: float | None = None) -> None:
        """The body is over: normally (``cause`` None), or stopped for the reason given (``t`` as ``chunk``'s).
        Stopped after the provider's last event, nothing was cut."""
        if self.ended:
            return
        self.ended = True
        t = self.writer.now() if t is None else t
        if self.full:
            self._capped(cause, t)
            return
        events, leftover, dropped = self.parser.close()
        self._write(events, t)
        problem = self.parser.problem
        if problem is not None:  # reported as a frame that could not be read (SD001), with this reason
            self.writer.write({"sd": "event", "t": t, "raw": "", "error": problem})
        name = self.parser.name  # an unfinished event's ``event:`` line, when it came
        unfinished = bool(leftover.strip()) or name is not None
        if self.finished:
            if unfinished:  # bytes after the last event: kept, but nothing was cut
                self.writer.write(_after_end(t, name, leftover, self.size))
        elif cause is not None or unfinished:
            why = cause or "the body ended inside an event"
            if dropped:
                why += f" (the unfinished event passed the recorder's --max-event limit: {dropped} bytes of it dropped)"
                self.oversized += 1
            self.cut = why
            record = _cut(t, name, leftover, "unterminated-event", f"{why}: the stream was cut after {self.size} bytes")
            if dropped:
                record["partial"] = {"limit": "max-event", "kept_bytes": len(leftover), "dropped_bytes": dropped}
            self.writer.write(record)

    def _capped(self, cause: str | None, t: float) -> None:
        """The end of a capture that reached its limit: one record saying how much was not recorded."""
        unread = self.size - self.unrecorded
        why = (
            f"the recorder's --max-capture limit ({self.max_capture} bytes) was reached after {unread} bytes "
            f"and {self.events} events; the remaining {self.unrecorded} bytes were forwarded but not recorded"
        )
        if cause is not None:
            why += f"; then {cause}"
        events, leftover, dropped = self.parser.close()  # what was read before the limit
        self._write(events, t)
        if dropped:
            why += f" (the unfinished event passed the recorder's --max-event limit: {dropped} bytes of it dropped)"
            self.oversized += 1
        self.cut = why
        record = _cut(t, self.parser.name, leftover, "unterminated-event", why)
        record["partial"] = {
            "limit": "max-capture",
            "recorded_bytes": unread,
            "dropped_bytes": self.unrecorded,
            "decoded_bytes": self.parser.decoded,
        }
        self.writer.write(record)

    def _write(self, events: list[Event], t: float | None) -> None:
        if not events:
            return
        t = self.writer.now() if t is None else t
        for name, payload, dropped in events:
            if dropped:
                self.oversized += 1
                message = (
                    f"an event of {len(payload) + dropped} bytes passed the recorder's --max-event limit: "
                    f"its first {len(payload)} bytes are kept, {dropped} dropped"
                )
                record = _unfinished(t, name, payload, message)
                record["problems"] = [{"kind": "malformed-frame", "message": message}]
                record["partial"] = {"limit": "max-event", "kept_bytes": len(payload), "dropped_bytes": dropped}
            else:
                record = event_record(t, name, payload)
            self.written += self.writer.write(record)
            if not self.finished and not dropped:
                self.finished = self.ending.ends(name, record["data"] if "data" in record else record["raw"])
        self.events += len(events)


def _cut(t: float, name: str | None, leftover: bytes, kind: str, message: str) -> dict[str, Any]:
    """A record saying the stream stopped here: the unfinished event's name and bytes (possibly
    none), and why."""
    record = _unfinished(t, name, leftover, message)
    record["problems"] = [{"kind": kind, "message": message}]
    return record


def _after_end(t: float, name: str | None, leftover: bytes, size: int) -> dict[str, Any]:
    """Bytes that came after the provider's last event but form no whole event (SD001 shows them)."""
    return _unfinished(t, name, leftover, f"an unfinished event after the end of the stream, at {size} bytes")


def _unfinished(t: float, name: str | None, leftover: bytes, message: str) -> dict[str, Any]:
    record: dict[str, Any] = {"sd": "event", "t": t}
    if name is not None:
        record["event"] = name
    record["raw"] = leftover.decode("utf-8", "replace")
    record["error"] = message
    return record


@cache
def stream_end(provider: str | None) -> StreamEnd:
    """How a stream of ``provider`` ends, as its adapter declares it; for a provider not known,
    the end of any provider's stream (their last events have distinct names)."""
    from stream_doctor.providers import ADAPTERS

    if provider is not None and provider in ADAPTERS:
        return ADAPTERS[provider].protocol.stream_end
    ending = StreamEnd()
    for name in ADAPTERS:
        ending |= ADAPTERS[name].protocol.stream_end
    return ending
