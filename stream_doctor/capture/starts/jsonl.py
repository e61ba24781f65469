"""JSON Lines' start: every line is one JSON object."""

from __future__ import annotations

from stream_doctor.capture.starts import start

#: How each line opens.
OPENS = b"{"


def could_be(head: bytes) -> bool:
    return start(head)[:1] == OPENS
