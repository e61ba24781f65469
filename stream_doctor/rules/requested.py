"""What the turn's request asked for, as facts a stream rule can read (``conversation.requests``).

A response is judged against its request: a stop reason, a count or a shape the request asked for
(a forced tool, ``parallel_tool_calls: false``, a token limit) is not the provider's deviation.
Without a recorded request (a raw stream) there are no facts, and the rules judge the stream alone.

The engine reads a conversation's requests once, each for what is new (``requests.History``), and
hands a turn's facts to its stream rules through ``known``: reading each request whole again here
would make a session's replay grow with the square of its turns.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.conversation.model import NO_FACTS, RequestFacts

#: The request body the stream rules now running are about, and its facts as already read.
_KNOWN: ContextVar[tuple[Any, RequestFacts] | None] = ContextVar("request_facts", default=None)


class known:  # lower case: used as ``with known(body, facts):``, like contextlib's ``suppress``
    """While it lasts, ``request_of`` answers ``facts`` for a stream whose last request is ``body``
    (that very object: the facts of any other request are read from it).

    A class rather than ``@contextmanager``: entered once a turn, and the generator's set-up cost
    a 300-turn session about twice as much as setting and resetting the variable."""

    __slots__ = ("read", "token")

    def __init__(self, body: Any, facts: RequestFacts) -> None:
        self.read = (body, facts)

    def __enter__(self) -> None:
        self.token = _KNOWN.set(self.read)

    def __exit__(self, *exc_info: object) -> None:
        _KNOWN.reset(self.token)


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
