"""A message's stop reason was set twice with different values.

What it checks:
    ``message_delta`` (or a pre-filled ``message_start``) sets ``stop_reason`` once per message.

Why it matters:
    Clients keep either the first or the last value, so two readers disagree on whether the turn
    ended for tool use.

Severity:
    warning. Clients keep the first or the last value, so two readers disagree about why the turn
    ended; the calls themselves are intact.
    What if the request asked for this? No request setting asks for two stop reasons in one turn.

Example:
    message_delta {"delta":{"stop_reason":"tool_use"}}
    message_delta {"delta":{"stop_reason":"end_turn"}}

How to fix:
    Fix the proxy or server that emits two different stop reasons.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import StopReasonChanged
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.structure._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule("A message's stop reason was set twice with different values", Severity.WARNING, reads=(StopReasonChanged,))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    stop_reason = stream.capture.protocol.words.stop_reason
    return problems_of(
        stream,
        self,
        lambda problem: f"{stop_reason} changed from {problem.before!r} to {problem.after!r}",
        "Clients keep either the first or the last value; fix the component that sends two",
    )
