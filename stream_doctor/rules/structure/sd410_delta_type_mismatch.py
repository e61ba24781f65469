"""A delta whose type does not fit its block.

What it checks:
    ``input_json_delta`` only for tool blocks; ``text_delta``, ``thinking_delta``, ``signature_delta``,
    ``citations_delta`` only for the non-tool blocks they belong to.

Why it matters:
    Argument text sent as a text delta becomes visible text and the call runs with ``{}``; text sent
    as argument fragments corrupts the call's JSON.

Severity:
    error. The call's input was sent as another kind of delta: every client builds the call without
    it.

Example:
    content_block_start {"index":1,"content_block":{"type":"tool_use",...}}
    content_block_delta {"index":1,"delta":{"type":"text_delta","text":"{\"city\""}}

How to fix:
    Fix the translator or server that builds the deltas.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import DeltaTypeMismatch
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.structure._problems import block, problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("A delta whose type does not fit its block", Severity.ERROR, reads=(DeltaTypeMismatch,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    fragment = stream.capture.protocol.words.fragment
    return problems_of(
        stream,
        self,
        lambda problem: (
            f"a {problem.event} arrived for {block(problem.key)}, a {problem.block_type} block: "
            f"a client that routes by delta type loses its {problem.size} characters"
        ),
        f"Deltas must match their block ({fragment} for tool calls, text deltas for text); fix the translator",
    )
