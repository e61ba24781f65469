"""Provider stage: frames to neutral events, one adapter module per provider API.

Each adapter module exposes ``name``, ``title``, ``protocol`` (its ``ProtocolFacts``: what ends a
stream, what completes a call …), ``sniff(frames)`` and ``translator()`` (see ``base.Adapter``).
Detection asks every adapter to sniff the first event frames; ``--provider`` forces one.
"""

from __future__ import annotations

from typing import Iterator, Sequence

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
        "openai-assistants": "stream_doctor.providers.openai_assistants",
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
    possible = candidates(sample)
    scores = {name: ADAPTERS[name].sniff(sample) if name in possible else 0 for name in ADAPTERS}
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


#: The event names Bedrock's ``sniff`` knows (``bedrock.CONVERSE_EVENTS``, ``chunk`` and ``bedrock.EXCEPTIONS``;
#: tests/providers/test_detection.py checks they are the same).
BEDROCK_EVENTS = frozenset(
    {
        "messageStart",
        "contentBlockStart",
        "contentBlockDelta",
        "contentBlockStop",
        "messageStop",
        "metadata",
        "chunk",
        "internalServerException",
        "modelStreamErrorException",
        "validationException",
        "throttlingException",
        "serviceUnavailableException",
        "modelTimeoutException",
    }
)

#: The one-word part types of the AI SDK's UI message stream (the others have a hyphen).
UI_WORDS = frozenset({"abort", "custom", "error", "file", "finish", "start"})


def _typed(kind: str, value: dict[str, object]) -> Iterator[str]:
    """The adapters whose ``sniff`` could weigh a frame of this string ``type`` above 0: each adapter's
    event names have a shape (tests/providers/test_detection.py checks every name each adapter knows)."""
    if "_" in kind or kind in ("ping", "error"):
        yield "anthropic"  # message_start, content_block_delta …
    if "snapshot" in value or (kind == "content_block_stop" and "content_block" in value):
        yield "anthropic-sdk"  # a helper event: only those weigh 2, and without one it scores 0
    if kind.startswith("response.") or kind in ("error", "keepalive"):
        yield "openai-responses"
    if "-" in kind or kind == "debug":
        yield "cohere"  # message-start, tool-call-delta …
    if "." in kind or kind == "chunk":
        yield "openai-sdk"  # content.delta, tool_calls.function.arguments.delta …
    if "-" in kind or kind in UI_WORDS:
        yield "vercel-ai"  # text-delta, tool-input-start, data-… and the one-word parts


def candidates(sample: Sequence[Frame]) -> set[str]:
    """The adapters that could score above 0 on these frames, told from a few keys without
    importing any adapter: a replay then imports the adapters its capture could be, not all 13.

    Each condition is one the adapter's own ``sniff`` requires of some frame (a string ``type``,
    a ``choices`` key, an event name …); tests/providers/test_detection.py checks on every fixture
    that an adapter left out scores 0.
    """
    possible: set[str] = set()
    for frame in sample:
        event = frame.event
        if event is not None and len(event) == 1:
            possible.add("vercel-ai-data")  # a data stream type id: "0", "9", "b" …
        value = frame.value
        if not isinstance(value, dict):
            continue
        if event is None and len(value) == 1:
            event = next(iter(value))  # Bedrock without eventstream headers: {"contentBlockDelta": {…}}
        if event in BEDROCK_EVENTS:
            possible.add("bedrock")
        kind = value.get("type")
        if isinstance(kind, str):
            possible.update(_typed(kind, value))
        if isinstance(value.get("object"), str) and value["object"].startswith("thread"):
            possible.add("openai-assistants")  # thread.run, thread.run.step.delta, thread.message …
        if "event_type" in value:
            possible.add("gemini-interactions")
        if "candidates" in value or "promptFeedback" in value or "usageMetadata" in value:
            possible.add("gemini")
        elif isinstance(value.get("response"), dict) and "candidates" in value["response"]:
            possible.add("gemini")  # Gemini Code Assist: {"response": chunk, "traceId": …} (providers/gemini.py)
        if isinstance(value.get("choices"), list):
            possible.update(("openai", "mistral"))
        if isinstance(value.get("done"), bool) and isinstance(value.get("message"), dict):
            possible.add("ollama")
    return possible
