"""What a provider's streaming protocol promises, stated by its adapter as data.

Each adapter module declares one ``ProtocolFacts`` (``protocol = ProtocolFacts(...)``); the engine
copies it onto the capture's ``CaptureInfo`` and the accumulator and rules read it from there, so
``rules/`` never imports ``providers/`` and a new provider needs no rule edits. ``EventWords`` are the
provider's own names for the events a finding speaks of; every adapter states them (there is no
default, so no capture is told another provider's event names). The other facts default to
Anthropic Messages', the protocol the neutral events were modelled on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class EventWords:
    """What a finding calls the provider's events, each written to follow "before", "after" or
    "without" in a sentence (``message_stop``, ``data: [DONE]``, ``a chunk with finishReason``)."""

    #: What starts a message (a turn's response): SD407, SD408, SD409.
    message_start: str
    #: What starts a tool call, carrying its id and name (and for some protocols a placeholder input).
    call_start: str
    #: What carries one fragment of a call's argument text, written to precede "fragment": SD102, SD410.
    fragment: str
    #: What completes a call: SD102, SD301, SD402.
    call_end: str
    #: What ends the stream: SD301, SD303, SD407, SD508.
    stream_end: str
    #: The field that says why the turn stopped: SD303, SD411.
    stop_reason: str


#: For streams built without an adapter (a library user's or a test's own events): no provider's names.
NEUTRAL_WORDS = EventWords(
    message_start="the message's start event",
    call_start="the call's start event",
    fragment="argument",
    call_end="the call's completion event",
    stream_end="the end-of-stream event",
    stop_reason="the stop reason",
)


@dataclass(frozen=True, slots=True)
class StreamEnd:
    """The event after which a provider sends nothing more, as it looks on the wire.

    For code that reads a response as it arrives and must tell a complete stream from a cut one
    when the connection stops (the recorder: an SDK closes the response right after the last
    event, the OpenAI SDK even before the body's end). With no field set, nothing on the wire
    ends the stream: only the end of the body does (Gemini).
    """

    #: SSE ``event:`` names, or the ``type`` of a JSON payload, that end the stream.
    events: frozenset[str] = frozenset()
    #: Payloads that are not JSON and end the stream (OpenAI Chat's ``[DONE]``).
    sentinels: frozenset[str] = frozenset()
    #: Top-level keys of a JSON payload that end the stream when their value is true (Ollama's
    #: ``"done": true``, OpenAI Chat's mid-stream ``{"error": …}``).
    keys: frozenset[str] = frozenset()

    def ends(self, event: str | None, payload: Any) -> bool:
        """Whether an event ends the stream: its SSE name (None without one) and its payload, decoded
        JSON or, when it is not JSON, its text."""
        if event is not None and event in self.events:
            return True
        if type(payload) is dict:
            kind = payload.get("type")
            if type(kind) is str and kind in self.events:
                return True
            return any(payload.get(key) for key in self.keys)
        return type(payload) is str and payload.strip() in self.sentinels

    def __or__(self, other: StreamEnd) -> StreamEnd:
        """Either's end (for a stream whose provider is not known)."""
        return StreamEnd(self.events | other.events, self.sentinels | other.sentinels, self.keys | other.keys)


@dataclass(frozen=True, slots=True)
class ProtocolFacts:
    #: The provider's names for the events findings speak of (required: see the module docstring).
    words: EventWords
    #: Block indices are positions in the final message (Anthropic, Responses' ``output_index``):
    #: a gap or a reuse is a stream problem. Otherwise an index only tells calls apart.
    positional_indices: bool = True
    #: Call indices number a message's calls 0, 1, 2 … with no gap (OpenAI Chat ``tool_calls[].index``;
    #: SD507 checks it).
    dense_call_indices: bool = False
    #: The protocol sends a call's id on every fragment: a repeated id is normal, not SD503.
    ids_repeat_on_fragments: bool = False
    #: The finish reason a turn that made calls normally ends with, when it is not a tool-call
    #: finish (Gemini: ``STOP``; SD525 explains it to clients that wait for a tool-call finish).
    finish_with_calls: str | None = None
    #: Documented extension fields the adapter accepts without an unknown-field finding.
    extension_fields: frozenset[str] = frozenset()
    #: The same end as the wire shows it (the recorder reads it); Anthropic: ``message_stop``, or an
    #: ``error`` event, after which the API sends nothing more and the SDK raises and closes.
    stream_end: StreamEnd = StreamEnd(events=frozenset({"message_stop", "error"}))


#: Containers that can hold a non-JSON end-of-stream line (OpenAI Chat's ``data: [DONE]``): raw SSE, and
#: the envelope that keeps it. A chunk log of parsed objects (a JSON array, JSON Lines, a recording of SDK
#: objects) cannot: the client that wrote it consumed the line, so its absence there proves nothing.
RECORDS_SENTINEL = frozenset({"sse", "envelope"})


def records_sentinel(container: str, header: dict[str, Any] | None = None) -> bool:
    """Whether a capture in this container could show a non-JSON end-of-stream line; an envelope
    converted from another capture (its ``header``) is judged by what the original could hold."""
    if container == "envelope" and header is not None:
        original = header.get("body_container", header.get("container"))  # a HAR's bodies, or the capture
        if isinstance(original, str):
            container = original
    return container in RECORDS_SENTINEL
