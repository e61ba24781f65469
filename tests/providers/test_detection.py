"""Detection imports only the adapters a capture could be: the pre-filter must never leave out one
that would have scored (then the choice, and the "fits several providers" error, would change)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_doctor.capture import load
from stream_doctor.capture.base import CaptureError, Frame, Pos
from stream_doctor.conversation.build import split
from stream_doctor.providers import ADAPTERS, BEDROCK_EVENTS, SNIFF_FRAMES, bedrock, candidates, vercel_ai_data
from tests.conftest import ROOT

FIXTURES = sorted(p for p in (ROOT / "fixtures").rglob("*") if p.is_file() and not p.name.endswith(".toml"))


def samples(path: Path) -> list[list]:  # type: ignore[type-arg]
    try:
        capture = load(str(path))
    except CaptureError:
        return []
    found = []
    for section in split(capture):
        events = [f for f in section.frames[: SNIFF_FRAMES * 4] if f.kind == "event"][:SNIFF_FRAMES]
        if events:
            found.append(events)
    return found


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT / "fixtures")))
def test_an_adapter_left_out_scores_nothing(path: Path) -> None:
    for sample in samples(path):
        possible = candidates(sample)
        for name in ADAPTERS:
            if name not in possible:
                assert ADAPTERS[name].sniff(sample) == 0, (name, sorted(possible))


def test_fixtures_cover_every_provider() -> None:
    assert len(FIXTURES) > 100
    assert {p.relative_to(ROOT / "fixtures").parts[0] for p in FIXTURES} >= {"anthropic", "openai", "gemini", "bedrock"}


def test_the_event_names_it_knows_are_the_adapters() -> None:
    assert BEDROCK_EVENTS == bedrock.CONVERSE_EVENTS | {"chunk"} | bedrock.EXCEPTIONS
    assert all(len(type_id) == 1 for type_id in vercel_ai_data.PARTS)  # the filter looks for one-character names


def test_every_event_type_an_adapter_knows_passes_the_filter() -> None:
    # A frame weighs above 0 with these adapters only when its "type" is one of these names (or, for
    # Responses, any "response.…"; for the UI stream any "data-…"): each must pass the filter.
    from stream_doctor.providers import anthropic, anthropic_sdk, cohere, openai_responses, openai_sdk, vercel_ai

    def passes(name: str, kind: str, **value: object) -> bool:
        sample = [Frame(Pos(1, 1, 0), b"", {"type": kind, **value}, None, kind)]
        return name in candidates(sample)

    for kind in anthropic.KNOWN_TYPES:
        assert passes("anthropic", kind) and passes("anthropic-sdk", kind, content_block={}, snapshot="")
    for kind in anthropic_sdk.HELPER_EVENTS:
        assert passes("anthropic-sdk", kind, snapshot="")
    for kind in openai_responses.KNOWN_TYPES | {"response.anything_new"}:
        assert passes("openai-responses", kind)
    for kind in cohere.KNOWN_TYPES:
        assert passes("cohere", kind)
    for kind in openai_sdk.HELPER_EVENTS | {"chunk"}:
        assert passes("openai-sdk", kind)
    for kind in vercel_ai.KNOWN_TYPES | {"data-weather"}:
        assert passes("vercel-ai", kind)


def test_an_anthropic_capture_imports_no_other_adapter() -> None:
    sample = samples(ROOT / "fixtures" / "anthropic" / "one_call.sse")[0]
    assert candidates(sample) == {"anthropic"}
