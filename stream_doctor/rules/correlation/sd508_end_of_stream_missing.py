"""The turn finished but the stream never sent its end-of-stream marker (``data: [DONE]``).

What it checks:
    After every choice of a completion has its ``finish_reason``, an OpenAI-style SSE stream ends
    with ``data: [DONE]``. Reported when a raw SSE (or envelope) capture ends, or a next completion
    begins, without it. JSONL chunk logs (the AI SDK's ``*.chunks.txt``) never record ``[DONE]``, so
    they are not checked. A stream cut before the finish_reason is SD303's. Also reported: a
    ``[DONE]`` written with whitespace around it (``data: [DONE] ``), which this tool reads as the end
    but clients that compare the data with ``[DONE]`` exactly do not.

Why it matters:
    The calls are complete, but clients that read until ``[DONE]`` wait for it: the Azure .NET SDK
    hung on text-generation-inference streams (huggingface/text-generation-inference #1896), and
    huggingface/inference-benchmarker fails with "Connection closed before completion" against
    ik_llama.cpp (ikawrakow/ik_llama.cpp #467). openai-python and the AI SDK end quietly when the
    connection closes.

Severity:
    warning. Clients that read until ``[DONE]`` wait or fail: the Azure .NET SDKs (Azure.AI.OpenAI
    1.x, Azure.AI.Inference) read events in ``Azure.Core.Sse.SseAsyncEnumerator.EnumerateFromSseStream``,
    whose loop ends only at ``[DONE]`` or cancellation, so they hang at the close (on
    text-generation-inference: huggingface/text-generation-inference #1896, Azure/azure-sdk-for-net
    #44135); huggingface/inference-benchmarker fails. openai-python and the AI SDK end quietly at end of stream.
    A ``[DONE]`` with whitespace around it is a warning too: openai-node (``core/streaming.js``
    ``Stream.fromSSEResponse``: ``sse.data === '[DONE]'``, else ``JSON.parse``, which throws) and the AI SDK
    (``@ai-sdk/provider-utils`` ``parseJsonEventStream``: ``data === "[DONE]"``, else an error part, and
    the step ends with ``error``) parse it as a chunk and fail; openai-python (``startswith("[DONE]")``)
    and the libraries that read through it stop there. ``data: [DONE]`` exactly gets no finding.
    What if the request asked for this? No request setting removes the end-of-stream event
    (``stream_options`` adds a usage chunk before it, not instead of it).

Example:
    data: {…"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}
    <EOF, no data: [DONE]>

How to fix:
    Make the server (or proxy) send ``data: [DONE]`` after the last chunk; in the client, treat the
    finish_reason as the end of the turn and a connection close after it as normal.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.problem_facts import EndOfStreamInexact, EndOfStreamMissing
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.values.findings import Finding, Severity
from stream_doctor.values.protocol import records_sentinel


@rule(
    "The turn finished but data: [DONE] never came",
    Severity.WARNING,
    reads=("end-of-stream-inexact", "end-of-stream-missing"),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    if not records_sentinel(stream.capture.container, stream.capture.header):
        return
    for problem in problems(stream, self):
        if problem.kind == "end-of-stream-inexact" and isinstance(problem.facts, EndOfStreamInexact):
            yield self.finding(
                stream,
                problem.pos,
                inexact(problem.facts),
                "Make the server send the sentinel exactly as data: [DONE], without whitespace around it",
            )
        if problem.kind == "end-of-stream-missing":
            facts = problem.facts
            ended = (
                missing(facts, stream.capture.protocol.words.stream_end)
                if isinstance(facts, EndOfStreamMissing)
                else problem.message
            )
            yield self.finding(
                stream,
                problem.pos,
                f"{ended}: clients that read until [DONE] wait for it (the Azure .NET SDKs' "
                "SseAsyncEnumerator.EnumerateFromSseStream loops until it, and hung on text-generation-inference) "
                'or fail ("Connection closed before completion"); '
                f"openai-python and the AI SDK end quietly at the close",
                "Make the server send data: [DONE] after the last chunk; treat the finish_reason as the end of the turn",
            )


def missing(facts: EndOfStreamMissing, end_of_stream: str) -> str:
    why = (
        "the capture ends"
        if facts.next_completion is None
        else f"completion {facts.next_completion} begins at line {facts.next_line}"
    )
    if not facts.reasons:
        # no choice sent a finish_reason: the stream ended with its usage chunk (SD530 says the rest)
        last = "the usage chunk (choices: [])" if facts.after_usage else "the last chunk"
        return f"{last} was not followed by {end_of_stream} ({why})"
    return f"finish_reason {', '.join(facts.reasons)} was not followed by {end_of_stream} ({why})"


def inexact(facts: EndOfStreamInexact) -> str:
    """Which profiled libraries stop at this sentinel and which parse it as a chunk, by the profiles'
    own test of the sentinel (``clients.framing``), so the finding and ``--client`` agree."""
    from stream_doctor.clients.framing import SENTINEL_READERS, ends_reading

    data = facts.data.encode("ascii")
    stop = [name for name, sentinel in SENTINEL_READERS.items() if ends_reading(sentinel, data)]
    fail = [name for name, sentinel in SENTINEL_READERS.items() if not ends_reading(sentinel, data)]
    said = f"the end-of-stream event is data: {facts.data!r}, with whitespace around [DONE]"
    if not fail:
        return f"{said}; {', '.join(stop)} stop there"
    stopped = f"; {', '.join(stop)} stop there" if stop else ""
    return (
        f"{said}: {', '.join(fail)} compare the data with '[DONE]' exactly and parse it as a JSON chunk, "
        f"which fails (an exception, or an error part that ends the AI SDK's step){stopped}"
    )
