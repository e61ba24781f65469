"""A call the stream abandoned stayed pending long after its turn ended.

What it checks:
    In a capture with times (an envelope), a call that never completed, where the capture goes on
    well after the turn ended (more than 10 seconds, ``timing.PENDING_LIMIT``) before the client
    shows a sign of life: its next request, or a later ``execute`` record.

Why it matters:
    The stream had already given the call up (cut, stopped, errored), but the client kept waiting
    for its completion: an agent loop that waits on a tool input that can no longer arrive hangs
    until a timeout or a user notices. The turn should have been treated as failed at once.

Severity:
    warning. The times prove the gap, not what the client did in it; a long pause can also be a
    person thinking. With the abandoned call (SD301) it points at the client's handling of an
    unfinished turn.
    What if the request asked for this? No request setting asks the client to leave a call pending
    after the turn ended.

Example:
    t=1.32  content_block_delta  {"partial_json":"{\\"path\\": \\"no"}
    t=1.33  message_stop         (no content_block_stop for the call)
    t=61.40 request              (the next request, sixty seconds later)

How to fix:
    When a turn ends (message stop, stream end, error), fail or retry every call that did not
    complete instead of waiting for it; put a deadline on waiting for a call's completion.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.values.findings import Finding, Severity


@rule("A call the stream abandoned stayed pending long after its turn ended", Severity.WARNING, needs="incomplete-call")
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    if stream.capture.clock is None:
        return
    from stream_doctor.accumulate.pending import PENDING_LIMIT, call_timing  # a capture with times only

    for call in stream.calls:
        if call.status == "complete":
            continue
        timing = call_timing(stream, call)
        waited = timing.pending_after_turn if timing is not None else None
        if timing is None or waited is None or waited <= PENDING_LIMIT:
            continue
        yield self.finding(
            stream,
            call.abandon_pos or call.started,
            f"{call.label} never completed; its turn ended at t={timing.turn_ended:.3f} s, but the client's "
            f"next sign, {timing.waited_for}, came only at t={timing.waited_until:.3f} s: the call stayed "
            f"pending {waited:.1f} s after the stream had abandoned it",
            "Treat a call that did not complete by the end of its turn as failed at once; do not wait for it",
            [("call started", call.started)],
            call,
        )
