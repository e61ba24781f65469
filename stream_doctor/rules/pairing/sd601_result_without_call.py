"""A request carries a tool result that answers no call: no earlier call has its id (or its name).

What it checks:
    Every tool result a request sends (Anthropic ``tool_result``, an OpenAI ``tool`` message,
    a Responses ``function_call_output``, a Gemini ``functionResponse``, a Bedrock
    ``toolResult``) must answer a call: one the same request sends back, or one an earlier turn
    streamed. Results are matched by id; where the protocol has no ids (Gemini calls without
    ``id``, Ollama's ``tool_name``) by name and order. A result whose id is a Responses item id
    is SD605's.

Why it matters:
    Providers reject the request: Responses answers "No tool call found for function call output
    with call_id …", Gemini "functionResponse.id does not match functionCall.id", Anthropic
    "unexpected tool_use_id found in tool_result blocks". The id usually came from another
    conversation, a retried turn, or a client that made one up.

Severity:
    error when the follow-up was rejected or its answer is not recorded (the APIs document the
    rejection); info when the capture shows the provider accepted the request with a normal
    answer: nothing broke, and no client breaks on a request the API accepted.

Example:
    turn 1 streams   tool_use toolu_01A… get_weather
    turn 2 sends     {"role":"tool","tool_call_id":"call_9","content":"15C"}

How to fix:
    Build each result from the call it answers and copy that call's id unchanged; keep results
    of one conversation out of another.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.conversation.model import Conversation
from stream_doctor.conversation.pairing_problems import ResultWithoutCall
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.pairing._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("A request carries a tool result that answers no earlier call", Severity.ERROR, reach=None)
def check(conversation: Conversation, self: Rule) -> Iterator[Finding]:
    def message(problem: ResultWithoutCall) -> str:
        turn = problem.at.turn
        if problem.by == "name":
            return (
                f"turn {turn}'s request carries a result for {problem.name!r} without an id (so it is "
                f"matched by name and order), and no call of that name is left for it to answer"
            )
        return (
            f"turn {turn}'s request carries a result for {problem.call_id}, but no call the request sends back and no "
            f"call streamed in an earlier turn has this id; the provider rejects it"
        )

    return problems_of(
        conversation,
        self,
        ResultWithoutCall,
        message,
        lambda problem: (
            "Answer each call once, under its own name, in the order of the calls"
            if problem.by == "name"
            else "Copy the id of the call being answered into its result, unchanged"
        ),
        rejection="documented",
    )
