"""What it checks:
With ``--client NAME``: whether that client would take a call as complete before its last
argument fragment arrived (and run it with part of its arguments).

Why it matters:
Heuristics such as "another index appeared" or "the buffer parses" end a call early under
interleaved parallel calls or when a fragment boundary falls after a closing brace: the tool runs
with a prefix of its input, often still valid JSON, so nothing fails loudly.

Severity:
warning when the client is a real library: the stream (or that library's handling of it) breaks a
widely used client, as its source (and, for anthropic-python and openai-python, the library
itself) shows. Info for a naive pattern: a hint about code of one's own. Never an error: the
capture does not show what the application ran (SD1xx do, from its executions).
    What if the request asked for this? The request does not change when a client hands a call over.

Example:
``openai-python 3.54.0 would take get_weather (call_a) as complete at line 9 (event 5, next tool
call index), before its last fragment at line 14 (event 8), and run it with {"city":"Par"}``.

How to fix:
Complete a call only at the protocol's completion signal: Anthropic ``content_block_stop``,
Responses ``function_call_arguments.done``, Chat Completions the choice's ``finish_reason``; with
the OpenAI SDKs read the calls from the final completion instead of ``arguments.done`` events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from stream_doctor.rules.base import rule
from stream_doctor.rules.clients._common import report, shown, when, who
from stream_doctor.util.wording import where
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import ToolCall
    from stream_doctor.clients.compare import ClientReview, Difference
    from stream_doctor.rules.base import Rule


def _message(review: ClientReview, difference: Difference, call: ToolCall) -> str:
    handoff = difference.handoff
    assert handoff is not None
    last = call.fragment_positions[-1]
    return (
        f"{who(review)} would take {call.label} as complete at {when(handoff)}, before its last fragment "
        f"at {where(last)}, and run it with {shown(handoff)}"
    )


@rule("A named client would run the call before its last fragment", Severity.WARNING)
def check(review: ClientReview, self: Rule) -> Iterable[Finding]:
    return report(self, review, "early", _message, "{client}: {summary}. Wait for the protocol's completion signal.")
