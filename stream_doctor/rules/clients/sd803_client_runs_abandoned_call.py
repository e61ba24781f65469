"""What it checks:
With ``--client NAME``: whether that client would run a call that never completed (cut by a token
limit, an error, or the end of the stream).

Why it matters:
An abandoned call's arguments are a prefix of what the model meant; partial-JSON readers turn it
into a plausible smaller object, and the tool runs with it (files written without content,
commands without their arguments).

Severity:
warning when the client is a real library: the stream (or that library's handling of it) breaks a
widely used client, as its source (and, for anthropic-python and openai-python, the library
itself) shows. Info for a naive pattern: a hint about code of one's own. Never an error: the
capture does not show what the application ran (SD1xx do, from its executions).
    What if the request asked for this? The request does not change whether a client runs an
    abandoned call; a token limit (``max_tokens``) explains why the call was abandoned, not a client
    running it.

Example:
``anthropic-python 2.12.0 would run write_file (toolu_01…), which never completed (max-tokens),
with {"path":"notes.md"} at the end of the stream (get_final_message())``.

How to fix:
Check the stop reason before running tools (Anthropic ``stop_reason == "tool_use"``, Chat
Completions ``finish_reason == "tool_calls"``) and never run a call whose block was not closed;
with the Anthropic SDK, use the tool runner, which stops on ``max_tokens``.
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
    handoff = difference.handoff
    assert handoff is not None
    cause = call.abandon_cause or "never completed"
    return f"{who(review)} would run {call.label}, which never completed ({cause}), with {shown(handoff)} at {when(handoff)}"


@rule("A named client would run a call that never completed", Severity.WARNING)
def check(review: ClientReview, self: Rule) -> Iterable[Finding]:
    return report(
        self, review, "abandoned", _message, "{client}: {summary}. Check the stop reason before running tools."
    )
