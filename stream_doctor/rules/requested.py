"""What the turn's request asked for, as facts a stream rule can read (``conversation.requests``).

A response is judged against its request: a stop reason, a count or a shape the request asked for
(a forced tool, ``parallel_tool_calls: false``, a token limit) is not the provider's deviation.
Without a recorded request (a raw stream) there are no facts, and the rules judge the stream alone.
"""

from __future__ import annotations

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.conversation.model import NO_FACTS, RequestFacts


def request_of(stream: AccumulatedStream) -> RequestFacts:
    """The facts of the last request the stream's turn sent (none recorded: ``NO_FACTS``)."""
    if not stream.requests:
        return NO_FACTS
    from stream_doctor.conversation.requests import parse

    return parse(stream.capture.provider, stream.requests[-1])
