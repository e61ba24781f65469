"""A new ``message_start`` arrived before the previous message's ``message_stop``.

What it checks:
    Messages do not overlap: a ``message_start`` only follows a ``message_stop`` (or begins the stream).

Why it matters:
    This is what a proxy or retry layer produces when it splices a second attempt into the first
    stream. Index-keyed clients mix the two messages' blocks (indices start again at 0) and may run
    the first attempt's half-streamed call.

Severity:
    error. The first message's open call was abandoned and index-keyed clients mix the two messages'
    blocks.

Example:
    content_block_delta {"index":1,"delta":{"partial_json":"{\"value\":\"Spark"}}
    message_start {"message":{"id":"msg_second",...}}

How to fix:
    Retry by starting a new request and discarding the first stream, never by splicing.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import MessageRestarted
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.structure._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("A new message started before the previous message stopped", Severity.ERROR, reads=(MessageRestarted,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    message_start = stream.capture.protocol.words.message_start
    return problems_of(
        stream,
        self,
        lambda problem: (
            f"{message_start} arrived while message {problem.open_message + 1} was still open (a spliced or retried stream)"
        ),
        "Do not splice a retry into a running stream; discard the first attempt and its open calls",
        lambda problem: [("previous message started", problem.previous)],
    )
