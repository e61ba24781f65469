"""What it checks:
With ``--client NAME``: whether that client would fold two or more of the stream's calls into one
(calls sent on one index, keyed by index alone).

Why it matters:
The merged call carries ``{…}{…}`` (no valid input) or the first call's arguments with the
others' lost; the other calls are never run.

Severity:
warning when the client is a real library: the stream (or that library's handling of it) breaks a
widely used client, as its source (and, for anthropic-python and openai-python, the library
itself) shows. Info for a naive pattern: a hint about code of one's own. Never an error: the
capture does not show what the application ran (SD1xx do, from its executions).
    What if the request asked for this? The request does not change how a client keys calls.

Example:
``litellm would fold get_weather (call_a), get_weather (call_b) into one call get_weather with
`{"city":"Paris"}{"city":"Rome"}```.

How to fix:
Servers: give each parallel call its own ``index`` (0, 1, 2 …). Clients: start a new call when a
fragment brings a new id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from stream_doctor.rules.base import rule
from stream_doctor.rules.clients._common import report, shown, who
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.accumulate.stream import ToolCall
    from stream_doctor.clients.compare import ClientReview, Difference
    from stream_doctor.rules.base import Rule


def _message(review: ClientReview, difference: Difference, call: ToolCall) -> str:
    handoff = difference.handoff
    assert handoff is not None
    calls = ", ".join(review.call(n).label for n in handoff.calls)
    return f"{who(review)} would fold {calls} into one call {handoff.name or '?'} with {shown(handoff)}"


@rule("A named client would fold several calls into one", Severity.WARNING)
def check(review: ClientReview, self: Rule) -> Iterable[Finding]:
    seen: set[tuple[int, ...]] = set()
    for finding, difference in zip(
        report(self, review, "merged", _message, "{client}: {summary}."),
        [d for d in review.differences if d.kind == "merged"],
        strict=False,
    ):
        handoff = difference.handoff
        key = handoff.calls if handoff is not None else (difference.call,)
        if key in seen:
            continue  # one finding per merged handoff, not one per call folded into it
        seen.add(key)
        yield finding
