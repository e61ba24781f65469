"""Detection imports only the adapters a capture could be: the pre-filter must never leave out one
that would have scored (then the choice, and the "fits several providers" error, would change)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_doctor.capture import load
from stream_doctor.capture.base import CaptureError
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


def test_an_anthropic_capture_imports_no_other_adapter() -> None:
    sample = samples(ROOT / "fixtures" / "anthropic" / "one_call.sse")[0]
    assert candidates(sample) <= {"anthropic", "anthropic-sdk", "openai-responses", "cohere", "openai-sdk", "vercel-ai"}
