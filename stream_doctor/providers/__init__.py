"""Provider stage: frames to neutral events, one adapter module per provider API.

Each adapter module exposes ``name``, ``title``, ``protocol`` (its ``ProtocolFacts``: what ends a
stream, what completes a call …), ``sniff(frames)`` and ``translator()`` (see ``base.Adapter``), and
its detection ``Words`` (``sniffing.Words``: the event names and keys it recognises a frame by), in the
adapter module or, where the adapter is too heavy to import for detection, in a ``*_protocol`` data
module beside it. ``--provider`` (or a capture that names its provider) forces one. Otherwise
detection has no order: it asks the adapters whose words the first event frames hold to ``sniff``
them, and the highest score wins; a tie at the top is an error that asks for ``--provider``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from stream_doctor.util.registry import LazyRegistry

if TYPE_CHECKING:  # names only: ``--provider``'s help and parser read the registry's names, importing no stage
    from stream_doctor.capture.base import Frame
    from stream_doctor.providers.base import Adapter
    from stream_doctor.providers.sniffing import Words

#: Each adapter, one line: its name, its module, and where its detection words are (``module:NAME``).
#: Listings follow this order; detection does not (see the module docstring).
_ADAPTERS: dict[str, tuple[str, str]] = {
    "anthropic-sdk": ("stream_doctor.providers.anthropic_sdk", "stream_doctor.providers.anthropic_protocol:SDK_WORDS"),
    "anthropic": ("stream_doctor.providers.anthropic", "stream_doctor.providers.anthropic_protocol:WORDS"),
    "openai-responses": ("stream_doctor.providers.openai_responses", "stream_doctor.providers.openai_responses_protocol:WORDS"),
    "openai-assistants": ("stream_doctor.providers.openai_assistants", "stream_doctor.providers.openai_assistants_protocol:WORDS"),
    "gemini": ("stream_doctor.providers.gemini", "stream_doctor.providers.gemini_protocol:WORDS"),
    "gemini-interactions": ("stream_doctor.providers.gemini_interactions", "stream_doctor.providers.gemini_protocol:INTERACTIONS_WORDS"),
    "cohere": ("stream_doctor.providers.cohere", "stream_doctor.providers.cohere_protocol:WORDS"),
    "bedrock": ("stream_doctor.providers.bedrock", "stream_doctor.providers.bedrock_protocol:WORDS"),
    "openai-sdk": ("stream_doctor.providers.openai_sdk", "stream_doctor.providers.openai_chat_protocol:SDK_WORDS"),
    "openai": ("stream_doctor.providers.openai_chat", "stream_doctor.providers.openai_chat_protocol:WORDS"),
    "mistral": ("stream_doctor.providers.mistral", "stream_doctor.providers.openai_chat_protocol:WORDS"),
    "ollama": ("stream_doctor.providers.ollama", "stream_doctor.providers.ollama_protocol:WORDS"),
    "vercel-ai": ("stream_doctor.providers.vercel_ai", "stream_doctor.providers.vercel_ai_protocol:WORDS"),
    "vercel-ai-data": ("stream_doctor.providers.vercel_ai_data", "stream_doctor.providers.vercel_ai_protocol:DATA_WORDS"),
}  # fmt: skip

#: Adapters by provider name; each module is imported on first use, so a capture that names its
#: provider (``--provider``, an envelope header) imports one adapter.
ADAPTERS: LazyRegistry[Adapter] = LazyRegistry({name: module for name, (module, _) in _ADAPTERS.items()})

#: Each adapter's detection words, read without importing the adapter: a replay imports the adapters
#: its capture could be, not all of them.
WORDS: LazyRegistry[Words] = LazyRegistry({name: words for name, (_, words) in _ADAPTERS.items()})

#: How many event frames detection looks at.
SNIFF_FRAMES = 50


class DetectionError(Exception):
    """No adapter recognised the capture (or two did equally well)."""


def detect(frames: Sequence[Frame], hint: str | None = None) -> tuple[Adapter, dict[str, int]]:
    """Pick the adapter for these frames. ``hint`` is a provider named by the capture itself."""
    if hint is not None and hint in ADAPTERS:
        return ADAPTERS[hint], {hint: 100}
    sample = [f for f in frames[: SNIFF_FRAMES * 4] if f.kind == "event"][:SNIFF_FRAMES]
    possible = candidates(sample)
    scores = {name: ADAPTERS[name].sniff(sample) if name in possible else 0 for name in ADAPTERS}
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    if not ranked or ranked[0][1] <= 0:
        raise DetectionError(
            "could not tell which provider produced this capture (tried "
            + ", ".join(ADAPTERS)  # the registry's order, as every listing of the adapters
            + f"){_unread(sample)}; force one with --provider"
        )
    if len(ranked) > 1 and ranked[1][1] == ranked[0][1]:
        tied = ", ".join(f"{n} ({s})" for n, s in ranked if s == ranked[0][1])
        raise DetectionError(f"the capture fits several providers equally well: {tied}; force one with --provider")
    return ADAPTERS[ranked[0][0]], scores


def _unread(sample: Sequence[Frame]) -> str:
    """Why detection had nothing to go by when no frame it looked at held JSON (each too deep, cut,
    not JSON at all): the first frame's reason, so the user learns what ``--provider`` would face."""
    if not sample or any(frame.error is None for frame in sample):
        return ""
    first = sample[0]
    many = (
        f"none of its first {len(sample)} event frames holds JSON"
        if len(sample) > 1
        else "its one event frame holds no JSON"
    )
    return f": {many} (line {first.pos.line}: {first.error})"  # the reader's words hold none of the capture's text


def candidates(sample: Sequence[Frame]) -> set[str]:
    """The adapters whose words some of these frames hold: the only ones whose ``sniff`` can score
    above 0 (each ``sniff`` starts with the same test, ``Words.heard``)."""
    from stream_doctor.providers.sniffing import distinct  # detection's, not --provider's help

    words = {name: WORDS[name] for name in ADAPTERS}
    shapes = distinct(sample, words.values())
    return {name for name, word in words.items() if word.heard(shapes)}
