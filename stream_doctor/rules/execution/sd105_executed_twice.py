"""The same tool call was executed more than once.

What it checks:
    Two or more ``execute`` records name the same call.

Why it matters:
    A call surfaced twice (once from the deltas, once from a terminal or summary event, or a retry
    of the whole loop) runs a side-effecting tool twice: two emails, two payments, two deletions.

Severity:
    error. Two recorded executions of one call: a side-effecting tool ran twice.

Example:
    {"sd":"execute","call_id":"toolu_01…","name":"send_email",...}
    {"sd":"execute","call_id":"toolu_01…","name":"send_email",...}

How to fix:
    Track executed call ids per turn and run each id once; deduplicate by id, never by
    (name, arguments), which would drop legitimate twin calls.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.values.findings import Finding, Severity


@rule("The same call was executed more than once", Severity.ERROR, needs="repeated-execution")
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for execution in stream.executions:
        if execution.call is None or execution.previous is None:
            continue
        call = stream.calls[execution.call]
        yield self.finding(
            stream,
            execution.pos,
            f"{call.label} was executed again (first execution at line {execution.previous.line})",
            "Run each call id once per turn",
            [("first execution", execution.previous)],
            call,
            at=execution.origin,
        )
