"""The words the Gemini adapters recognise a frame by (``gemini``: generateContent chunks; ``gemini_interactions``:
the Interactions API's events), light enough for detection to read without importing either adapter.
"""

from __future__ import annotations

from stream_doctor.providers.sniffing import Words

#: A GenerateContentResponse's top-level keys (Gemini Code Assist wraps the chunk in ``{"response": …}``,
#: see ``gemini._unwrapped``).
WORDS = Words(keys=frozenset({"candidates", "promptFeedback", "usageMetadata"}), within="response")

# -- the Interactions API (``gemini_interactions``): events named by their ``event_type`` --

INTERACTION_STARTS = ("interaction.created", "interaction.start")

INTERACTION_COMPLETES = ("interaction.completed", "interaction.complete")

INTERACTION_TYPES = frozenset(
    {
        *INTERACTION_STARTS,
        *INTERACTION_COMPLETES,
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

INTERACTIONS_WORDS = Words(names=INTERACTION_TYPES, field="event_type")
