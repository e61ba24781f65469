"""What a library's SSE decoder acts on in the frame an event came from, beyond the neutral events.

The adapters read a capture's frames one way; the libraries' own SSE decoders read the bytes by the
SSE rules and test the sentinel their own way. ``framing_of`` takes from each frame what they act on,
once, for both feeders of the profiles: the live ``--client`` run (``stages.Kept``) and the differential
tests (``tests/clients/test_*_differential.py``), so both predict from the same facts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from stream_doctor.capture.base import NOT_JSON, Frame

#: How a library's stream reader recognises the Chat Completions sentinel in an event's data:
#: "prefix": ``sse.data.startswith("[DONE]")`` (openai-python ``Stream.__stream__``, so LangChain,
#: LiteLLM and pydantic-ai through it); "exact": ``sse.data === '[DONE]'`` (openai-node
#: ``core/streaming.js`` ``Stream.fromSSEResponse``; the AI SDK's ``parseJsonEventStream`` in
#: ``@ai-sdk/provider-utils``). Any other data is parsed as JSON, which fails on a sentinel that is not theirs.
Sentinel = Literal["prefix", "exact"]

DONE = b"[DONE]"

#: The profiled libraries that test the sentinel, and how (each profile's ``Machine.done_sentinel``, held
#: equal by ``tests/rules/test_sentinel_readers.py``): the names SD508 gives for a ``[DONE]`` that is not
#: written exactly, without loading the profiles (rules read no adapter, and the profiles import them).
SENTINEL_READERS: tuple[tuple[str, Sentinel], ...] = (
    ("openai-python", "prefix"),
    ("openai-node", "exact"),
    ("langchain", "prefix"),
    ("vercel-ai", "exact"),
    ("pydantic-ai", "prefix"),
    ("litellm", "prefix"),
)


@dataclass(frozen=True, slots=True)
class Framing:
    """One frame's framing, as an SSE decoder sees it."""

    named: bool  # the frame had an ``event:`` line
    data: bytes | None = None  # the data as sent, when it is not JSON (a sentinel, written as the server wrote it)
    joined: tuple[int, int] | None = None  # ``Frame.joined``: data line n of one SSE event of that many lines


NAMED = Framing(True)
UNNAMED = Framing(False)


def framing_of(frame: Frame) -> Framing:
    """The framing facts of one SSE frame (a constant for the usual frame: JSON data, its own event)."""
    if frame.joined is None and frame.value is not NOT_JSON:
        return UNNAMED if frame.event is None else NAMED
    data = frame.data if frame.value is NOT_JSON else None
    return Framing(frame.event is not None, data, frame.joined)


def ends_reading(sentinel: Sentinel, data: bytes) -> bool:
    """Whether a reader that tests the sentinel this way stops at an event whose data is ``data``."""
    return data.startswith(DONE) if sentinel == "prefix" else data == DONE
