"""What it checks:
With ``--client NAME``: whether that client would run a call with an input other than the correct
one: the arguments the reference accumulator reassembled, or no run at all when they do not parse.

Why it matters:
The stream can be fine and the application still run ``{}``: a client that reads the start
event's placeholder, parses each fragment alone, or repairs a broken buffer into a smaller object
hands the tool what it built, not what the model sent.

Severity:
warning when the client is a real library: the stream (or that library's handling of it) breaks a
widely used client, as its source (and, for anthropic-python and openai-python, the library
itself) shows. Info for a naive pattern: a hint about code of one's own. Never an error: the
capture does not show what the application ran (SD1xx do, from its executions).
    What if the request asked for this? The request does not change how a client reassembles a call;
    the profiles replay the same stream whatever was asked.

Example:
``naive-start-placeholder would run get_weather (toolu_01…) with {} at line 40 (event 14,
completion event); the correct input is {"location":"Paris"}``.

How to fix:
Accumulate every argument fragment of the call and parse the whole buffer once, at the call's
completion event; use the client's own accumulator (or a newer version of it) rather than code
of one's own, and see ``stream-doctor clients`` for what each client does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from stream_doctor.rules.base import rule
from stream_doctor.rules.clients._common import correct, report, shown, when, who
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import ToolCall
    from stream_doctor.clients.compare import ClientReview, Difference
    from stream_doctor.rules.base import Rule


def _message(review: ClientReview, difference: Difference, call: ToolCall) -> str:
    handoff = difference.handoff
    assert handoff is not None
    if call.status == "complete" and call.arguments is None:
        return (
            f"{who(review)} would run {call.label} with {shown(handoff)} at {when(handoff)}, "
            "although its arguments do not parse; the correct client does not run it"
        )
    return f"{who(review)} would run {call.label} with {shown(handoff)} at {when(handoff)}; the correct input is {correct(call)}"


@rule("A named client would run the call with another input", Severity.WARNING)
def check(review: ClientReview, self: Rule) -> Iterable[Finding]:
    return report(
        self,
        review,
        "input",
        _message,
        "{client}: {summary}. Parse the whole buffer once, at the call's completion event.",
    )
