"""The stream ended without the provider's end-of-stream event.

What it checks:
    The last message has no ``message_stop`` (Anthropic; other adapters name their own end, such
    as ``data: [DONE]`` after a choice's unfinished call) and no error event explains the end.
    Calls left open are reported by SD301; this reports the cut itself.

Why it matters:
    A connection drop, a proxy timeout or a client that stopped reading looks like a short but
    complete answer to code that treats end-of-file as success (hermes-agent #81017).

Severity:
    warning. A capture cannot tell a dropped connection from a recorder that stopped; when a call
    was open the cut is proven and SD301 carries the error. openai-python's and
    anthropic-sdk-python's stream iterators end quietly at end of file, so a cut turn reads as
    complete to them. A log of parsed chunks (a JSON array, JSON Lines) of a protocol whose end is a
    line that is not JSON (OpenAI Chat's ``data: [DONE]``) cannot hold that end: its client consumed
    it, so its absence there asserts nothing and this rule does not fire (a choice left without a
    finish_reason there is SD530's).
    What if the request asked for this? No request setting ends a stream early without its end
    event; a token limit (``max_tokens``) ends it with its stop reason, which is another finding's
    (SD301).

Example:
    … content_block_stop, message_delta {"stop_reason":"end_turn"}, <EOF, no message_stop>

How to fix:
    Treat a stream without its terminal event as failed and retry the request.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.values.findings import Finding, Severity


@rule("The stream ended without its end-of-stream event", Severity.WARNING, needs="unstopped-message")
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    if not stream.messages:
        return
    last = stream.messages[-1]
    if last.stopped is not None or last.error is not None:
        return
    words = stream.capture.protocol.words
    reason = f" after {words.stop_reason} {last.stop_reason}" if last.stop_reason else ""
    yield self.finding(
        stream,
        stream.last_pos,
        # The provider's own end-of-stream event (Anthropic's message_stop, OpenAI Chat's data: [DONE] …).
        f"the stream ended{reason} without {words.stream_end}",
        "Treat a stream without its terminal event as failed and retry",
        [("message started", last.started)],
    )
