"""A streamed Gemini call ended without the empty ``{"functionCall":{}}`` part.

What it checks:
    Vertex AI's streamed function-call arguments (``streamFunctionCallArguments``) open a call with
    ``{name, willContinue: true}``, send ``partialArgs`` pieces, and usually close it with an empty
    ``{"functionCall":{}}`` part. This reports a call whose last part is a ``partialArgs`` part
    without ``willContinue`` and no empty part follows (captured from gemini-3-flash-preview).

Why it matters:
    The call is complete: a part without ``willContinue`` ends it, and stream-doctor completes it
    there. A client that only finishes a streamed call on the empty part never emits it, or emits
    it only when the stream closes, after the finish reason has already been handled.

Severity:
    info. Gemini ends streamed calls this way in practice (the capture is gemini-3-flash-preview's),
    and the widely used client of streamed arguments reads it: the AI SDK's Google provider finalizes
    a streamed call whose last ``partialArgs`` part omits ``willContinue`` (its test "should finalize
    streamed function call arguments when the final partialArgs chunk omits willContinue" replays
    this very stream). Only a hand-written client that waits for the empty part emits the call late
    or never.
    What if the request asked for this? Gemini's streamed function-call arguments are asked for
    (``streamFunctionCallArguments``), and their terminal empty ``functionCall`` is part of what was
    asked: its absence is not.

Example:
    {"functionCall":{"partialArgs":[{"jsonPath":"$.operations[1].price","numberValue":0.3}]}}
    {"text":""} … "finishReason":"STOP"

How to fix:
    End a streamed call at the first part whose ``functionCall`` has no ``willContinue``, and treat
    the empty ``{"functionCall":{}}`` part as optional.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.problem_facts import MissingTerminalPart
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.values.findings import Finding, Severity


@rule(
    'A streamed call ended without the empty {"functionCall":{}} part',
    Severity.INFO,
    reads=("missing-terminal-function-call",),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for problem in problems(stream, self):
        facts = problem.facts
        ended = (
            f'{facts.call} ended on this part, which has no willContinue, and no empty {{"functionCall":{{}}}} part '
            f"closes it"
            if isinstance(facts, MissingTerminalPart)
            else problem.message
        )
        yield self.finding(
            stream,
            problem.pos,
            f"{ended}. The call is complete, but a client that waits for that empty part to finish a streamed "
            "call never emits it, or emits it only when the stream closes",
            'End a streamed call at the first part without willContinue; the empty {"functionCall":{}} part is optional',
        )
