"""What it checks:
With ``--client NAME``: whether that client would hand a call over with another tool name or call
id than the stream's (a name or id repeated on every fragment and concatenated, the last id
winning over the first).

Why it matters:
``get_weatherget_weather`` is no tool (the call fails or is rejected), and a wrong id breaks the
pairing of the result with its call on the next request.

Severity:
warning when the client is a real library: the stream (or that library's handling of it) breaks a
widely used client, as its source (and, for anthropic-python and openai-python, the library
itself) shows. Info for a naive pattern: a hint about code of one's own. Never an error: the
capture does not show what the application ran (SD1xx do, from its executions).
    What if the request asked for this? The request does not change how a client reads a call's name
    or id.

Example:
``openai-python 3.54.0 would call get_weatherget_weather with id call_1call_1; the stream's call
is get_weather (call_1)``.

How to fix:
Servers: send ``id`` and ``function.name`` only on a call's first fragment, as OpenAI does.
Clients: take the first value and ignore repeats.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from stream_doctor.rules.base import rule
from stream_doctor.rules.clients._common import report, who
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import ToolCall
    from stream_doctor.clients.compare import ClientReview, Difference
    from stream_doctor.rules.base import Rule


def _message(review: ClientReview, difference: Difference, call: ToolCall) -> str:
    handoff = difference.handoff
    assert handoff is not None
    return (
        f"{who(review)} would call {handoff.name!r} with id {handoff.call_id!r}; "
        f"the stream's call is {call.name!r} ({call.call_id or 'no id'})"
    )


@rule("A named client would use another tool name or call id", Severity.WARNING)
def check(review: ClientReview, self: Rule) -> Iterable[Finding]:
    return report(self, review, "identity", _message, "{client}: {summary}.")
