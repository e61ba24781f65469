"""A JSON array's start."""

from __future__ import annotations

from stream_doctor.capture.starts import start

OPENS = b"["


def could_be(head: bytes) -> bool:
    return start(head)[:1] == OPENS
