"""A streamed call's input came only in its completion event, with no delta.

What it checks:
    Calls whose protocol streams the input in delta events (Responses ``function_call``,
    ``custom_tool_call``, ``mcp_call``, ``apply_patch_call``, ``code_interpreter_call``) but
    whose input arrived whole in the ``….done`` event (or ``output_item.done``), with no delta
    before it.

Why it matters:
    Harmless for a client that takes the input from the completion event. A client that builds
    the input only from deltas (a common hand-written loop, and accumulators modelled on
    Chat Completions) has an empty string: it runs the tool with ``{}`` or fails to parse.
    LM Studio's Responses endpoint streams calls this way; so do some translating gateways
    (lidge-jun/opencodex PR #4652).

Severity:
    info. No widely used client is known to break on it: openai-python's stream helper and the AI SDK
    take the input from the completion event (the AI SDK's open-responses provider keeps an LM Studio
    capture of this shape as a test fixture), and LM Studio's Responses endpoint streams every call
    so. Only hand-written loops that build the input from ``function_call_arguments.delta`` alone
    have an empty string: a hazard of naive code, not a deviation that breaks a named client.
    What if the request asked for this? No request setting asks for the arguments to arrive only in
    the completion event; some servers do it always.

Example:
    response.output_item.added {"output_index":2,"item":{"type":"function_call","arguments":"",…}}
    response.function_call_arguments.done {"output_index":2,"arguments":"{\"location\":\"San Francisco\"}"}

How to fix:
    When a call completes with no delta, take its input from the completion event; better, always
    prefer the completion event's text and check the joined deltas against it.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.problem_facts import ArgumentsWithoutDeltas
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule(
    "A streamed call's input came only in its completion event, with no delta",
    Severity.INFO,
    reads=("arguments-without-deltas",),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        "Take the input from the completion event when no delta came, and prefer it over joined deltas",
        words=(ArgumentsWithoutDeltas, whole_in_completion),
    )


def whole_in_completion(facts: ArgumentsWithoutDeltas) -> str:
    item = facts.item
    return (
        f"{item.item_type} {item.name or '?'} ({item.call_id or 'no id'}): no delta event came; its input "
        f"({facts.size} characters) arrived only in {facts.event}; a client that builds the input from deltas "
        f"has an empty string and runs the tool with {{}} or fails to parse it"
    )
