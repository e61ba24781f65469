"""A call names a tool the request did not declare.

What it checks:
    Each completed client call's name must be one of the tools its request declared (or of the
    ``--tools`` file). Server-side calls (web search, code execution, MCP) and tools the provider
    defines itself are not checked.

Why it matters:
    The client has nothing to run: depending on the framework the call is dropped silently, the
    turn fails, or a tool of a similar name runs. Names go wrong when a gateway renames tools
    (namespacing, length limits), when the tool list changed between turns, or when the model
    invents a tool.

Severity:
    error. No client has a tool to run: the call is dropped or fails the turn.

Example:
    tools   [{"name":"get_weather",…}]
    stream  tool_use "name":"get_forecast"

How to fix:
    Return an error result naming the available tools; if a gateway renames tools, map the names
    back before the client sees them.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.conversation.model import Conversation
from stream_doctor.rules.base import Rule, rule
from stream_doctor.values.findings import Finding, Severity


@rule("A call names a tool the request did not declare", Severity.ERROR)
def check(conversation: Conversation, self: Rule) -> Iterator[Finding]:
    for turn, call, tools in conversation.checked_calls:
        name = call.name or ""
        if name in tools or name in turn.facts.provider_tools:
            continue
        declared = ", ".join(sorted(tools)[:8]) + (" …" if len(tools) > 8 else "")
        source = f"turn {turn.number}'s request" if turn.facts.tools else "the --tools file"
        yield self.finding_at(
            conversation.stream_location(turn.number, call.started),
            f"the stream calls {name!r} ({call.call_id or 'no id'}), which {source} does not declare "
            f"(declared: {declared})",
            "Return an error result listing the available tools; map renamed tools back before the client sees them",
            [("call completed", conversation.stream_location(turn.number, call.ended))],
            call.call_id,
        )
