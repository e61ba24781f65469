"""``stream-doctor convert``: every fixture, as an envelope, replays to the same findings and the same calls."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stream_doctor.engine.convert import convert
from stream_doctor.engine.pipeline import replay
from stream_doctor.values.findings import Finding
from stream_doctor.values.options import Options
from tests.test_golden import CAPTURES, replayed

#: What differs between a capture and its envelope: where things are (lines, events, byte offsets).
_POSITIONS = re.compile(r"\b(line|lines|event|events|byte|offset|interaction)s? \d+(-\d+)?")


def _comparable(finding: Finding) -> tuple[str, str, str | None]:
    return finding.code, _POSITIONS.sub(r"\1 N", finding.message), finding.call_id


@pytest.mark.parametrize("name", CAPTURES)
def test_converted_capture_replays_alike(name: str, tmp_path: Path) -> None:
    original = replayed(name)
    envelope = tmp_path / "converted.jsonl"
    envelope.write_bytes(convert(f"fixtures/{name}", Options()))
    again = replay(str(envelope), Options())
    assert again.stream.capture.container == "envelope"
    assert sorted(map(_comparable, again.findings)) == sorted(map(_comparable, original.findings))
    assert [(c.call_id, c.name, c.status, c.raw_arguments) for c in again.calls] == [
        (c.call_id, c.name, c.status, c.raw_arguments) for c in original.calls
    ]
    assert len(again.turns) == len(original.turns)


def test_converting_an_envelope_gives_it_back_unchanged_in_meaning(tmp_path: Path) -> None:
    once = convert("fixtures/conversations/envelope_two_turns.jsonl", Options())
    path = tmp_path / "once.jsonl"
    path.write_bytes(once)
    twice = convert(str(path), Options())
    assert once.splitlines()[1:] == twice.splitlines()[1:]  # only the header's source differs


def test_the_header_names_the_provider_and_the_source() -> None:
    first = convert("fixtures/conversations/bedrock_two_turns.har", Options()).splitlines()[0]
    assert first == (
        b'{"sd":"header","version":1,"provider":"bedrock",'
        b'"source":"converted from fixtures/conversations/bedrock_two_turns.har (har)","container":"har",'
        b'"body_container":"eventstream"}'
    )


def test_a_cassette_without_done_still_misses_it_as_an_envelope(tmp_path: Path) -> None:
    """A cassette's SSE bodies can hold [DONE], so its absence (SD508) survives conversion: the
    envelope's header says what the bodies were read as, not only that the capture was a cassette."""
    text = Path("fixtures/conversations/openai_headers_disagree_with_body.yaml").read_text()
    assert text.count("data: [DONE]") == 1
    cassette = tmp_path / "no_done.yaml"
    cassette.write_text(text.replace("data: [DONE]", ""))
    assert "SD508" in {f.code for f in replay(str(cassette), Options()).findings}
    envelope = tmp_path / "converted.jsonl"
    envelope.write_bytes(convert(str(cassette), Options()))
    assert b'"body_container":"sse"' in envelope.read_bytes().splitlines()[0]
    assert "SD508" in {f.code for f in replay(str(envelope), Options()).findings}
