"""The provider sent an error inside the stream, after the HTTP status was already 200.

What it checks:
    An ``error`` event (Anthropic ``{"type":"error","error":{"type":"overloaded_error",…}}``) in
    the middle of the stream.

Why it matters:
    The HTTP status said success; only the event says the turn failed. Clients that only check the
    status treat the partial message as complete, and any open tool call as finished. The SDKs raise
    on it (anthropic-sdk-python #1258 reported the status as 200 rather than 529).

Severity:
    error. The provider itself says the turn failed; openai-python and anthropic-sdk-python raise on
    the event.

Example:
    event: error
    data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}

How to fix:
    Treat an error event as a failed turn: discard partial tool input, retry with backoff for
    ``overloaded_error``/``api_error``, and surface other errors.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.values.findings import Finding, Severity


@rule("The provider sent an error event mid-stream", Severity.ERROR, needs="message-error")
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for message in stream.messages:
        error = message.error
        if error is None:
            continue
        open_calls = [stream.calls[i] for i in message.calls if stream.calls[i].abandon_cause == "error-event"]
        tail = f"; {len(open_calls)} call(s) were still open" if open_calls else ""
        yield self.finding(
            stream,
            error.pos,
            f"in-stream error {error.error_type or 'error'}: {error.message or '(no message)'}{tail}",
            "Treat the turn as failed: discard partial tool input, retry overloaded/api errors with backoff",
        )
