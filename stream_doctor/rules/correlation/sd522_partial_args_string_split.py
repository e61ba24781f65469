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
from stream_doctor.capture.problem_facts import StringsSplit
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.util.wording import preview
from stream_doctor.values.findings import Finding, Severity


@rule(
    "Streamed string arguments arrive in pieces that must be appended",
    Severity.INFO,
    reads=("partial-args-string-split",),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    for problem in problems(stream, self):
        yield self.finding(
            stream,
            problem.pos,
            split(problem.facts) if isinstance(problem.facts, StringsSplit) else problem.message,
            "Append stringValue pieces at their jsonPath while willContinue is true; an empty last piece ends the string",
        )


def split(facts: StringsSplit) -> str:
    """Which strings came in pieces (the first two calls, three strings each), and what assigning loses."""
    shown: list[str] = []
    total = 0
    for call in facts.calls:
        total += len(call.strings)
        if len(shown) < 2:
            paths = ", ".join(f"{s.path} as {pieces_shown(s.pieces)}" for s in call.strings[:3])
            rest = f" and {len(call.strings) - 3} more" if len(call.strings) > 3 else ""
            shown.append(f"{call.call}: {paths}{rest}")
    calls = len(facts.calls)
    if calls > len(shown):
        shown.append(f"{calls - len(shown)} more call{_s(calls - len(shown))}")
    first = facts.calls[0]
    string = first.strings[0]
    return (
        f"{total} string value{_s(total)} arrived in pieces ({'; '.join(shown)}). A client that assigns "
        f"each piece to its path instead of appending it keeps only the last one: {string.path} of "
        f"{first.call} would be {preview(string.pieces[-1], 30)} instead of {preview(''.join(string.pieces), 40)}"
    )


def pieces_shown(pieces: tuple[str, ...]) -> str:
    """``"Bos" + "ton" + ""``; a string in many pieces shows its first two and its last."""
    if len(pieces) <= 4:
        return " + ".join(preview(p, 30) for p in pieces)
    return f"{preview(pieces[0], 30)} + {preview(pieces[1], 30)} + … + {preview(pieces[-1], 30)} ({len(pieces)} pieces)"


def _s(count: int) -> str:
    return "" if count == 1 else "s"
