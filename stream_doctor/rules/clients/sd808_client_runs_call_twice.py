"""What it checks:
With ``--client NAME``: whether that client would hand the same call over more than once (a
completion event repeated for a reused block index, one call split into several entries).

Why it matters:
A side-effecting tool runs twice (two payments, two messages sent), or a call's fragments are
spread over entries that each run with part of the input.

Severity:
warning when the client is a real library: the stream (or that library's handling of it) breaks a
widely used client, as its source (and, for anthropic-python and openai-python, the library
itself) shows. Info for a naive pattern: a hint about code of one's own. Never an error: the
capture does not show what the application ran (SD1xx do, from its executions).
    What if the request asked for this? The request does not change how often a client hands a call
    over.

Example:
``anthropic-python 2.12.0 would run get_weather (toolu_01…) again at line 52 (event 19,
content_block_stop), after running it at line 30 (event 12)``.

How to fix:
Servers and proxies: never reuse a block index within a message. Applications: run each call id
once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from stream_doctor.rules.base import rule
from stream_doctor.rules.clients._common import report, shown, when, who
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import ToolCall
    from stream_doctor.clients.compare import ClientReview, Difference
    from stream_doctor.rules.base import Rule


def _message(review: ClientReview, difference: Difference, call: ToolCall) -> str:
    again = difference.handoff
    assert again is not None
    return f"{who(review)} would run {call.label} again at {when(again)}, with {shown(again)}"


@rule("A named client would run the call more than once", Severity.WARNING)
def check(review: ClientReview, self: Rule) -> Iterable[Finding]:
    return report(self, review, "split", _message, "{client}: {summary}. Run each call id once.")
