"""The event types the Cohere v2 adapter recognises a frame by, light enough for detection to read without
importing the adapter (cohere-python v2 ``StreamedChatResponseV2``).
"""

from __future__ import annotations

from stream_doctor.providers.sniffing import Words

KNOWN_TYPES = frozenset(
    {
        "message-start",
        "tool-plan-delta",
        "tool-call-start",
        "tool-call-delta",
        "tool-call-end",
        "content-start",
        "content-delta",
        "content-end",
        "citation-start",
        "citation-end",
        "debug",
        "message-end",
    }
)

#: The event types that only Cohere sends (a frame of one weighs 2).
STRONG = ("message-start", "tool-call-start", "tool-plan-delta", "content-delta")

WORDS = Words(names=KNOWN_TYPES)
