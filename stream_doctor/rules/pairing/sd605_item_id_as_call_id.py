"""OpenAI Responses: the item id (``fc_…``) was sent where the call id (``call_…``) belongs.

What it checks:
    A ``function_call`` streams with two ids: the output item's ``id`` (``fc_…``) and the call's
    ``call_id`` (``call_…``). A ``function_call_output`` (or a ``function_call`` item sent back)
    whose ``call_id`` is the item id of a call is reported, with both ids.

Why it matters:
    The API pairs outputs with calls by ``call_id`` only and rejects the request: "No tool call
    found for function call output with call_id fc_…" (vercel/ai PR #11114). Clients that key
    their state by the item id of the streaming events make this mistake.

Severity:
    error only when the capture shows the rejection (an HTTP 4xx or an error instead of an answer);
    when the answer is not recorded, a warning that names the documented rejection. When the follow-up
    got a normal answer it is info: the request carried the call and its output under the same item id
    (posit-dev/chatlas sends its Responses history back this way with ``store: false``), the API paired
    them and answered, and no client breaks on a request the API accepted.

Example:
    response.output_item.added  {"id":"fc_68…","type":"function_call","call_id":"call_6W…"}
    next request input          {"type":"function_call_output","call_id":"fc_68…","output":"…"}

How to fix:
    Key calls by ``call_id`` and send it back in ``function_call_output.call_id``; the item id
    only names the item (``item_reference``).
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.conversation.model import Conversation
from stream_doctor.conversation.pairing_problems import ItemIdAsCallId
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.pairing._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("The Responses item id (fc_…) was sent where the call id (call_…) belongs", Severity.ERROR, reach=None)
def check(conversation: Conversation, self: Rule) -> Iterator[Finding]:
    def message(problem: ItemIdAsCallId) -> str:
        what = "function_call_output" if problem.what == "result" else "function_call sent back"
        return (
            f"turn {problem.at.turn}'s {what} ({problem.at.request_path}) names {problem.name or 'the call'} by "
            f"its item id {problem.item_id} instead of its call_id {problem.proper_call_id}: the API answers "
            f'"No tool call found for function call output with call_id {problem.item_id}"'
        )

    return problems_of(
        conversation,
        self,
        ItemIdAsCallId,
        message,
        "Key calls by call_id (not the fc_ item id) and send it back in function_call_output.call_id",
        rejection="shown",
    )
