"""A call got no result: the next request neither answers it nor, for one sent back, answers it right after.

What it checks:
    Each client tool call a turn streamed must be answered by the next request of the same
    conversation (matched by id, or by name and order where the protocol has no ids), and each
    call an assistant turn sends back must have its result where the provider wants it: right
    after it (Anthropic, Bedrock, Gemini), in the ``tool`` messages before the next assistant or
    user message (OpenAI, Mistral, Cohere), anywhere later (Responses). Server-side calls, calls
    the stream abandoned and a request that starts another conversation are not checked, and
    neither is a call whose arguments the next request carries as an assistant message's text
    (a structured-output tool: the request made its arguments the answer, and every API accepts
    that conversation).

Why it matters:
    The provider rejects the request: Anthropic "tool_use ids were found without tool_result
    blocks immediately after", OpenAI "An assistant message with 'tool_calls' must be followed by
    tool messages responding to each 'tool_call_id'". When the client drops the call instead, the
    model never learns what happened and may call it again (claude-code #1237).

Severity:
    error when the follow-up was rejected or its answer is not recorded (OpenAI and Anthropic
    document a 400); info when the capture shows the provider accepted the request with a
    normal answer: nothing broke, and no client breaks on a request the API accepted.

Example:
    turn 1 streams   tool_use toolu_01B… get_time
    turn 2 sends     assistant [tool_use toolu_01A…, tool_use toolu_01B…]
                     user      [tool_result toolu_01A…]          (nothing for toolu_01B…)

How to fix:
    Send a result for every call, an error result (``is_error``) when the tool failed or was
    not run, in the place the provider requires.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.conversation.model import Conversation
from stream_doctor.conversation.pairing_problems import CallWithoutResult
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.pairing._problems import call_label, problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("A tool call has no result in the next request", Severity.ERROR, reach=None)
def check(conversation: Conversation, self: Rule) -> Iterator[Finding]:
    def message(problem: CallWithoutResult) -> str:
        turn = problem.at.turn
        if problem.where == "stream":
            return (
                f"{call_label(problem.name, problem.call_id)}, streamed in turn {problem.turn}, has no result in turn {turn}'s "
                f"request, which carries on the same conversation"
            )
        return (
            f"turn {turn}'s request sends back {call_label(problem.name, problem.call_id)} with no result for it: "
            f"{PLACEMENT.get(problem.family, 'each call needs a result')}; the provider rejects the request"
        )

    return problems_of(
        conversation,
        self,
        CallWithoutResult,
        message,
        "Answer every call (with an error result when the tool did not run) in the place the provider requires",
        rejection="documented",
    )


#: Where each request family wants a call's result.
PLACEMENT = {
    "anthropic": "each tool_use needs a tool_result in the user message right after it",
    "bedrock": "each toolUse needs a toolResult in the user message right after it",
    "gemini": "each functionCall needs a functionResponse in the next content",
    "openai-chat": "each tool_call needs a tool message before the next assistant or user message",
    "responses": "each function_call item needs a function_call_output",
}
