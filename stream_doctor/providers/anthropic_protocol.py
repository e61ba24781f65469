"""The words the Anthropic Messages adapters recognise a frame by (``anthropic`` and the SDK helper log
``anthropic_sdk``), light enough for detection to read without importing either adapter.

Sources: ../shared/reference/wire-formats.md §1; anthropic-sdk-python 2.12 ``lib/streaming/_types.py``.
"""

from __future__ import annotations

from stream_doctor.providers.sniffing import Words

KNOWN_TYPES = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
        "error",
    }
)

#: The event types that only Anthropic sends (a frame of one weighs 2).
STRONG = ("message_start", "content_block_start", "content_block_delta")

WORDS = Words(names=KNOWN_TYPES)

#: The helper's own events: each follows the content_block_delta it was built from.
HELPER_EVENTS = frozenset({"text", "input_json", "thinking", "signature", "citation"})

#: Only the helper's own events tell its log from a raw capture: a helper event carries its ``snapshot``
#: (``HELPER_EVENTS``), and its ``content_block_stop`` the built ``content_block``.
SDK_WORDS = Words(
    keys=frozenset({"snapshot"}), names=frozenset({"content_block_stop"}), beside=frozenset({"content_block"})
)
