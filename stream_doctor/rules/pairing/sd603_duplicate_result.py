"""A request carries two results for the same call id.

What it checks:
    Within one request, each call id may be answered once. Reported at the second result (when it
    is one the request adds to the history).

Why it matters:
    OpenAI rejects the request ("Duplicate value for tool_call_id"), Anthropic too; others take
    one of the two, so the model may see a stale result. Duplicates come from retries that append
    a result again, or from ids a gateway reuses across responses (SD607).

Severity:
    error when the follow-up was rejected or its answer is not recorded ("Duplicate value for
    tool_call_id"); info when the capture shows the provider accepted it with a normal answer:
    nothing broke, and no client breaks on a request the API accepted.

Example:
    {"role":"tool","tool_call_id":"call_A","content":"15C"}
    {"role":"tool","tool_call_id":"call_A","content":"16C"}

How to fix:
    Replace a result on retry instead of appending another; keep call ids unique across the
    conversation.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.conversation.model import Conversation
from stream_doctor.conversation.pairing_problems import DuplicateResult
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.pairing._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("A request carries two results for one call id", Severity.ERROR, reach=1)
def check(conversation: Conversation, self: Rule) -> Iterator[Finding]:
    return problems_of(
        conversation,
        self,
        DuplicateResult,
        lambda problem: (
            f"turn {problem.at.turn}'s request answers {problem.call_id} a second time ({problem.at.request_path}); the "
            f"first result is at {problem.first}"
        ),
        "Send one result per call: replace a result on retry instead of appending another",
        rejection="documented",
    )
