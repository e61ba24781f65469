"""A response reuses a call id an earlier response of the same capture already used.

What it checks:
    Call ids are unique across a conversation when the provider makes them (``toolu_…``,
    ``call_…``). A call streamed in a later turn with the id of a call from an earlier turn is
    reported: positional ids (``call_0``, ``tool_0``) that a gateway or a compatible server
    generates per response.

Why it matters:
    The history then holds two calls and two results with one id: the APIs reject it
    ("Duplicate value for tool_call_id") or pair the new call with the old result, and clients
    that key their state by id overwrite the first call with the second.

Severity:
    warning. Id-keyed clients overwrite the earlier call; an API may reject the duplicate.
    What if the request asked for this? No request setting asks for an id to be reused across calls.

Example:
    turn 1 streams   {"id":"call_0","function":{"name":"get_weather",…}}
    turn 2 streams   {"id":"call_0","function":{"name":"get_time",…}}

How to fix:
    Generate ids that are unique per conversation (a random suffix), in the server or gateway
    that makes them up.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.conversation.model import Conversation
from stream_doctor.conversation.pairing_problems import CallIdReused
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.pairing._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("A response reuses the id of a call from an earlier turn", Severity.WARNING, reach=None)
def check(conversation: Conversation, self: Rule) -> Iterator[Finding]:
    return problems_of(
        conversation,
        self,
        CallIdReused,
        lambda problem: (
            f"{problem.name} in turn {problem.at.turn} has the id {problem.call_id}, which turn "
            f"{problem.first_turn}'s {problem.first_name} already used: results for the two "
            f"calls cannot be told apart"
        ),
        "Make call ids unique per conversation where they are generated (a gateway's positional ids are not)",
    )
