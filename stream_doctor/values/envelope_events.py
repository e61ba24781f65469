"""Envelope records other than received events (what the application did, what it sent) as events."""

from __future__ import annotations

from stream_doctor.capture.base import Frame
from stream_doctor.values.events import Event, Execution, Malformed, Request


def envelope_event(frame: Frame) -> Event:
    record = frame.value
    if not isinstance(record, dict):
        return Malformed(frame.pos, frame.error or "not an envelope record")
    if frame.kind == "execute":
        call_id = record.get("call_id")
        name = record.get("name")
        return Execution(
            frame.pos,
            call_id if isinstance(call_id, str) else None,
            name if isinstance(name, str) else None,
            record.get("input"),
            getattr(record, "origin", None),  # a SuppliedRecord: given on the command line or in --executions
        )
    if frame.kind == "request":
        return Request(frame.pos, record.get("body"))
    return Malformed(frame.pos, f"envelope record of kind {frame.kind!r} is not used by replay")
