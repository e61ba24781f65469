"""What it checks:
With ``--client NAME``: whether that client would raise an exception on this stream, other than
its reaction to an error the provider sent (which is what it should do).

Why it matters:
An exception mid-stream loses every call not yet handed over, and often surfaces far from its
cause (``IndexError`` in the SDK, ``Unable to parse tool parameter JSON``).

Severity:
warning when the client is a real library: the stream (or that library's handling of it) breaks a
widely used client, as its source (and, for anthropic-python and openai-python, the library
itself) shows. Info for a naive pattern: a hint about code of one's own. Never an error: the
capture does not show what the application ran (SD1xx do, from its executions).
    What if the request asked for this? The request does not change what a client raises on this
    stream.

Example:
``anthropic-python 2.12.0 would raise IndexError at line 20 (event 9): list index out of range:
a delta for block 2; it never runs get_weather (toolu_01…)``.

How to fix:
The exception points at the stream's irregularity (a skipped block index, a fragment without an
index, text that is not JSON): fix the server or proxy that produced it; the other findings of
this capture name it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from stream_doctor.rules.base import rule
from stream_doctor.rules.clients._common import hint, severity, who
from stream_doctor.util.wording import where
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.clients.compare import ClientReview
    from stream_doctor.rules.base import Rule


@rule("A named client would raise an exception on this stream", Severity.WARNING)
def check(review: ClientReview, self: Rule) -> Iterable[Finding]:
    error = review.error
    if error is None or error.provider_error:
        return
    lost = [review.call(d.call) for d in review.differences if d.kind == "raised"]
    place = where(error.pos) if error.pos is not None else "the end of the stream"
    message = f"{who(review)} would raise {error.exception} at {place}: {error.message}"
    if lost:
        message += "; it never runs " + ", ".join(call.label for call in lost)
    call = review.call(error.call) if error.call is not None else (lost[0] if lost else None)
    related = [("call started", call.started)] if call is not None else []
    yield self.finding(
        review.stream,
        error.pos if error.pos is not None else review.stream.last_pos,
        message,
        hint(review),
        related,
        call,
        severity(review),
    )
