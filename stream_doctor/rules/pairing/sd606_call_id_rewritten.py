"""A call was sent back with another id than the one it streamed with.

What it checks:
    The calls a turn streamed are found again in the assistant turn the next request sends
    back. When one is there under a different id (same name, same place), something between the
    provider and the history rewrote it: a prefix added by a gateway or an SDK, an id replaced
    by a client's own. The finding shows both ids and how they differ.

Why it matters:
    Results then carry the rewritten id. Within one request that may still pair, but the
    provider's own records (Responses ``previous_response_id``, server-side caches, Bedrock
    traces) know the original id, and a client that looks results up by the streamed id finds
    none: the call looks unanswered and is run again (CLIProxyAPI #5692, codex #42088).

Severity:
    warning. The request may still pair, but clients that look results up by the streamed id find
    none (CLIProxyAPI #5692, codex #42088).
    What if the request asked for this? The request here is the application's own next request: the
    finding is about what it sent back, which no provider setting asks for.

Example:
    streamed    tool_use  "id":"toolu_01A…"
    sent back   tool_use  "id":"gw_toolu_01A…"

How to fix:
    Keep ids as the provider sent them end to end; if a gateway must namespace ids, undo it on
    the way back.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.conversation.model import Conversation
from stream_doctor.conversation.pairing_problems import CallIdRewritten
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.pairing._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("A call was sent back with another id than it streamed with", Severity.WARNING, reach=1)
def check(conversation: Conversation, self: Rule) -> Iterator[Finding]:
    return problems_of(
        conversation,
        self,
        CallIdRewritten,
        lambda problem: (
            f"{problem.name} streamed as {problem.streamed} is sent back in turn "
            f"{problem.at.turn}'s request ({problem.at.request_path}) as {problem.echoed}: "
            f"{relation(problem.streamed, problem.echoed)}"
        ),
        "Keep call ids exactly as the provider streamed them; undo any gateway prefix before the history is sent",
    )


def relation(streamed: str, echoed: str) -> str:
    """How the id was rewritten: a gateway's prefix or suffix, a truncation, or a new id."""
    if echoed.endswith(streamed):
        return f"a prefix {echoed[: len(echoed) - len(streamed)]!r} was added"
    if echoed.startswith(streamed):
        return f"a suffix {echoed[len(streamed) :]!r} was added"
    if streamed.endswith(echoed) or streamed.startswith(echoed):
        return "it was shortened"
    return "it was replaced"
