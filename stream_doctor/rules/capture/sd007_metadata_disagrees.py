"""A recorded response whose headers disagree with the body the recorder stored.

What it checks:
    A cassette or HAR keeps the response headers beside the body. When they say
    ``Content-Type: application/json`` or ``Content-Encoding: gzip`` while the stored body is plain
    SSE text (an edited cassette, or a recorder that decoded the body and kept the headers),
    stream-doctor trusts the bytes, reads the body as what it is, and notes the disagreement once.

Why it matters:
    Nothing in the stream is wrong. But replaying the cassette through an HTTP client that believes
    the headers (a gzip decoder on plain text, a JSON parser on SSE) fails before any event is read,
    so a test built on the cassette may not test what it seems to.

Severity:
    info. The provider's stream is intact and stream-doctor reads it from the bytes; the note is
    about the recording, not about the provider or a client.

Example:
    headers: {Content-Encoding: [gzip], Content-Type: [application/json]}
    content: 'data: {"id":"chatcmpl-A6jf…","object":"chat.completion.chunk",…}'

How to fix:
    Re-record the cassette, or make the stored headers match the body (drop ``Content-Encoding``
    when the recorder keeps bodies decoded; ``text/event-stream`` for a stream).
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.values.findings import Finding, Severity


@rule(
    "Recorded response headers disagree with the stored body (read by its bytes)",
    Severity.INFO,
    reads=("metadata-disagrees",),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    found = next(problems(stream, self), None)
    if found is not None:
        yield self.finding(
            stream,
            found.pos,
            found.message,
            "Nothing to fix in the stream; make the recorded headers match the body, or re-record",
        )
