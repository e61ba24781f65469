"""An event type the provider adapter does not know.

What it checks:
    Each event whose ``type`` is not one the adapter knows (for Anthropic: message_start,
    content_block_start/delta/stop, message_delta, message_stop, ping, error and the known delta
    types) is counted and reported, never dropped in silence.

Why it matters:
    Providers add event types (Anthropic's streaming docs say clients must ignore ones they do not
    know). A client that throws on an unknown type breaks the turn; one that treats it as content
    corrupts the message. It may also mean the capture belongs to another provider.

Severity:
    warning. The AI SDK's provider packages validate every chunk against a closed schema and turn
    one they do not recognise into an ``error`` part. The official Python SDKs pass unknown types
    through, and Anthropic documents that new types may appear, so the stream is not broken (not an
    error). Extra fields on a known event are never this rule: they are SD006.
    What if the request asked for this? A request can turn on events (a beta header,
    ``include_usage``, reasoning summaries); the adapters know the documented ones, so an event the
    request asked for is not unknown. One no documentation names stays a warning.

Example:
    event: content_block_annotation
    data: {"type":"content_block_annotation","index":0,...}

How to fix:
    Make the client ignore unknown event types. If the type carries a tool call, report it to
    stream-doctor so an adapter learns it; if the provider was guessed wrong, force it with --provider.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.values.findings import Finding, Severity


@rule("An event type the adapter does not know (counted, never dropped)", Severity.WARNING, reads=("unknown-event",))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    seen: dict[str, int] = {}
    for problem in problems(stream, self):
        seen[problem.message] = seen.get(problem.message, 0) + 1
        if seen[problem.message] > 1:
            continue
        total = stream.unknown_events.get(problem.message, 1)
        times = "once" if total == 1 else f"{total} times"
        yield self.finding(
            stream,
            problem.pos,
            f"unknown event type {problem.message!r} ({times}, first here)",
            "Clients should ignore event types they do not know; if this one matters, force the right --provider",
        )
