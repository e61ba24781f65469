"""The words the Gemini adapters recognise a frame by (``gemini``: generateContent chunks; ``gemini_interactions``:
the Interactions API's events), light enough for detection to read without importing either adapter.
"""

from __future__ import annotations

from stream_doctor.providers.sniffing import Words

#: A GenerateContentResponse's top-level keys (Gemini Code Assist wraps the chunk in ``{"response": …}``,
#: see ``gemini._unwrapped``).
WORDS = Words(keys=frozenset({"candidates", "promptFeedback", "usageMetadata"}), within="response")

STARTS = ("interaction.created", "interaction.start")

COMPLETES = ("interaction.completed", "interaction.complete")

KNOWN_TYPES = frozenset(
    {
        *STARTS,
        *COMPLETES,
        "interaction.status_update",
        "step.start",
        "step.delta",
        "step.stop",
        "content.start",
        "content.delta",
        "content.stop",
        "error",
    }
)


INTERACTIONS_WORDS = Words(names=KNOWN_TYPES, field="event_type")
