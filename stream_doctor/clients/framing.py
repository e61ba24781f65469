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

#: The profiled libraries that test the sentinel, and how: the one definition, which each profile's
#: ``Machine.done_sentinel`` reads by its name and SD508 reads for the names it gives for a ``[DONE]``
#: that is not written exactly (rules load no profile: the profiles import the adapters).
SENTINEL_READERS: dict[str, Sentinel] = {
    "openai-python": "prefix",  # Stream.__stream__: sse.data.startswith("[DONE]")
    "openai-node": "exact",  # core/streaming.js Stream.fromSSEResponse: sse.data === '[DONE]'
    "langchain": "prefix",  # langchain-openai reads through the OpenAI SDK's Stream
    "vercel-ai": "exact",  # @ai-sdk/provider-utils parseJsonEventStream: data === "[DONE]", else safeParseJSON
    "pydantic-ai": "prefix",  # OpenAIChatModel reads through the OpenAI SDK's Stream
    "litellm": "prefix",  # it reads through the OpenAI SDK's Stream
}


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
