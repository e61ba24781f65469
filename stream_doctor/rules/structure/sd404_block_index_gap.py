"""A ``content_block_start`` index skips a position or goes backwards.

What it checks:
    Anthropic block indices are positions in the final ``message.content``: they start at 0 and
    each new block takes the next one.

Why it matters:
    The Anthropic SDK appends each started block and then indexes ``content[event.index]``: with
    indices 0 then 2 it crashes on the first delta for index 2 (omlx #1353). Clients that key by
    value survive; clients that key by position misroute fragments.

Severity:
    warning. anthropic-sdk-python appends blocks and then indexes them by position and crashes on
    the gap (omlx #1353); clients keying by value read it right (the same for Responses'
    ``output_index``: openai-python's stream state appends items and indexes ``output[output_index]``).
    Bedrock's Converse events (``contentBlockIndex``, ConverseStream and InvokeModel with Amazon
    Nova) are read by clients that key blocks by the index's value (the AI SDK's Bedrock provider
    keeps them in a record by index), and Nova numbers its blocks with gaps: info there.
    What if the request asked for this? No request setting numbers blocks; Bedrock's Converse
    numbering is the provider's own and is info (above).

Example:
    content_block_start {"index":0,...}  …  content_block_start {"index":2,...}

How to fix:
    Fix the server or proxy that skips indices; make clients key blocks by the index value.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import IndexGap
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.rules.structure._problems import block, problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("A block start's index is not the next position in the message", Severity.WARNING, reads=(IndexGap,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    if stream.capture.provider == "bedrock" and "content_block_start" not in stream.event_counts:
        # Converse-shaped events: keyed by value by their clients; Nova's own numbering
        for problem in problems(stream, self):
            yield self.finding(
                stream,
                problem.pos,
                f"{block(problem.key)} started where index {problem.expected} was expected; Bedrock's Converse "
                "clients key blocks by contentBlockIndex's value, and Amazon Nova numbers its blocks so",
                "Nothing to fix for clients that key blocks by index value; do not index a list by contentBlockIndex",
                severity=Severity.INFO,
            )
        return
    yield from problems_of(
        stream,
        self,
        lambda problem: f"{block(problem.key)} started where index {problem.expected} was expected",
        "Key blocks by their index value, not by array position; fix the server that skips indices",
    )
