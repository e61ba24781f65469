"""SSE's start: a comment or a field line (event, data, id, retry, or a few unknown ones first); never a line
that starts like JSON or markup."""

from __future__ import annotations

from stream_doctor.capture.starts import start

#: How a line of another format starts, not a field's: a JSON document or markup.
NOT_FIELDS = (b"{", b"[", b"<")


def could_be(head: bytes) -> bool:
    first = start(head)[:1]
    return bool(first) and first not in NOT_FIELDS
