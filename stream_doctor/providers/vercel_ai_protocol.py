"""The words the AI SDK adapters recognise a frame by (``vercel_ai``: the UI message stream's part types;
``vercel_ai_data``: the v4 data stream's type ids), light enough for detection to read without importing
either adapter.
"""

from __future__ import annotations

from stream_doctor.providers.sniffing import Words

#: Parts that carry nothing a replay tracks (sources, files, data parts, metadata, approvals).
QUIET = frozenset(
    {
        "message-metadata",
        "source-url",
        "source-document",
        "file",
        "reasoning-file",
        "custom",
        "tool-approval-request",
        "tool-approval-response",
        "tool-output-denied",
    }
)

KNOWN_TYPES = QUIET | frozenset(
    {
        "start",
        "finish",
        "start-step",
        "finish-step",
        "reset-step",
        "abort",
        "error",
        "text-start",
        "text-delta",
        "text-end",
        "reasoning-start",
        "reasoning-delta",
        "reasoning-end",
        "tool-input-start",
        "tool-input-delta",
        "tool-input-available",
        "tool-input-error",
        "tool-output-available",
        "tool-output-error",
    }
)

STRONG = frozenset(
    {"start", "start-step", "finish-step", "text-start", "text-delta", "tool-input-start", "tool-input-delta"}
)

#: Custom data parts are ``data-<name>``.
WORDS = Words(names=KNOWN_TYPES, prefixes=("data-",))

#: Type ids -> what the part is (the stream protocol's table).
DATA_PARTS = {
    "0": "text",
    "g": "reasoning",
    "i": "redacted_reasoning",
    "j": "reasoning_signature",
    "h": "source",
    "k": "file",
    "2": "data",
    "8": "message_annotations",
    "3": "error",
    "b": "tool_call_streaming_start",
    "c": "tool_call_delta",
    "9": "tool_call",
    "a": "tool_result",
    "f": "start_step",
    "e": "finish_step",
    "d": "finish_message",
}

DATA_QUIET = frozenset({"i", "j", "h", "k", "2", "8"})

DATA_STRONG = frozenset({"0", "b", "c", "9", "a", "f", "e", "d"})


DATA_WORDS = Words(events=frozenset(DATA_PARTS))
