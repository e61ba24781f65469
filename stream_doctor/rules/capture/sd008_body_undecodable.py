"""A recorded response body cannot be decompressed, so its turn's stream was not read.

What it checks:
    Cassettes, HAR files and other recorders' files keep each response body as recorded, often
    still compressed (``Content-Encoding: gzip`` or deflate, or a gzip body stored as
    ``!!binary``/base64/hex). stream-doctor undoes gzip, deflate, ``br`` (with the ``brotli``
    package) and ``zstd`` (with ``zstandard``), stacked as ``Content-Encoding`` lists them. When a
    body still cannot be decompressed (a stream cut short or damaged, a coding nobody implements,
    or ``br``/``zstd`` without its package), the interaction's stream cannot be read: this rule says
    so, naming the coding, at the interaction, instead of showing the turn as one with "no streamed
    response".

Why it matters:
    Nothing in that turn was checked: its calls, its finish and its events are missing from the
    report, and a CI run over the capture would pass without having looked at it. Replaying the
    cassette through an HTTP client fails the same way (a decoding error before the first event),
    so a test built on it does not test what it seems to.

Severity:
    warning. The recording, not the provider, is what the capture shows damaged or unreadable: the
    turn is unchecked, which is never a silent pass. Not an error: nothing shows the provider or a
    client broke.
    What if the request asked for this? The request's ``Accept-Encoding`` says which encodings the
    client takes; a body in another one, or one that does not decode, is not what it asked for.

Example:
    response:
      body:
        string: !!binary |
          H4sIAAAAAAACA+2XS2/bMAzH7/kUhc5O4TzmtT63Q4ds3dDHLk1gKBJta5UlRY9tQeDvXmpJk3RY
      headers:
        Content-Encoding: [gzip]

How to fix:
    Re-record the interaction, or store the body decoded (and drop ``Content-Encoding``); for
    ``br``/``zstd``, install the package the finding names, or record with ``Accept-Encoding: gzip``.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule(
    "A recorded response body cannot be decompressed, so its turn's stream was not read",
    Severity.WARNING,
    reads=("body-undecodable",),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        "Re-record the interaction or store its body decoded; this turn's stream was not checked",
        "{message}: this turn's stream was not read, so none of its calls or events were checked",
    )
