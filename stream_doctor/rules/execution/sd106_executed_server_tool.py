"""The application executed a call that the provider runs itself.

What it checks:
    An ``execute`` record names a server-side call (Anthropic ``server_tool_use`` such as
    web_search or code_execution, or ``mcp_tool_use``).

Why it matters:
    The provider already ran it and streamed its result block; running it again on the client
    duplicates the effect, and sending a ``tool_result`` for it makes the next request fail.

Severity:
    error. The recorded execution ran a call the provider runs itself (its result block is in the
    stream): the effect happened twice.

Example:
    content_block_start {"type":"server_tool_use","id":"srvtoolu_01…","name":"web_search",...}
    execute             {"call_id":"srvtoolu_01…","name":"web_search",...}

How to fix:
    Execute only client tool calls (Anthropic ``tool_use``); pass server tool blocks and their
    results back to the provider unchanged.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.values.findings import Finding, Severity


@rule("The application executed a call the provider runs itself", Severity.ERROR, needs="server-call")
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for execution in stream.executions:
        if execution.call is None:
            continue
        call = stream.calls[execution.call]
        if call.server_side:
            yield self.finding(
                stream,
                execution.pos,
                f"{call.label} is a {call.block_type} block, run by the provider, but the application executed it",
                "Execute only client tool calls; send server tool blocks back unchanged",
                [("call started", call.started)],
                call,
                at=execution.origin,
            )
