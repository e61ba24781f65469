"""What the server plays and how: a recorded response, and the plan of reads it is written as."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Literal

Header = tuple[str, str]

#: The response header naming the turn that answered the request: the k-th of its conversation.
TURN_HEADER = "x-stream-doctor-turn"
#: The response header naming, for a capture of several conversations, which one answered (``2 of 2 in
#: agents.har``); the turn header then counts that conversation's turns.
CONVERSATION_HEADER = "x-stream-doctor-conversation"

#: The largest request body the server reads (``--max-request``): a long agent history is a few MiB.
MAX_REQUEST = 16 * 1024 * 1024
#: Seconds the server waits on an application that reads nothing of its answer (a write blocked) or sends
#: nothing more of its request body, before it drops that connection: an application stuck mid-stream
#: holds no server for ever, and the next one is answered.
IDLE_TIMEOUT = 60.0
#: Seconds one run of the application may take under ``serve --matrix`` (``--timeout``).
MATRIX_TIMEOUT = 60.0


@dataclass(frozen=True)
class Recorded:
    """One response as the capture holds it: the turn's answer the server plays back.

    ``body`` is the decoded body (any content coding undone; ``encoding`` says which coding the wire
    had, so the server can apply it again). ``events`` cuts the same bytes at the provider's event
    boundaries (an SSE event with its blank line, a JSON line, an AWS event-stream message), each with
    the seconds since the response began where the capture recorded them (else None); joined, they are
    ``body``.
    """

    provider: str
    status: int
    headers: tuple[Header, ...]
    body: bytes
    events: tuple[tuple[float | None, bytes], ...]
    encoding: str | None = None

    @cached_property
    def played(self) -> Plan:
        """The plan that plays it as recorded (``as_recorded``), made once: a server asks for it at each
        request, before the answer's first byte (49,503 reads of the 10 MB capture: about 6 ms to make)."""
        return Plan(self.status, self.headers, tuple((0.0, data) for _, data in self.events))


@dataclass(frozen=True)
class Plan:
    """What the server writes for one request: a status, headers, then each read after its pause
    (seconds), and how the response ends: ``end`` finishes the body, ``close`` drops the connection
    after the last read (a cut the client must notice)."""

    status: int
    headers: tuple[Header, ...]
    reads: tuple[tuple[float, bytes], ...]
    then: Literal["end", "close"] = "end"


def as_recorded(recorded: Recorded) -> Plan:
    """The plan that plays a response as it was recorded: one read per event, no pauses (the same each time)."""
    return recorded.played
