"""A response's ``sequence_number``s skip, go backwards or are missing.

What it checks:
    Each Responses event carries ``sequence_number``, counting the response's events from 0 by
    one. A jump means events were lost; a number at or below an earlier one means events were
    reordered or repeated; an event without one, after events that had it, breaks typed clients.

Why it matters:
    A lost ``function_call_arguments.delta`` leaves a hole in the arguments that only the
    ``.done`` event can repair; a reordered one scrambles them. Typed clients (Codex, OpenCode)
    reject an event without ``sequence_number``. The numbers are also how a client resumes a
    stream (``starting_after``), so gaps make a resume skip events.

Severity:
    warning. Typed clients (Codex, OpenCode) reject events without ``sequence_number`` and
    ``starting_after`` resumes skip events; the arguments may still be whole.
    What if the request asked for this? No request setting changes the sequence numbering.

Example:
    {"type":"response.function_call_arguments.delta","sequence_number":7,…}
    {"type":"response.function_call_arguments.delta","sequence_number":9,…}

How to fix:
    Find the proxy, queue or recorder that drops or reorders events. A client can refetch a
    stored response's stream with ``starting_after`` and the last number it has.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.problem_facts import SequenceIrregular
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of
from stream_doctor.values.findings import Finding, Severity


@rule(
    "Events of a response were lost, reordered or lack sequence numbers",
    Severity.WARNING,
    reads=("sequence-gap", "sequence-disorder", "sequence-missing"),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        "Find what drops or reorders events between the API and the client; compare the call's deltas "
        "with its .done event before running it",
        words=(SequenceIrregular, irregular),
    )


def irregular(facts: SequenceIrregular) -> str:
    if facts.what == "missing":
        return (
            f"{facts.event} has no sequence_number although the response's earlier events do; clients that "
            f"validate events (typed SDKs, Codex) reject it with 'missing field sequence_number'"
        )
    if facts.what == "gap":
        lost = (facts.number or 0) - (facts.previous or 0) - 1
        return (
            f"sequence_number jumps from {facts.previous} to {facts.number} at {facts.event}: {lost} event"
            f"{'s' if lost != 1 else ''} of this response never arrived (dropped by a proxy or the recorder)"
        )
    return (
        f"{facts.event} has sequence_number {facts.number} after {facts.previous}: events arrived out of order or twice"
    )
