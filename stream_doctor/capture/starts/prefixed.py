"""The AI SDK data stream's start: every line is a one-character type id, a colon and JSON."""

from __future__ import annotations

import re

from stream_doctor.capture.starts import start

#: A line's type id and its colon.
PREFIX = re.compile(rb"([0-9a-z]):")


def could_be(head: bytes) -> bool:
    return PREFIX.match(start(head)) is not None
