"""The turn was paused (``stop_reason: "pause_turn"``) and must be continued.

What it checks:
    A message that ends with ``pause_turn``: a long-running server-tool turn (web search, web
    fetch, code execution) that the API paused.

Why it matters:
    The turn is not finished. The client must send the assistant content back unchanged in a new
    request to let it continue; ending the turn there, or dropping the server tool blocks, gives a
    400 such as "web_search tool use with id … was found without a corresponding web_search_tool_result
    block" (pydantic-ai PR #3051).

Severity:
    info. ``pause_turn`` is documented Anthropic behaviour; code that treats it as the end of the
    turn mishandles it.

Example:
    message_delta {"delta":{"stop_reason":"pause_turn"}}

How to fix:
    On ``pause_turn`` send a follow-up request with the assistant message as received (server tool
    blocks and their results included) and no new user content.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.values.findings import Finding, Severity


@rule("The turn was paused and must be continued with a follow-up request", Severity.INFO, needs="paused-message")
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for message in stream.messages:
        if message.stop_category == "pause":
            calls = [stream.calls[i] for i in message.calls]
            yield self.finding(
                stream,
                message.stop_reason_pos,
                f"the turn was paused after {len(calls)} server tool call(s); it is not finished",
                "Send the assistant content back unchanged in a new request to continue the turn",
            )
