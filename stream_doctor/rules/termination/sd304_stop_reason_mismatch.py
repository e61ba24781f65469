"""The turn's stop reason disagrees with the tool calls in it.

What it checks:
    ``stop_reason: "tool_use"`` with no client tool call in the message; or client tool calls
    (Anthropic ``tool_use`` blocks) in a message that ends with another reason
    (``end_turn``, ``stop_sequence``, ``max_tokens``, ``refusal`` …).

Why it matters:
    Agents gate execution on the stop reason: ``if stop_reason == "tool_use"``. A mismatch makes
    them skip calls the model made, or wait for calls that do not exist (ollama #7963). After
    ``max_tokens`` completed calls may be fine but the turn was cut.

Severity:
    warning. Loops that continue only on the tool-call stop reason (the Anthropic SDK's
    ``tool_runner``, hand-written ``if stop_reason == "tool_use"``) skip or wait for calls; clients
    that look at the blocks read the message right.
    What if the request asked for this? A request that forces a tool (OpenAI ``tool_choice``
    naming a function or ``required``, Anthropic ``any``/``tool``, Bedrock ``toolChoice``, Gemini mode
    ``ANY``) gets its calls with whatever stop reason the server uses for them: OpenAI answers a
    forced function with ``finish_reason: "stop"``, and vLLM copies that on purpose. Calls with a
    forced tool and another stop reason are info: the application asked for them.

Example:
    content_block_start {"type":"tool_use",…}  …  message_delta {"stop_reason":"end_turn"}

How to fix:
    Decide from the content which calls to run (and check each completed); use the stop reason
    only to tell whether the turn ended normally.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.requested import request_of
from stream_doctor.values.findings import Finding, Severity


@rule("The stop reason disagrees with the tool calls in the message", Severity.WARNING)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for message in stream.messages:
        reason = message.stop_reason
        category = message.stop_category
        if reason is None or message.error is not None:
            continue
        calls = stream.calls
        if category == "tool_calls":
            # the common case (a turn that calls tools) builds no list: only a message without a client call is wrong
            if not any(not calls[i].server_side for i in message.calls):
                yield self.finding(
                    stream,
                    message.stop_reason_pos,
                    f"stop reason {reason} says the turn waits for tool results, but the message has no client "
                    "tool call",
                    "Decide which calls to run from the content, not the stop reason",
                )
            continue
        completed = [calls[i] for i in message.calls if not calls[i].server_side and calls[i].status == "complete"]
        if message.stop_reason_pos is not None:
            # A call that started after the stop reason was sent (OpenAI Chat: after its choice's
            # finish_reason) is SD531's: the reason was given before the call existed.
            completed = [c for c in completed if c.started.number <= message.stop_reason_pos.number]
        if category != "pause" and completed:
            names = ", ".join(c.label for c in completed)
            forced = request_of(stream).forced_tool
            if forced is not None and (forced == "any" or any(c.name == forced for c in completed)):
                yield self.finding(
                    stream,
                    message.stop_reason_pos,
                    f"the message has {len(completed)} client tool call(s) ({names}) and the stop reason {reason}, "
                    f"as servers answer a request that forces a tool ({'any tool' if forced == 'any' else forced}): "
                    "the calls are what the request asked for",
                    "Run the calls the message holds; with a forced tool, do not wait for a tool-call stop reason",
                    [("first call", completed[0].started)],
                    severity=Severity.INFO,
                )
                continue
            yield self.finding(
                stream,
                message.stop_reason_pos,
                f"the message has {len(completed)} client tool call(s) ({names}) but the stop reason is {reason}; "
                f"code that runs tools only on a tool-call stop reason skips them",
                "Decide which calls to run from the content, and check each call completed",
                [("first call", completed[0].started)],
            )
