"""What it checks:
With ``--client NAME``: whether that client would never run a call that completed with arguments
that parse (it never hands it over, or flags it as invalid).

Why it matters:
The model asked for a tool and the application silently does nothing: the next turn has no
result for that call (the API then rejects the request), or the agent loops.

Severity:
warning when the client is a real library: the stream (or that library's handling of it) breaks a
widely used client, as its source (and, for anthropic-python and openai-python, the library
itself) shows. Info for a naive pattern: a hint about code of one's own. Never an error: the
capture does not show what the application ran (SD1xx do, from its executions).
    What if the request asked for this? The request does not change which calls a client keeps.

Example:
``langchain 1.7.2 would never run get_weather (call_b): it lost the fragments (a fragment without
an index)``.

How to fix:
Look at why the client loses it (the other SD8xx findings and ``stream-doctor clients`` say what
it keys calls by); fix the provider or proxy that sends the irregular stream, or use a client
that correlates calls by id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from stream_doctor.rules.base import rule
from stream_doctor.rules.clients._common import correct, report, who
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import ToolCall
    from stream_doctor.clients.compare import ClientReview, Difference
    from stream_doctor.rules.base import Rule


def _message(review: ClientReview, difference: Difference, call: ToolCall) -> str:
    handoff = difference.handoff
    if handoff is not None and handoff.invalid:
        why = f"it flags the arguments as invalid ({handoff.when})"
    else:
        why = "it never hands the call over"
    return f"{who(review)} would never run {call.label} ({correct(call)}): {why}"


@rule("A named client would never run a complete call", Severity.WARNING)
def check(review: ClientReview, self: Rule) -> Iterable[Finding]:
    return report(self, review, "dropped", _message, "{client}: {summary}.")
