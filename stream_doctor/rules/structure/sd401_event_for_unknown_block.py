"""A delta or stop arrived for a block index that was never started.

What it checks:
    Every ``content_block_delta`` and ``content_block_stop`` must refer to an index opened by a
    ``content_block_start`` in the same message.

Why it matters:
    The Anthropic SDK appends blocks by position and looks deltas up with ``content[index]``: a
    delta for an unstarted index raises ``IndexError`` mid-stream (anthropic-sdk-python #1192,
    traced to proxies and custom transports). Lenient clients drop the fragment and run the call
    with part of its input.

Severity:
    error. anthropic-sdk-python's ``accumulate_event`` indexes ``content[event.index]`` and raises
    ``IndexError``; a lenient client loses the fragment. Either way a client following the contract
    cannot build the call.

Example:
    content_block_delta {"index":3,"delta":{"type":"input_json_delta",...}}   (no start for index 3)

How to fix:
    Find the proxy, gateway or transport that drops or reorders events; a client should fail the
    turn on an unknown index rather than guess.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import UnknownBlock
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.structure._problems import describe_events, grouped
from stream_doctor.values.findings import Finding, Severity


@rule("A delta or stop for a block that was never started", Severity.ERROR, reads=(UnknownBlock,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for group in grouped(stream, self):
        first = group[0]
        yield self.finding(
            stream,
            first.pos,
            f"{describe_events(group)} arrived for block index {first.key}, which was never started; a strict client drops them and the call they belong to is lost",
            "A proxy or transport dropped the block's start event; fix it, and make the client fail loudly on unknown indices",
            [("last such event", group[-1].pos)] if len(group) > 1 else [],
        )
