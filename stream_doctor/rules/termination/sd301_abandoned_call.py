"""A tool call started and never completed.

What it checks:
    Every call must reach its completion event (Anthropic: ``content_block_stop`` for its index)
    before its message ends. The cause is named: ``max-tokens`` (the stop reason cut the input),
    ``error-event`` (an in-stream error ended the stream), ``stream-cut`` (the capture ends with no
    ``message_stop``), ``new-message`` (another ``message_start`` arrived: a spliced or retried
    stream), ``message-stop`` (the message ended without stopping the block), ``index-reused``.

Why it matters:
    Its input is partial. Run, it executes a truncated command or a ``{}``-repaired one (humux #77,
    hermes-agent #81017); dropped without a trace, the agent silently loses a step
    (lingtai-kernel #753).

Severity:
    error. The call's completion never came and the capture shows why: a token limit or content
    filter, an error event, a new message, or a stream cut with the call open. A stream that ends
    with ``[DONE]`` after complete arguments but no ``finish_reason`` is not this rule: the official
    clients hand those calls over, and the missing reason is SD530. Nor is a choice without a
    ``finish_reason`` at the end of a log of parsed Chat Completions chunks (a JSON array such as a
    syrupy snapshot, JSON Lines): such a log cannot hold ``[DONE]``, so its end cannot tell a cut from
    a server that sends no finish_reason after a call (text-generation-inference 3.x with a forced
    tool: ``router/src/chat.rs``'s ``ChatState`` drops the last token, which carries the finish
    reason, once the call's JSON closes; huggingface/text-generation-inference #2794 asks for
    ``tool_calls``). There, as at ``[DONE]``, LangChain, LiteLLM and pydantic-ai hand the call over
    (openai-python's stream helper and the AI SDK, which wait for a finish_reason, do not: SD530
    says so), and arguments that do not parse are SD201.
    What if the request asked for this? A forced tool (``tool_choice``) explains the call, not an
    incomplete one; a token limit (``max_tokens``) that cut it is named as the cause.

Example:
    content_block_delta  {"partial_json":"{\\"filename\\": \\"taxes.txt\\", \\"lines\\": [\\"…"}
    message_delta        {"stop_reason":"max_tokens"}
    message_stop

How to fix:
    Before executing, check that every call completed and that the stop reason is not
    ``max_tokens``/an error. Do not run or repair an incomplete call: raise ``max_tokens`` or ask
    the model to continue, and report the abandoned call.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.util.wording import excerpt, where
from stream_doctor.values.findings import Finding, Severity

CAUSES = {
    "max-tokens": "the turn was cut by a token limit",
    "filter": "the turn was stopped by a content filter",
    "error": "the turn ended with an error",
    "error-event": "an error event ended the stream",
    "stream-cut": "the stream ended with no completion event",
    "new-message": "a new message started in the same stream",
    "message-stop": "the message stopped without stopping the block",
    "index-reused": "another block reused its index",
}


@rule("A tool call started and never completed", Severity.ERROR, needs="incomplete-call")
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for call in stream.calls:
        if call.status != "abandoned":
            continue
        cause = CAUSES.get(call.abandon_cause or "", call.abandon_cause or "unknown cause")
        # In the provider's words: Anthropic's content_block_stop, OpenAI Chat's finish_reason …
        words = stream.capture.protocol.words
        if call.abandon_cause == "stream-cut":
            cause = f"the stream ended before {words.call_end}"
        elif call.abandon_cause == "message-stop":
            cause = f"{words.stream_end} came before {words.call_end}"
        reason = stream.messages[call.message].stop_reason
        if call.abandon_cause in ("max-tokens", "filter", "error") and reason:
            cause += f" (stop reason {reason})"
        if not call.raw_arguments:
            state = "the buffer is empty"
        else:
            state = f"the buffer ends {excerpt(call.raw_arguments, 50, tail=True)}"
            if call.parse_failure is None:
                state += " and parses: a parse-when-complete client would run it"
        yield self.finding(
            stream,
            call.abandon_pos or stream.last_pos,
            f"{call.label} started at {where(call.started)} and never completed: {cause}; "
            f"{call.fragment_count} fragments received, {state}",
            "Never execute or repair an incomplete call; check the stop reason and retry or continue the turn",
            [("call started", call.started)] + ([("last fragment", call.fragments[-1].pos)] if call.fragments else []),
            call,
        )
