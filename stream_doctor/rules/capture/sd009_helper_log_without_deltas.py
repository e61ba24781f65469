"""An SDK helper-stream log leaves out the raw delta events: its fragments could not be checked.

What it checks:
    A log of the Anthropic SDK's ``messages.stream()`` holds, after every raw
    ``content_block_delta``, the helper's own event built from it (``input_json``, ``text``,
    ``thinking``, ``signature``, ``citation``; anthropic-sdk-python ``build_events``). A helper
    event that does not follow its raw delta, or a ``content_block_stop`` whose built tool block has
    another input than its start event and no delta before it, shows that the application logged
    only the helper's events. The same for a log of openai-python's ``chat.completions.stream()``
    that holds its ``tool_calls.function.arguments.*`` events but no ``chunk`` event: each call is
    rebuilt from them (fragments from ``arguments_delta``, the input restated by ``.done``) instead
    of being dropped. Reported once per capture.

Why it matters:
    Nothing the provider sent is shown to be wrong: the SDK built the block from the deltas and
    handed the application its input. But stream-doctor sees no fragment, so the fragment-level
    checks (premature parse, unparseable buffers, the helper's snapshots against the stream) could
    not run; each call's input is taken from the built block (restated, not streamed) rather than
    replayed as ``{}``.

Severity:
    info. The SDK itself handed the application the built input; the note is about what the log
    holds, not about the provider or a client.

Example:
    {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","input":{},…}}
    {"type":"input_json","partial_json":"{\"location\": ","snapshot":{}}
    {"type":"content_block_stop","index":1,"content_block":{"type":"tool_use","input":{"location":"Lisbon"},…}}

How to fix:
    Log every event the helper yields (the raw ``content_block_delta`` and ``chunk`` events too), or record the
    HTTP stream itself (``stream-doctor record``), so the fragments can be checked.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.problem_facts import HelperLogWithoutDeltas
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule(
    "An SDK helper-stream log leaves out the raw delta events (fragments not checked)",
    Severity.INFO,
    reads=("helper-log-without-deltas",),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        "Log every event the helper yields, raw deltas included, or record the HTTP stream itself",
        words=(HelperLogWithoutDeltas, without_deltas),
    )


def without_deltas(facts: HelperLogWithoutDeltas) -> str:
    if facts.raw == "chunk":
        return (
            f"this {facts.event} event comes with no chunk: the log holds openai-python's helper events without "
            "the raw chunks they were built from, so the call ids and finish reasons are not known and the "
            "chunk-level checks could not run; each call is rebuilt from the helper's arguments events (its "
            "fragments from arguments_delta, its input restated by .done)"
        )
    return (
        f"this {facts.event} event follows no raw delta: the log holds the SDK helper's events without the raw "
        "deltas they were built from, so the fragment-level checks could not run; each call's input is taken "
        "from the helper's built block (restated, not streamed)"
    )
