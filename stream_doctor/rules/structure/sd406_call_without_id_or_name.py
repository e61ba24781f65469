"""A tool call started without an id or without a name.

What it checks:
    The start of every tool call carries a non-empty id and name.

Why it matters:
    Without a name the client cannot pick the tool; without an id it cannot pair the result, and
    the next request fails ("tool_use ids were found without tool_result blocks"). Clients that
    create the call before the name arrives run an empty-named tool.

Severity:
    error. A call without a name cannot be dispatched and one without an id cannot be answered, by
    any client.

Example:
    content_block_start {"index":1,"content_block":{"type":"tool_use","name":"search","input":{}}}

How to fix:
    Fix the server or translator that builds the start event.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import CallWithoutIdOrName
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.structure._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("A tool call without an id or without a name", Severity.ERROR, reads=(CallWithoutIdOrName,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        lambda problem: (
            "a tool call started without "
            + " and ".join(w for w, v in (("an id", problem.call_id), ("a name", problem.name)) if not v)
        ),
        "A call needs an id (to pair its result) and a name (to pick the tool); fix the server or translator",
    )
