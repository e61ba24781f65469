"""A tool was executed before its call was complete, or for a call that never completed.

What it checks:
    For each ``execute`` record in the capture envelope, the call it names must have reached its
    completion event (Anthropic: ``content_block_stop`` for its index) earlier in the capture. An
    execution that comes first, or that names a call the stream abandoned, is premature.

Why it matters:
    Code that runs a tool "when the buffer parses", "on the start event" or "when another index
    appears" runs it on part of its input: ``{"command": "in`` becomes ``in`` instead of
    ``install -r requirements.txt``. With a side-effecting tool this is a security bug
    (vercel/ai #13137).

Severity:
    error. The capture records the execution and the stream it ran from: the tool demonstrably ran
    on input that was not yet (or never) complete.

Example:
    {"sd":"event",...,"partial_json":"{\\"command\\": \\"in"}
    {"sd":"execute","call_id":"toolu_01…","name":"bash","input":{"command":"in"}}
    {"sd":"event",...,"partial_json":"stall -r requirements.txt\\"}"}

How to fix:
    Run a tool only after the provider's completion signal for that call (Anthropic:
    ``content_block_stop``; OpenAI: the choice's ``finish_reason``) and after checking that the turn
    did not end in ``max_tokens`` or an error.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.util.wording import excerpt, preview, where
from stream_doctor.values.findings import Finding, Severity


@rule(
    "A tool ran before its call completed, or for a call that never completed", Severity.ERROR, needs="early-execution"
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for execution in stream.executions:
        if execution.call is None or execution.call_state == "complete":
            continue
        call = stream.calls[execution.call]
        before = [f for f in call.fragments if f.pos.number < execution.pos.number]
        seen = "".join(f.text for f in before)
        if execution.call_state == "never-completed":
            ending = f"the call never completed ({call.abandon_cause or 'stream ended'})"
            related = [("call started", call.started), ("call abandoned", call.abandon_pos)]
        else:
            ending = f"its completion event came later, at {where(call.ended)}"
            related = [("call started", call.started), ("call completed", call.ended)]
        yield self.finding(
            stream,
            execution.pos,
            f"{call.label} was executed with {preview(execution.input)} after {len(before)} of "
            f"{call.fragment_count} fragments (buffer so far {excerpt(seen, 60, tail=True)}); {ending}",
            "Execute a tool only after its completion event and a successful stop reason",
            related,
            call,
            at=execution.origin,
        )
