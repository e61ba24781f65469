"""What the turn's request asked for, as facts a stream rule can read (``conversation.requests``).

A response is judged against its request: a stop reason, a count or a shape the request asked for
(a forced tool, ``parallel_tool_calls: false``, a token limit) is not the provider's deviation.
Without a recorded request (a raw stream) there are no facts, and the rules judge the stream alone.

The engine reads a conversation's requests once, each for what is new (``requests.History``), and
hands a turn's facts to its stream rules through ``known``: reading each request whole again here
would make a session's replay grow with the square of its turns.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.conversation.model import NO_FACTS, RequestFacts

#: The request body the stream rules now running are about, and its facts as already read.
_KNOWN: ContextVar[tuple[Any, RequestFacts] | None] = ContextVar("request_facts", default=None)


@contextmanager
def known(body: Any, facts: RequestFacts) -> Iterator[None]:
    """While it lasts, ``request_of`` answers ``facts`` for a stream whose last request is ``body``
    (that very object: the facts of any other request are read from it)."""
    token = _KNOWN.set((body, facts))
    try:
        yield
    finally:
        _KNOWN.reset(token)


def request_of(stream: AccumulatedStream) -> RequestFacts:
    """The facts of the last request the stream's turn sent (none recorded: ``NO_FACTS``)."""
    if not stream.requests:
        return NO_FACTS
    body = stream.requests[-1]
    read = _KNOWN.get()
    if read is not None and read[0] is body:
        return read[1]
    from stream_doctor.conversation.requests import parse

    return parse(stream.capture.provider, body)
