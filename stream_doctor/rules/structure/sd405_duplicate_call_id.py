"""Two tool calls in one message carry the same id.

What it checks:
    Within one message every tool call id is unique.

Why it matters:
    Results are matched to calls by id: two calls with one id get one result, or the provider
    rejects the next request ("Duplicate value for tool_call_id"). Deduplication by id then drops
    a legitimate call.

Severity:
    error. Two calls of one message with one id cannot both be answered: OpenAI rejects the
    follow-up ("Duplicate value for tool_call_id") and id-keyed clients drop one. Calls in different
    choices (``n > 1``) are different messages and never collide.

Example:
    content_block_start {"index":1,"content_block":{"type":"tool_use","id":"toolu_01X",...}}
    content_block_start {"index":2,"content_block":{"type":"tool_use","id":"toolu_01X",...}}

How to fix:
    Fix the server or translator that generates ids; in a gateway, derive ids from the upstream id
    and the index.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import DuplicateCallId
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.structure._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("Two tool calls in one message have the same id", Severity.ERROR, reads=(DuplicateCallId,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        lambda problem: (
            f"tool call id {problem.call_id!r} appears on a second call in the same message (first at line {problem.first.line})"
        ),
        "Call ids must be unique; results for one id cannot be told apart and the next request is rejected",
        lambda problem: [("first call with this id", problem.first)],
    )
