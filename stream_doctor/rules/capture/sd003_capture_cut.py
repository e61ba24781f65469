"""The capture file ends in the middle of a frame.

What it checks:
    The capture stops inside a frame: the last SSE event has no terminating blank line, the last
    line of any line-based capture has no line end and is not whole, or a JSON array has no closing
    bracket. The recording stopped while bytes were still arriving. A partial ``data:`` line or JSON
    line is still read (and is malformed, SD001); the cut start of any other line (``e`` of
    ``event:``) is not read as a field, so a cut is never mistaken for a proxy's framing (SD005).

Why it matters:
    A browser's EventSource discards an event without its blank line, so a client and this replay
    can disagree about the last event. The stream itself was most likely cut (see SD301 and SD303).

Severity:
    warning when the event cut off matters (a browser ``EventSource`` and the Python SDKs' SSE
    decoders drop an event without its blank line), info when the cut frame carried nothing a client
    uses: its data is whole and only the blank line is missing, or the capture stops before the
    event's data, so that every client and this replay drop it alike. The cut itself is proven by
    SD301/SD303, which carry the verdict.
    What if the request asked for this? No request setting cuts a capture: the bytes end inside a
    frame whatever was asked.

Example:
    data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"x"}}<EOF>

How to fix:
    Record until the connection closes (``curl -N`` writes everything it receives), or treat the
    capture as showing a cut stream.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.problem_facts import CutBeforeData
from stream_doctor.rules.base import Rule, problems, rule
from stream_doctor.values.findings import Finding, Severity


@rule(
    "The capture ends inside a frame (no final blank line or bracket)",
    Severity.WARNING,
    reads=("unterminated-event", "truncated-array"),
)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    damaged = {p.pos for p in stream.problems if p.kind == "malformed-frame"}
    for problem in problems(stream, self):
        facts = problem.facts
        if isinstance(facts, CutBeforeData):
            yield self.finding(
                stream,
                problem.pos,
                _before_data(facts),
                "The recording stopped before the event's data; re-record until the connection closes",
                severity=Severity.INFO,
            )
        elif problem.pos in damaged or problem.kind == "truncated-array":
            yield self.finding(
                stream,
                problem.pos,
                f"{problem.message}; the last frame's data is incomplete",
                "The recording stopped mid-frame; re-record until the connection closes",
            )
        else:  # the data is whole, only the terminating blank line is missing
            yield self.finding(
                stream,
                problem.pos,
                "the last event has no terminating blank line; its data is whole, but a strict "
                "EventSource client discards an event that is not followed by a blank line",
                "Save captures until the connection closes; a trimmed file should keep its final blank line",
                severity=Severity.INFO,
            )


def _before_data(facts: CutBeforeData) -> str:
    if not facts.mid_line:
        return (
            f"the capture ends after line {facts.line}, inside an event whose data never arrived: "
            "the stream was cut, and that event is lost to every client"
        )
    shown = repr(facts.start) if facts.size <= len(facts.start) else f"{facts.start + '…'!r} ({facts.size:,} bytes)"
    if facts.comment:
        return f"the capture stops inside line {facts.line}, a comment ({shown}, no line end): the stream was cut there"
    return (
        f"the capture stops inside line {facts.line} ({shown}, no line end), before the event's data: "
        "the stream was cut, and that event is lost to every client"
    )
