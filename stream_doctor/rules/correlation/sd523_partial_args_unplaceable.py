"""A streamed-argument piece that cannot be placed in the call's arguments.

What it checks:
    Each ``partialArgs`` piece of a Vertex AI streamed function call must name a valid RFC 9535
    ``jsonPath`` into the arguments object, carry exactly one of ``stringValue``, ``numberValue``,
    ``boolValue`` or ``nullValue``, continue an open call, and arrive in document order (a member
    or array element that was already left is not reopened). A string whose last piece said
    ``willContinue`` must get another piece. Anything else is reported here, with what was done.

Why it matters:
    The arguments stream-doctor rebuilds (and any client's) are then missing a value, or hold one
    the model never sent (``null`` in a skipped array slot): running the call acts on wrong input.

Severity:
    error. The piece has no place in the arguments: every client rebuilds a call the model did not
    send.

Example:
    {"functionCall":{"partialArgs":[{"jsonPath":"$.items[0]","stringValue":"a"}],"willContinue":true}}
    {"functionCall":{"partialArgs":[{"jsonPath":"$.items[2]","stringValue":"c"}],"willContinue":true}}
    (element 1 is never sent)

How to fix:
    Do not run the call with these arguments; retry the request, and report the stream if it
    happens again.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.findings import Finding, Severity
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of


@rule(
    "SD523",
    "partial-args-unplaceable",
    "A streamed-argument piece cannot be placed in the call's arguments",
    Severity.ERROR,
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    return problems_of(
        stream,
        self,
        ["partial-args-unplaceable"],
        "Do not run the call with these arguments; retry the request and report the stream if it recurs",
    )
