"""Several calls in one turn share a name and none of them has an id.

What it checks:
    Within one message, two or more client tool calls with the same name and no call id (Gemini
    ``functionCall`` parts, whose ``id`` is optional and absent in every captured stream; Ollama
    servers before call ids). Only their order tells them apart.

Why it matters:
    stream-doctor keeps each call by its own position, so nothing is lost here. A client that keys
    calls, or their results, by name keeps one and drops the others, or answers two calls with one
    result; parallel calls are "dropped because they share a name or have no id" (wire-formats §9.2,
    bug 8). Gemini pairs each ``functionResponse`` with its call by name and order.

Severity:
    info. Gemini documents calls without ids, answered by name and order; only clients that key
    calls or results by name lose one.

Example:
    {"functionCall":{"name":"getWeather","args":{"location":"Boston"}}}
    {"functionCall":{"name":"getWeather","args":{"location":"San Francisco"}}}

How to fix:
    Keep the calls in a list in stream order, never in a map keyed by name, and send one
    ``functionResponse`` per call back in the same order (with the call's ``id`` when it has one).
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream, ToolCall
from stream_doctor.rules.base import Rule, rule
from stream_doctor.util.wording import preview
from stream_doctor.values.findings import Finding, Severity


@rule("Calls in one turn share a name and have no id", Severity.INFO)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for message in stream.messages:
        groups: dict[str, list[ToolCall]] = {}
        for ordinal in message.calls:
            call = stream.calls[ordinal]
            if call.call_id is None and call.name and not call.server_side:
                groups.setdefault(call.name, []).append(call)
        for name, calls in groups.items():
            if len(calls) < 2:
                continue
            numbers = ", ".join(str(c.ordinal + 1) for c in calls)
            kept, lost = calls[-1], calls[:-1]
            lost_text = ", ".join(_args(c) for c in lost[:3]) + (f" and {len(lost) - 3} more" if len(lost) > 3 else "")
            yield self.finding(
                stream,
                calls[1].started,
                f"{len(calls)} calls of {name} in this turn (calls {numbers}) have no id, so only their order tells "
                f"them apart: a client that keys calls or their results by name keeps one, e.g. "
                f"{{{preview(name)}: {_args(kept)}}}, and loses {lost_text}",
                "Keep calls in a list in stream order and answer each with its own result, in the same order",
                [(f"call {c.ordinal + 1}", c.started) for c in calls],
                calls[1],
            )


def _args(call: ToolCall) -> str:
    return preview(call.arguments, 50) if call.parse_failure is None and call.status == "complete" else "(incomplete)"
