"""String arguments streamed in pieces that a client must append, not assign.

What it checks:
    In Vertex AI's streamed function-call arguments, a ``stringValue`` with ``willContinue: true``
    is continued by further pieces for the same ``jsonPath``; every captured string ends with an
    empty last piece (``{"jsonPath":"$.location","stringValue":""}``). This reports each call with
    strings that came in several pieces, and what a client that assigns the pieces would keep.

Why it matters:
    stream-doctor appends the pieces, so its arguments are right. A client that sets the value at
    the path for each piece keeps only the last one: every string becomes ``""``. "partialArgs
    strings not joined" is one of Gemini's known client bugs (wire-formats §9.2, bug 8).

Severity:
    info. Gemini documents streamed function-call arguments as pieces to append (``partialArgs``);
    clients that set the value at the path keep only the last piece.

Example:
    {"functionCall":{"partialArgs":[{"jsonPath":"$.location","stringValue":"Boston","willContinue":true}],"willContinue":true}}
    {"functionCall":{"partialArgs":[{"jsonPath":"$.location","stringValue":""}],"willContinue":true}}

How to fix:
    Append each ``stringValue`` piece to the string at its ``jsonPath`` while the previous piece
    said ``willContinue``; a piece without it (often empty) ends the string.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.findings import Finding, Severity
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of


@rule(
    "SD522",
    "partial-args-string-split",
    "Streamed string arguments arrive in pieces that must be appended",
    Severity.INFO,
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        ["partial-args-string-split"],
        "Append stringValue pieces at their jsonPath while willContinue is true; an empty last piece ends the string",
    )
