"""What a provider's streaming protocol promises, stated by its adapter as data.

Each adapter module declares one ``ProtocolFacts`` (``protocol = ProtocolFacts(...)``); the engine
copies it onto the capture's ``CaptureInfo`` and the accumulator and rules read it from there, so
``rules/`` never imports ``providers/`` and a new provider needs no rule edits. ``EventWords`` are the
provider's own names for the events a finding speaks of; every adapter states them (there is no
default, so no capture is told another provider's event names). The other facts default to
Anthropic Messages', the protocol the neutral events were modelled on.
"""

from __future__ import annotations

from stream_doctor.records import dataclass


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
class ProtocolFacts:
    #: The provider's names for the events findings speak of (required: see the module docstring).
    words: EventWords
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
