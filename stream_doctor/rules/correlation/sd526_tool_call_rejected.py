"""The provider ended the turn because it rejected the tool call the model produced.

What it checks:
    A finish reason saying the model's tool call was refused: Gemini ``MALFORMED_FUNCTION_CALL``,
    ``UNEXPECTED_TOOL_CALL``, ``TOO_MANY_TOOL_CALLS`` (with its ``finishMessage``), Bedrock
    ``malformed_tool_use`` and ``malformed_model_output``.

Why it matters:
    The HTTP status was 200 and the stream ended normally, but the turn carries no usable call:
    Gemini sends no ``functionCall`` part at all, Bedrock may leave a partial tool block. A client
    that only looks at the calls sees an empty answer and stops; one that maps every unknown
    reason to "stop" hides the failure.

Severity:
    error. The provider says it rejected the model's tool call: the turn carries no usable call.

Example:
    {"candidates":[{"content":{"parts":[]},"finishReason":"MALFORMED_FUNCTION_CALL",
     "finishMessage":"Malformed function call: print(default_api.get_weather(city=Paris))"}]}

How to fix:
    Treat the turn as failed: do not run any partial call, retry (Gemini's ``finishMessage`` shows
    what the model tried), and check the tool declarations and ``toolConfig``.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.problem_facts import ToolCallRejected
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule(
    "The provider ended the turn because it rejected the model's tool call",
    Severity.ERROR,
    reads=("tool-call-rejected",),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        "Treat the turn as failed: run no partial call, retry, and check the tool declarations and tool config",
        "{message}; the turn carries no call that can be run",
        words=(ToolCallRejected, rejected),
    )


#: What each rejecting finish or stop reason means (Gemini ``FinishReason``, Bedrock ``StopReason``).
MEANINGS = {
    "MALFORMED_FUNCTION_CALL": "the model produced a function call the API could not parse",
    "UNEXPECTED_TOOL_CALL": "the model called a tool although no tool is enabled for this request",
    "TOO_MANY_TOOL_CALLS": "the model made too many tool calls in a row and the API stopped it",
    "MISSING_THOUGHT_SIGNATURE": "the request lacked a thought signature the model needed",
    "malformed_tool_use": "the model produced a tool use Bedrock could not parse",
    "malformed_model_output": "the model produced output Bedrock could not parse",
}


def rejected(facts: ToolCallRejected) -> str:
    meaning = MEANINGS.get(facts.reason, "the API rejected the model's tool call")
    return f"{facts.field} {facts.reason}: {meaning}" + (f": {facts.detail}" if facts.detail else "")
