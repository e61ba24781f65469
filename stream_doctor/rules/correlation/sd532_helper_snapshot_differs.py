"""An SDK stream helper's snapshot of a call differs from the fragments the stream carried.

What it checks:
    In a log of an SDK's high-level stream helper (the Anthropic SDK's ``messages.stream()``,
    the OpenAI SDK's ``chat.completions.stream()`` and ``responses.stream()``), every event that
    restates a call so far (``input_json.snapshot``, the ``content_block`` of
    ``content_block_stop``, ``tool_calls.function.arguments.delta``/``.done`` ``arguments`` and
    ``parsed_arguments``, ``response.function_call_arguments.delta`` ``snapshot``, the tool calls
    of openai-python's ``chunk`` ``snapshot``) must equal the call's fragments joined up to that
    event: text compared as text; a parsed value compared with what the SDKs' partial parse
    (jiter ``from_json(buffer, partial_mode=True)``: complete values and opened containers, an
    unfinished string or literal left out) gives for the fragments so far, and the completed
    call's parsed value with the whole text parsed. Text snapshots of
    the other blocks (the Anthropic SDK's ``text``, ``thinking`` and ``signature`` events and its
    built text and thinking blocks, openai-python's ``content.delta`` and the content of its
    ``chunk`` ``snapshot``) must have the length of the block's deltas so far and end with the
    latest one. The first disagreement of each call or block is reported. To stay linear, each
    snapshot is checked where it differs from the one before (its length, its new end, the values
    completed since); the completed call's restatement is compared whole, once.

Why it matters:
    Applications take the helper's snapshot (the built ``content_block``, ``parsed_arguments``,
    ``get_final_message()``) and run the tool with it. When it differs from what the stream
    carried, the SDK stitched the stream differently from its own wire protocol (a reused block
    index, fragments without an index, a call merged into another), and the tool runs with an
    input the model never sent.

Severity:
    error. The log itself proves it: the helper reported, at this line, an input that the
    fragments before it do not make, so the application held a wrong call.

Example:
    {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","name":"get_local_time",…}}
    {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"timezone\": \"Asia/Tokyo\"}"}}
    {"type":"input_json","partial_json":"{\"timezone\": \"Asia/Tokyo\"}","snapshot":{"location":"Tokyo, Japan"}}

How to fix:
    Find what the stream does that the SDK's accumulator does not expect (stream-doctor's other
    findings on the same capture usually name it) and fix it at the source; until then, do not
    run tools from the helper's snapshot: join the deltas per block or call yourself.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import HelperSnapshotDiffers
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.util.wording import excerpt, preview
from stream_doctor.values.findings import Finding, Severity


@rule(
    "An SDK stream helper's snapshot of a call differs from the fragments the stream carried",
    Severity.ERROR,
    reads=(HelperSnapshotDiffers,),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for problem in problems(stream, self):
        if problem.call is None:
            yield _text_block(stream, self, problem)
            continue
        call = stream.calls[problem.call]
        reported = problem.reported
        joined = excerpt(problem.accumulated, 60) if problem.accumulated.strip() else "nothing yet"
        shown = excerpt(reported, 60) if isinstance(reported, str) else preview(reported, 60)
        yield self.finding(
            stream,
            problem.pos,
            f"{call.label}: the SDK helper's {problem.field} is {shown} here, but the call's fragments "
            f"so far join to {joined}; the application held an input the "
            "stream did not carry",
            "Find what the stream does that the SDK's accumulator does not expect (see the other findings) "
            "and fix it at the source; meanwhile join the deltas per call instead of trusting the snapshot",
            [("call started", call.started)],
            call,
        )


def _text_block(stream: AccumulatedStream, self: Rule, problem: HelperSnapshotDiffers) -> Finding:
    """A text or thinking block: the helper's text so far against the length and last delta the wire gave."""
    where = f"{problem.block_type} block" + (f" {problem.block_index}" if problem.block_index is not None else "")
    reported = problem.reported
    size = len(reported) if isinstance(reported, str) else 0
    tail = excerpt(problem.accumulated, 40, tail=True) if problem.accumulated else "nothing"
    return self.finding(
        stream,
        problem.pos,
        f"{where}: the SDK helper's {problem.field} is {excerpt(reported, 60, tail=True)} ({size} characters) here, but the "
        f"block's deltas so far carry {problem.length} characters ending in {tail}; the application showed or "
        "kept a text the stream did not carry",
        "Find what the stream does that the SDK's accumulator does not expect (see the other findings) "
        "and fix it at the source; meanwhile join the text deltas per block instead of trusting the snapshot",
        [("block started", problem.started)],
    )
