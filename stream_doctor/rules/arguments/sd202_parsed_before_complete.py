"""A call's buffer already held a complete JSON value before the call completed.

What it checks:
    While fragments arrive, the buffer may form a whole JSON value before the completion event:
    because bytes follow the value (trailing data, a second object) or because the closing brace
    arrived fragments early. The fragment at which that happened is reported.

Why it matters:
    This is the point where "run it as soon as the buffer parses" code fires. When more
    non-blank text follows, that code executed a different call than the one the model made:
    the bug behind vercel/ai #13137, where ``{"query":"test","limit":10}`` ran as ``{"query":"test"}``.

Severity:
    warning. Harmless to clients that wait for the completion event; it breaks clients that run a
    call as soon as its buffer parses, such as the AI SDK's OpenAI-compatible chat provider, which
    emits the tool call once ``isParsableJson`` holds (vercel/ai #13137).
    What if the request asked for this? No request setting makes a partial buffer a complete call;
    strict function calling (``strict: true``) guarantees the final arguments, not an early parse.

Example:
    fragments: {"a": 1}   {"b": 2}     → complete at fragment 1 of 2, the call ends at fragment 2

How to fix:
    Complete a call only on the provider's completion signal; never because the buffer parses.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.values.findings import Finding, Severity


@rule("The buffer held a complete JSON value before the call completed", Severity.WARNING)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for call in stream.calls:
        at = call.complete_value_at
        if at is None or at >= call.fragment_count - 1:
            continue
        rest = "".join(f.text for f in call.fragments[at + 1 :])
        if not rest.strip() and call.parse_failure is None:
            continue  # only blank fragments followed: nothing different would have run
        prefix = "".join(f.text for f in call.fragments[: at + 1])
        yield self.finding(
            stream,
            call.fragments[at].pos,
            f"{call.label}: the buffer was a complete JSON value after fragment {at + 1} of "
            f"{call.fragment_count} ({len(prefix)} of {len(call.raw_arguments)} characters); "
            f"code that runs a call when its buffer parses would have run it here",
            "Complete a call only on the provider's completion signal, never because the buffer parses",
            [("call completed", call.ended)],
            call,
        )
