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
from stream_doctor.findings import Finding, Severity
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of


@rule(
    "SD526",
    "tool-call-rejected",
    "The provider ended the turn because it rejected the model's tool call",
    Severity.ERROR,
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        ["tool-call-rejected"],
        "Treat the turn as failed: run no partial call, retry, and check the tool declarations and tool config",
        "{message}; the turn carries no call that can be run",
    )
