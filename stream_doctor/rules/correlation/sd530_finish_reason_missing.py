"""A Chat Completions stream ended with ``data: [DONE]`` but the choice that made calls never sent a
``finish_reason``.

What it checks:
    OpenAI ends each choice with a chunk whose ``finish_reason`` is ``tool_calls`` (or ``stop`` …),
    then sends ``data: [DONE]``. Some compatible servers (older vLLM and llama.cpp builds, gateways
    that drop the last chunk) send ``[DONE]`` with no finish_reason at all. stream-doctor then
    completes the calls at ``[DONE]``, as the clients below do, and reports the missing reason here.
    A raw SSE stream that ends without ``[DONE]`` is cut, not this: its open calls are abandoned
    (SD301). A chunk log of parsed chunks (a JSON array, JSON Lines) cannot hold ``[DONE]``: its end
    is where the client stopped reading, so a choice still without a finish_reason there is this,
    not a cut (text-generation-inference 3.x with a forced tool sends no finish_reason at all). Nor
    is a raw stream whose last chunk is the usage chunk (``choices: []``), which OpenAI documents as
    sent once the whole request is over: the server ended it, and only ``[DONE]`` is missing (SD508;
    watsonx.ai's chat stream with a forced tool ends that way).

Why it matters:
    The calls are whole, and LangChain, LiteLLM and pydantic-ai hand them over at the end of the
    stream. But the turn carries no stop reason: openai-python's ``chat.completions.stream()``
    helper fires ``tool_calls.function.arguments.done`` only at a finish_reason or the next index
    (``ChoiceEventState.get_done_events``), so the last call never gets it (``get_final_completion()``
    still holds it); the AI SDK ends the step without a tool-call finish and does not run it (its
    profile); loops that continue the agent only on ``finish_reason == "tool_calls"`` stop there.

Severity:
    warning. openai-python's stream helper never fires the last call's ``arguments.done`` and the
    AI SDK does not run the calls (its 7.0.173 profile); LangChain, LiteLLM and pydantic-ai do.
    What if the request asked for this? No request setting asks for a choice without a
    finish_reason.

Example:
    data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\\"}"}}]}}]}
    data: [DONE]

How to fix:
    On the server: send a final chunk with ``finish_reason: "tool_calls"`` before ``[DONE]``. In the
    client: decide whether to run tools from the calls the stream produced, not from the stop reason.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.problem_facts import FinishReasonMissing
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule(
    "The stream ended with [DONE] but no finish_reason after its tool calls",
    Severity.WARNING,
    reads=("finish-reason-missing",),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        'Send finish_reason "tool_calls" before [DONE]; decide to run tools from the calls, not the stop reason',
        "{message}: the calls are complete (LangChain, LiteLLM and pydantic-ai hand them over at the end), but "
        "openai-python's stream helper never fires the last call's arguments.done (ChoiceEventState.get_done_events "
        'waits for a finish_reason or the next index), the AI SDK does not run them (vercel-ai 7.0.173 profile), and a loop that continues only on finish_reason "tool_calls" '
        "stops here",
        words=(FinishReasonMissing, ended),
    )


def ended(facts: FinishReasonMissing) -> str:
    calls = f"{facts.calls} tool call{'s' if facts.calls > 1 else ''}"
    if facts.at_usage_end:
        # the usage chunk comes once the request is over: the server ended the response, no [DONE] after it
        return f"choice {facts.choice} ended with the stream's usage chunk (choices: []) and no finish_reason after {calls}"
    if facts.at_log_end:
        # a chunk log (a JSON array, JSON Lines) cannot hold [DONE]: its end is where the client stopped
        return f"choice {facts.choice} ended with the chunk log (which cannot hold data: [DONE]) and no finish_reason after {calls}"
    return f"choice {facts.choice} ended with data: [DONE] and no finish_reason after {calls}"
