"""A tool call's id arrives after its first fragment, or changes within the call.

What it checks:
    A call's ``id`` comes on its first fragment and stays the same. Reported: a call that started
    without an id and got one later (``id-late``), and a later fragment of the same call (same
    index, no new tool name) that carries another id (``id-changed``).

Why it matters:
    A client that takes the id from the first fragment has none to pair the tool result with. A
    client that keys calls by id splits a call whose id changes into two: one with the name and
    the first arguments, one with the rest and no name (Poolside: poolsideai/pool#9). Which id the
    provider expects back with the result cannot be told from the stream.

Severity:
    warning. Clients that take the id from the first fragment, or key calls by id, answer or split
    the call wrongly (poolsideai/pool#9).
    What if the request asked for this? No request setting asks for a call's id to change mid-call.

Example:
    data: {…"tool_calls":[{"index":0,"id":"call_u7Xq","function":{"name":"read_file","arguments":""}}]…}
    data: {…"tool_calls":[{"index":0,"id":"call_9KpL","function":{"arguments":"{\\"path\\": …}"}}]…}

How to fix:
    Keep the first id of a call and look calls up by index when the id changes; report the server.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.irregularities import IdChanged, IdLate
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.util.wording import where
from stream_doctor.values.findings import Finding, Severity


@rule("A tool call's id arrives late or changes within the call", Severity.WARNING, reads=(IdLate, IdChanged))
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    changes: dict[tuple[int, str], int] = {}  # (call, new id) -> fragments carrying it
    for changed in problems(stream, self):
        if not isinstance(changed, IdChanged):
            continue
        change = (changed.call, changed.after)
        changes[change] = changes.get(change, 0) + 1
    reported: set[tuple[int, str]] = set()
    for problem in problems(stream, self):
        if isinstance(problem, IdLate):
            call = stream.calls[problem.call]
            yield self.finding(
                stream,
                problem.pos,
                f"{call.label} started without an id; {problem.call_id!r} arrived at {where(problem.pos)}: a client "
                f"that takes the id from the first fragment has none to pair the tool result with",
                "Take the first non-empty id a call's fragments carry; ask the server to send it on the first",
                [("call started", call.started)],
                call,
            )
        elif isinstance(problem, IdChanged) and (problem.call, problem.after) not in reported:
            change = (problem.call, problem.after)
            reported.add(change)
            call = stream.calls[problem.call]
            times = changes[change]
            carried = f" ({times} fragments carry it)" if times > 1 else ""
            yield self.finding(
                stream,
                problem.pos,
                f"the id of {call.label} changes from {problem.before!r} to {problem.after!r} at "
                f"{where(problem.pos)}{carried}: a client that keys calls by id splits it into two calls, one without a "
                f"name; which id the result must carry is unknown (stream-doctor keeps the first)",
                "Keep a call's first id and route later fragments by index; report the server",
                [("call started", call.started)],
                call,
            )
