"""The AI SDK reported a tool call's input as invalid (``tool-input-error``).

What it checks:
    A UI message stream ``tool-input-error`` part: the server (``streamText``) could not use the
    input the model produced for a call (it did not parse, failed the tool's input schema, or
    named a tool that does not exist).

Why it matters:
    The call is final but will not run: ``useChat`` shows the part in ``output-error`` state and
    the model gets the error text as the result. A client that treats every finished call as
    runnable, or that ignores the part, runs the tool with broken input or leaves the call
    without a result.

Severity:
    warning. The AI SDK itself rejected the input; the capture shows the part in ``output-error``
    and the model gets the error as the result.
    What if the request asked for this? The tool's input error is reported by the provider about the
    request's own tool; the request did not ask for a broken input.

Example:
    data: {"type":"tool-input-start","toolCallId":"call_1","toolName":"getWeather"}
    data: {"type":"tool-input-delta","toolCallId":"call_1","inputTextDelta":"{\"city\":"}
    data: {"type":"tool-input-error","toolCallId":"call_1","toolName":"getWeather","input":"{\"city\":","errorText":"…"}

How to fix:
    Never execute a call that ended in ``tool-input-error``; let the error result go back to the
    model. If it happens often, check the tool's schema and the model's output limit.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.problem_facts import ToolInputError
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule(
    "A tool call's input was rejected as invalid (AI SDK tool-input-error)",
    Severity.WARNING,
    reads=("tool-input-error",),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        "Do not execute this call; the error goes back to the model as its result",
        words=(ToolInputError, rejected),
    )


def rejected(facts: ToolInputError) -> str:
    error = " ".join((facts.error or "(no error text)").split())
    if len(error) > 200:
        error = error[:199] + "…"
    return (
        f"{facts.tool} ({facts.call_id}): the server rejected the input the model produced: {error}; useChat "
        f"shows the call as output-error and the tool does not run"
    )
