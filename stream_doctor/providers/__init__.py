"""Provider stage: frames to neutral events, one adapter module per provider API.

Each adapter module exposes ``name``, ``title``, ``protocol`` (its ``ProtocolFacts``: what ends a
stream, what completes a call …), ``sniff(frames)`` and ``translator()`` (see ``base.Adapter``).
Detection asks every adapter to sniff the first event frames; ``--provider`` forces one.
"""

from __future__ import annotations

from typing import Sequence

from stream_doctor.capture.base import Frame
from stream_doctor.providers.base import Adapter
from stream_doctor.registry import LazyRegistry

#: Adapters by provider name, in detection order; each module is imported on first use, so a
#: capture that names its provider (``--provider``, an envelope header) imports one adapter.
ADAPTERS: LazyRegistry[Adapter] = LazyRegistry(
    {
        "anthropic-sdk": "stream_doctor.providers.anthropic_sdk",
        "anthropic": "stream_doctor.providers.anthropic",
        "openai-responses": "stream_doctor.providers.openai_responses",
        "gemini": "stream_doctor.providers.gemini",
        "gemini-interactions": "stream_doctor.providers.gemini_interactions",
        "cohere": "stream_doctor.providers.cohere",
        "bedrock": "stream_doctor.providers.bedrock",
        "openai-sdk": "stream_doctor.providers.openai_sdk",
        "openai": "stream_doctor.providers.openai_chat",
        "mistral": "stream_doctor.providers.mistral",
        "ollama": "stream_doctor.providers.ollama",
        "vercel-ai": "stream_doctor.providers.vercel_ai",
        "vercel-ai-data": "stream_doctor.providers.vercel_ai_data",
    }
)

#: How many event frames detection looks at.
SNIFF_FRAMES = 50


class DetectionError(Exception):
    """No adapter recognised the capture (or two did equally well)."""


def detect(frames: Sequence[Frame], hint: str | None = None) -> tuple[Adapter, dict[str, int]]:
    """Pick the adapter for these frames. ``hint`` is a provider named by the capture itself."""
    if hint is not None and hint in ADAPTERS:
        return ADAPTERS[hint], {hint: 100}
    sample = [f for f in frames[: SNIFF_FRAMES * 4] if f.kind == "event"][:SNIFF_FRAMES]
    scores = {name: adapter.sniff(sample) for name, adapter in ADAPTERS.items()}
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    if not ranked or ranked[0][1] <= 0:
        raise DetectionError(
            "could not tell which provider produced this capture (tried "
            + ", ".join(sorted(ADAPTERS))
            + "); force one with --provider"
        )
    if len(ranked) > 1 and ranked[1][1] == ranked[0][1]:
        tied = ", ".join(f"{n} ({s})" for n, s in ranked if s == ranked[0][1])
        raise DetectionError(f"the capture fits several providers equally well: {tied}; force one with --provider")
    return ADAPTERS[ranked[0][0]], scores
