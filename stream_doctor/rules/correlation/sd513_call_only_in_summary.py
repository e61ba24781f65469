"""A terminal event lists a call the stream never produced.

What it checks:
    Every call in ``response.completed``'s ``output`` (or restated by an ``output_item.done``)
    was started in the stream (``response.output_item.added``) at the same position or with the
    same id.

Why it matters:
    The stream and the final response disagree about which calls the turn made. A client that
    builds calls from stream events drops this one in silence; a client that reads the final
    response runs it. Usually a relay dropped the call's events, or a gateway synthesised the
    final response from another source.

Severity:
    warning. Stream-only and final-response-only clients disagree about whether the call exists.
    What if the request asked for this? No request setting asks for a call to appear only in the
    final summary.

Example:
    response.output_item.added {"output_index":0,"item":{"type":"message",…}}
    response.completed {"response":{"output":[{"type":"message",…},{"type":"function_call","call_id":"call_9",…}]}}

How to fix:
    Find what removed the call's events between the API and the client. Until then, reconcile the
    streamed calls with the final response and treat a mismatch as a failed turn.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import SummaryOnlyCall
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.util.wording import preview
from stream_doctor.values.findings import Finding, Severity


@rule("A terminal event lists a call the stream never produced", Severity.WARNING, reads=(SummaryOnlyCall,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    seen: set[tuple[object, object]] = set()
    for problem in problems(stream, self):
        identity = (problem.call_id, problem.name)
        if identity in seen:
            continue  # output_item.done and response.completed both list it: one finding
        seen.add(identity)
        yield self.finding(
            stream,
            problem.pos,
            f"a terminal event lists {problem.name or '?'} ({problem.call_id or 'no id'}) with "
            f"{preview(problem.arguments, 60)}, but the stream never started it; a client that builds "
            f"calls from the stream drops it, one that reads the final response runs it",
            "Find what dropped the call's stream events (a relay, a filter) and reconcile streamed calls "
            "with the final response",
        )
