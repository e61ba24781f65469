"""A Bedrock ``contentBlockStart`` whose ``start`` union is empty.

What it checks:
    ``contentBlockStart.start`` is a union: exactly one of ``toolUse``, ``toolResult``, ``image``
    (botocore ``ContentBlockStart``). Bedrock sends no start at all for text and reasoning blocks,
    whose first delta begins them (mulgadc/spinifex PR #844). A start with ``{}`` comes from a
    converter that invents one for every block.

Why it matters:
    Clients that dispatch on the union's member (``"toolUse" in start``) find none and treat the
    block as unknown. Above all it shows the stream was rebuilt by a converter, so other details
    of it may not be Bedrock's.

Severity:
    info. No widely used client is known to break on it (botocore does not validate response unions;
    the AI SDK's Bedrock schema makes ``start`` optional), but it shows the stream was rebuilt by a
    converter.

Example:
    {"contentBlockStart":{"contentBlockIndex":0,"start":{}}}
    {"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"I'll update the issue list."}}}

How to fix:
    In the converter, send no ``contentBlockStart`` for text blocks; begin them with their first
    ``contentBlockDelta``.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.problem_facts import EmptyStartUnion
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("A contentBlockStart whose start union is empty", Severity.INFO, reads=("empty-start-union",))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        "Send no contentBlockStart for text blocks: a text block begins with its first contentBlockDelta",
        words=(EmptyStartUnion, empty_start),
    )


def empty_start(facts: EmptyStartUnion) -> str:
    return f"contentBlockStart for block {facts.block} has an empty start {{}}: Bedrock sends no start for text blocks"
