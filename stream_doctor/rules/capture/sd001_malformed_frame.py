"""A frame of the capture could not be used: not JSON, not an object, or missing fields.

What it checks:
    Every frame (an SSE event's data, a JSONL line, an array element) must decode as a JSON
    object of the provider's event shape. A frame that does not is reported here, with the
    parser's reason, and replay goes on with the next frame. So is a recorded request whose field
    holds another type than the list it must be (``"tools": 7``, ``"messages": true``): the field is
    read as none, and the rest of the request and the stream are still checked.

Why it matters:
    A damaged line may have carried part of a tool call: the reassembled input of a call near it
    may be missing a fragment. Relays also send keep-alives such as ``data: :ping`` that a
    hand-written client hands to ``JSON.parse`` and crashes on.

Severity:
    warning. openai-python and anthropic-sdk-python hand every ``data:`` payload to ``json.loads``
    and raise on one that is not JSON, ending the turn; the capture alone does not prove a call was
    damaged, so not an error. A provider rejects a request with such a field (its schema asks for a
    list): the capture does not hold the request that was answered.
    What if the request asked for this? No request setting asks for a frame that is not JSON; what
    the request asked for does not change how a client parses the frame.

Example:
    data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_del

How to fix:
    If the capture was cut or edited by hand, re-record it. If a relay injects non-JSON keep-alives,
    make the client skip SSE comments and data that is not JSON instead of failing the turn.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Rule, rule
from stream_doctor.rules.capture._problems import problems_of
from stream_doctor.rules.requested import request_of
from stream_doctor.values.findings import Finding, Severity


@rule("A frame is not a JSON event object the provider would send", Severity.WARNING)
def check(stream: AccumulatedStream, self: Rule) -> Iterator[Finding]:
    if stream.problems:  # (a clean turn, a session's every one, has none to look through)
        yield from problems_of(
            stream,
            self,
            "The frame was skipped; check whether the capture was cut or edited, and that the client skips such frames",
            "frame could not be used: {message}",
            kinds=["malformed-frame"],
        )
    for path in request_of(stream).not_lists:
        yield self.finding(
            stream,
            stream.request_pos,
            f"the request's {path} is not a list: read as none",
            "Re-record the request as it was sent; a provider rejects a request whose field has the wrong type",
        )
