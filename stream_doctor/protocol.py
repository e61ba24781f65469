"""What a provider's streaming protocol promises, stated by its adapter as data.

Each adapter module declares one ``ProtocolFacts`` (``protocol = ProtocolFacts(...)``); the engine
copies it onto the capture's ``CaptureInfo`` and the accumulator and rules read it from there, so
``rules/`` never imports ``providers/`` and a new provider needs no rule edits. The defaults are
Anthropic Messages' facts, the protocol the neutral events were modelled on.
"""

from __future__ import annotations

from typing import Any

from stream_doctor.records import dataclass


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
    #: The event that ends a stream, in the provider's words (SD301, SD303 and SD508 name it).
    end_of_stream: str = "message_stop"
    #: What completes one call, in the provider's words; None when it is the generic block stop
    #: (SD301 names it when a call never got it).
    call_completion: str | None = None
    #: Block indices are positions in the final message (Anthropic, Responses' ``output_index``):
    #: a gap or a reuse is an anomaly. Otherwise an index only tells calls apart.
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
