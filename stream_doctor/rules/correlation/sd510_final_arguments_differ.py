"""The completion event restates a call's arguments differently from its fragments.

What it checks:
    Some APIs restate the whole input when a call completes: OpenAI Responses
    ``response.function_call_arguments.done`` (and the other ``….done`` events), the AI SDK's
    ``tool-input-available`` and the v4 ``9:`` part. The restated input must equal what the
    fragments of the call joined into (text compared as text, parsed values as values). Restated
    text that differs is an error; a restated parsed value that differs is a warning, because the
    AI SDK restates the input after the tool's schema validated it (defaults, transforms, repairs).

Why it matters:
    Clients differ in which one they use: openai-python's stream helpers and LM-Studio-style
    clients take the ``.done`` text, the AI SDK takes ``output_item.done``, hand-written loops
    join the deltas. When the two disagree, a fragment was lost, duplicated or reordered on the
    way, and the same stream runs a different tool call depending on the client.

Severity:
    error. The provider's own completion event contradicts its deltas: openai-python's stream
    helpers use the ``.done`` text and hand-written loops the deltas, so the same bytes run two
    different calls.
    What if the request asked for this? Nothing a request sets makes restated text differ from its
    fragments: a forced tool, ``parallel_tool_calls`` or a token limit change which calls come and
    where they stop, not what the completion event repeats. A restated *value* that differs is a
    warning, not an error: the AI SDK restates the input after the application's own tool schema
    parsed it (defaults, transforms, a repair), which the application configured.

Example:
    response.function_call_arguments.delta {"output_index":0,"delta":"{\"city\":\"Par"}
    response.function_call_arguments.delta {"output_index":0,"delta":"is\"}"}
    response.function_call_arguments.done  {"output_index":0,"arguments":"{\"city\":\"Paris, FR\"}"}

How to fix:
    Find what altered the stream (a proxy that drops or re-chunks events, a gateway translating
    another provider). In the client, take one source and check it against the other instead of
    trusting either silently.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import FinalDiffers
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.util.wording import excerpt, preview
from stream_doctor.values.findings import Finding, Severity


@rule(
    "The completion event restates a call's input differently from its fragments", Severity.ERROR, reads=(FinalDiffers,)
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for problem in problems(stream, self):
        call = stream.calls[problem.call]
        final = problem.final
        text = isinstance(final, str)
        restated = excerpt(final, 60) if text else preview(final, 60)
        # Restated text (Responses `.done`) must equal the fragments byte for byte. A restated
        # *value* (AI SDK tool-input-available, v4 `9:`) is the input after the tool's schema
        # parsed it, so defaults, transforms or a repair can legitimately change it: a warning.
        note = "" if text else " (the SDK restates the input after schema validation: defaults or a repair change it)"
        yield self.finding(
            stream,
            problem.pos,
            f"{call.label}: the completion event restates the input as {restated}, but its "
            f"{call.fragment_count} fragments join to {excerpt(problem.streamed, 60)}; a client that "
            f"joins the deltas and one that takes the restated input run different calls{note}",
            "A fragment was lost, duplicated or reordered on the way: find the proxy or translator that "
            "altered the stream, and make the client check one source against the other",
            [("call started", call.started)]
            + ([("last fragment", call.fragment_positions[-1])] if call.fragment_positions else []),
            call,
            severity=None if text else Severity.WARNING,
        )
