"""The SSE framing deviates from what the provider sends.

What it checks:
    The SSE ``event:`` name differs from the JSON ``type`` inside (Anthropic always sends them
    equal); an ``event:`` field with no ``data:``; an SSE field name that does not exist (each of the
    first ten names where it first appears, the lines of any others together, counted); several
    ``data:`` lines, each a whole JSON document, with no blank line between them (events written
    without their separators: read one a line, as line-based clients do); a block of lines without
    any field prefix that is one JSON object (Vertex AI and the Gemini API write a mid-stream error
    so): read as one frame, as google-genai reads it, and reported once, not once a line.

Why it matters:
    Clients differ in which of the two they dispatch on: the Anthropic Python SDK picks events by
    the SSE name, most hand-written clients by ``data.type``. When they disagree the same stream is
    read two ways. It usually means a proxy rewrote the stream.

Severity:
    warning. The SSE specification and the clients that follow it (browsers' ``EventSource``, the
    eventsource-parser package the AI SDK uses) read the framing; clients that read only ``data:``
    lines read the payload; the two disagree on this capture. Each instance names which readers lose
    what.
    What if the request asked for this? No request setting changes the SSE framing: it is the
    server's or a relay's.

Example:
    event: content_block_delta
    data: {"type":"content_block_stop","index":1}

How to fix:
    Find what rewrote the stream (proxy, gateway, a recorder that re-serialised it) and make it
    pass events through unchanged.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.problem_facts import EventNameMismatch
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule(
    "SSE framing that disagrees with the payload or the SSE rules",
    Severity.WARNING,
    reads=(
        "event-name-mismatch",
        "event-without-data",
        "unknown-sse-field",
        "data-lines-not-separated",
        "unprefixed-json",
    ),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        "Check for a proxy or recorder that rewrote the stream; dispatch on one field consistently",
        words=(EventNameMismatch, mismatch),
    )


def mismatch(facts: EventNameMismatch) -> str:
    return f"SSE event name {facts.event_name!r} differs from {facts.field} {facts.data_type!r}"
