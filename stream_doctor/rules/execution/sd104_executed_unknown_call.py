"""A tool was executed for a call id the stream never produced.

What it checks:
    Every ``execute`` record's ``call_id`` must name a tool call that appeared in the capture.

Why it matters:
    The application invented, rewrote or mixed up an id (a gateway prefix, ids from another
    turn, positional ids reused across responses). Its tool result will then answer no call, and
    the provider rejects the next request ("tool_use ids were found without tool_result blocks").

Severity:
    error. The recorded execution names an id no call in the stream had; its result cannot pair with
    any call.

Example:
    stream:  {"type":"tool_use","id":"toolu_01AbC…"}
    execute: {"call_id":"call_0","name":"get_weather",...}

How to fix:
    Carry the provider's id from the call to the result unchanged.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.values.findings import Finding, Severity


@rule("A tool ran for a call id the stream never produced", Severity.ERROR, needs="unknown-execution")
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    known: list[str] | None = None  # the stream's call ids, listed only for a message that names them
    for execution in stream.executions:
        if execution.call is not None:
            continue
        if known is None:
            known = sorted({c.call_id for c in stream.calls if c.call_id})
        named = f"id {execution.call_id!r}" if execution.call_id else f"name {execution.name!r} (no id)"
        yield self.finding(
            stream,
            execution.pos,
            f"a tool was executed for {named}, which no call in the stream has"
            + (f" (the stream's calls: {', '.join(known)})" if known else " (the stream has no tool calls)"),
            "Carry each call's id from the stream to its execution and result unchanged",
            at=execution.origin,
        )
