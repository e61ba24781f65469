"""What a provider's streaming protocol promises, stated by its adapter as data.

Each adapter module declares one ``ProtocolFacts`` (``protocol = ProtocolFacts(...)``); the engine
copies it onto the capture's ``CaptureInfo`` and the accumulator and rules read it from there, so
``rules/`` never imports ``providers/`` and a new provider needs no rule edits. The defaults are
Anthropic Messages' facts, the protocol the neutral events were modelled on.
"""

from __future__ import annotations

from stream_doctor.records import dataclass


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
