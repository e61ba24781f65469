"""A tool result is not where the provider requires it.

What it checks:
    Anthropic: a ``tool_result`` must be in the user message right after the assistant message
    with its ``tool_use``, before any other block of that message. Bedrock Converse: the
    ``toolResult`` in the user message right after the ``toolUse``. OpenAI, Mistral, Cohere: the
    ``tool`` message for each ``tool_call_id`` must come before the next assistant or user
    message. Gemini: the ``functionResponse`` in the content right after the ``functionCall``.
    Responses: the ``function_call_output`` after its ``function_call`` item, or a
    ``previous_response_id`` that holds the call. A result whose call was streamed but never sent
    back is misplaced too (stateless APIs need the call before its result).

Why it matters:
    The provider rejects the request with a 400 (Anthropic: "tool_use ids were found without
    tool_result blocks immediately after"), or, for lenient servers, pairs results with the
    wrong calls.

Severity:
    error when the follow-up was rejected or its answer is not recorded (Anthropic documents a 400);
    info when the capture shows the provider accepted it with a normal answer: nothing broke, and
    no client breaks on a request the API accepted.

Example:
    user      [{"type":"text","text":"here you go"}, {"type":"tool_result","tool_use_id":"toolu_01A…"}]

How to fix:
    Put the results right after the assistant turn that made the calls, tool results first, in
    the order of the calls; send the assistant turn back before its results.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.conversation.model import Conversation
from stream_doctor.conversation.pairing_problems import ResultMisplaced
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.pairing._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("A tool result is not where the provider requires it", Severity.ERROR, reach=None)
def check(conversation: Conversation, self: Rule) -> Iterator[Finding]:
    return problems_of(
        conversation,
        self,
        ResultMisplaced,
        lambda problem: (
            f"turn {problem.at.turn}'s result for {problem.call_id} ({problem.at.request_path}) is misplaced: {why(problem)}"
        ),
        "Send the assistant turn with the calls, then its results right after it, tool results first",
        rejection="documented",
    )


def why(problem: ResultMisplaced) -> str:
    """Which of its family's placement rules the result breaks."""
    if problem.why == "after-other-content":
        return "another block comes before it; tool_result blocks must come first in the message"
    if problem.why == "item-not-sent-back":
        return "its function_call item was not sent back, and the request has no previous_response_id"
    if problem.why == "call-not-sent-back":
        return f"the assistant turn with its call (streamed in turn {problem.turn}) was not sent back before it"
    call_path = problem.call_path
    return {
        "anthropic": f"it is not in the user message right after its tool_use ({call_path})",
        "bedrock": f"it is not in the user message right after its toolUse ({call_path})",
        "gemini": f"it is not in the content right after its functionCall ({call_path})",
        "openai-chat": f"a user or assistant message comes between it and its tool_call ({call_path})",
        "responses": f"it comes before its function_call item ({call_path})",
    }.get(problem.family, f"it is not where its call ({call_path}) wants it")
