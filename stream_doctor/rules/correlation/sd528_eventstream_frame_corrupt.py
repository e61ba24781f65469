"""A message of a binary AWS event stream fails its CRC32 or has impossible lengths.

What it checks:
    Every message of an ``application/vnd.amazon.eventstream`` body (Bedrock's streaming
    responses) has a prelude CRC32 over its two lengths and a message CRC32 over everything before
    it. A message whose CRC does not match, or whose prelude cannot be a message, is reported; the
    reader skips to the next message that checks out.

Why it matters:
    The bytes were changed after Bedrock sent them: by a proxy, a recorder that decoded and
    re-encoded text, or a damaged file. The SDKs verify both CRCs and raise (botocore
    ``ChecksumMismatch``, the AWS SDK for JavaScript's checksum error), which ends the stream at
    that message: the client never sees the events after it, tool calls included.

Severity:
    error. botocore and the AWS SDK for JavaScript verify both CRCs and raise ``ChecksumMismatch``:
    no client reads past the corrupt message.

Example:
    message 12 (contentBlockDelta) at byte 2210: message CRC32 is 0x1bc3aa0c, the bytes give 0x5f0e8b21

How to fix:
    Record the response body as raw bytes, before any decoding; if a proxy rewrites it, bypass or
    fix the proxy, and retry the request.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule(
    "A binary event stream message fails its CRC32 or has impossible lengths",
    Severity.ERROR,
    reads=("eventstream-crc", "eventstream-corrupt"),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        "Record the body as raw bytes; if a proxy rewrites it, fix or bypass it and retry",
        "{message}. The AWS SDKs check both CRCs and raise here, ending the stream for the client",
    )
