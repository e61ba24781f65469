"""An event arrived after ``message_stop``.

What it checks:
    ``message_stop`` ends the message; only a new ``message_start`` may follow it.

Why it matters:
    SDKs stop reading at ``message_stop``: whatever follows (a late block, a late delta) is lost
    for them, while other clients apply it. Two readers of the same stream then disagree.

Severity:
    error. anthropic-sdk-python stops at ``message_stop`` and other clients apply the late event:
    the same bytes build two different messages.

Example:
    message_stop
    content_block_delta {"index":1,...}

How to fix:
    Fix the proxy or server that writes after the end of the message (often a splice of two streams).
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import EventAfterMessageStop
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.structure._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("An event arrived after the message's end event", Severity.ERROR, reads=(EventAfterMessageStop,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    words = stream.capture.protocol.words
    return problems_of(
        stream,
        self,
        lambda problem: f"an event arrived after {words.stream_end} (line {problem.stopped.line})",
        f"Only a new message ({words.message_start}) may follow {words.stream_end}; SDKs stop reading there and "
        "lose what follows",
        lambda problem: [(words.stream_end, problem.stopped)],
    )
