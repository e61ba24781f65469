"""A later event restates a call that had not completed, or never did.

What it checks:
    A restatement (``response.output_item.done`` with ``status: incomplete``, the ``output`` of
    ``response.incomplete``) of a call whose own completion event had not come.

Why it matters:
    When a response is cut by ``max_output_tokens`` or a content filter, its final ``output``
    still holds the cut call, with a truncated ``arguments`` string and ``status: incomplete``.
    A client that takes calls from the final response, or from every ``output_item.done``,
    without checking the item and response status runs a tool with cut input.

Severity:
    warning. Clients that take calls from the final response without checking ``status`` run a cut
    call; the cut itself is SD301's error.
    What if the request asked for this? No request setting asks for an incomplete call in the
    summary.

Example:
    response.function_call_arguments.delta {"output_index":0,"delta":"{\"path\":\"notes.md\",\"content\":\"# Plan"}
    response.output_item.done {"output_index":0,"item":{"type":"function_call","status":"incomplete",…}}
    response.incomplete {"response":{"incomplete_details":{"reason":"max_output_tokens"},"output":[…]}}

How to fix:
    Run only calls whose completion event arrived and whose item status is ``completed``; on
    ``response.incomplete`` retry with a larger ``max_output_tokens`` or continue the turn.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import SummaryBeforeComplete
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.util.wording import excerpt, preview, where
from stream_doctor.values.events import MISSING
from stream_doctor.values.findings import Finding, Severity


@rule("A later event restates a call that had not completed", Severity.WARNING, reads=(SummaryBeforeComplete,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    groups: dict[int, list[SummaryBeforeComplete]] = {}
    for problem in problems(stream, self):
        groups.setdefault(problem.call, []).append(problem)
    for ordinal, group in groups.items():
        call = stream.calls[ordinal]
        restated = group[0].arguments
        shown_input = "an input that does not parse" if restated is MISSING else preview(restated, 60)
        shown = excerpt(call.raw_arguments, 50, tail=True) if call.raw_arguments else "nothing"
        if call.status == "abandoned":
            state = f"it never completed ({call.abandon_cause}; its fragments end {shown})"
        else:
            state = f"its completion event came only later, at {where(call.ended)}"
        times = "a later event" if len(group) == 1 else f"{len(group)} later events"
        yield self.finding(
            stream,
            group[0].pos,
            f"{call.label} is restated by {times} with {shown_input} although {state}; a client that takes "
            f"calls from the finished items or the final response runs it with this input",
            "Run only calls whose completion event arrived and whose item status is completed; retry or "
            "continue a response that ended incomplete",
            [("call started", call.started)] + [("restated again", a.pos) for a in group[1:2]],
            call,
        )
