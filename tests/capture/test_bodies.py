"""``load(..., bodies=True)``: each response body as its client received it, and where each frame lies in
it (``Capture.bodies``), what the differential tests feed the real libraries."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from stream_doctor.capture import Body, load
from tests.conftest import FIXTURES


def _read_again(body: Body) -> None:
    """The body read on its own as the reader that cut it: the same frames at the spans' starts."""
    alone = load("<body>", body.container, body.data)
    assert [f.pos.offset for f in alone.frames] == [start for start, _ in body.spans]
    assert [f.data for f in alone.frames] == [f.data for f in body.frames]
    assert alone.ended_cleanly == body.ended_cleanly
    assert all(a[1] == b[0] for a, b in zip(body.spans, body.spans[1:], strict=False))
    assert body.spans[-1][1] == len(body.data)


@pytest.mark.parametrize(
    "name",
    [
        "anthropic_ruby_vcr_binary.yaml",  # Psych !binary: base64
        "anthropic_ruby_vcr_json_base64_string.json",
        "anthropic_nock_gzip_hex.json",  # hex chunks, still gzip
        "anthropic_polly_hex_gzip_chunks.har",
        "openai_polly_base64_gzip_chunks.har",
        "openai_nock14_deflate_raw_headers_object.json",
        "openai_gzip_two_turns.yaml",
        "openai_langchain_cassette.yaml.gz",  # the cassette file itself gzipped
        "openai_one_response_wrapper.json",
        "anthropic_go_vcr_v1_quoted_body.yaml",
    ],
)
def test_a_containers_bodies_are_the_decoded_sse_with_each_frame_placed(name: str) -> None:
    capture = load(str(FIXTURES / "conversations" / name), bodies=True)
    assert capture.bodies
    for body in capture.bodies:
        assert body.container == "sse" and body.interaction is not None
        assert body.data.lstrip().startswith((b"event:", b"data:", b":"))  # text, no base64, hex or gzip left
        assert [f.interaction for f in body.frames] == [body.interaction] * len(body.frames)
        # the frames are the capture's own, placed in the file (the cassette's line), not in the body
        assert all(f in capture.frames for f in body.frames)
        _read_again(body)
    streamed = {e.number for e in capture.exchanges if e.body_container == "sse"}
    assert {b.interaction for b in capture.bodies} == streamed


def test_a_bare_stream_is_its_own_body_gzip_undone(tmp_path: Path) -> None:
    data = (FIXTURES / "anthropic/one_call.sse").read_bytes()
    path = tmp_path / "one_call.sse.gz"
    path.write_bytes(gzip.compress(data))
    for capture in (load(str(FIXTURES / "anthropic/one_call.sse"), bodies=True), load(str(path), bodies=True)):
        (body,) = capture.bodies or ()
        assert body.interaction is None and body.data == data
        assert [start for start, _ in body.spans] == [f.pos.offset for f in capture.frames]
        _read_again(body)


def test_no_body_unless_asked_and_none_for_records_of_parsed_events() -> None:
    assert load(str(FIXTURES / "conversations/anthropic_two_turns.yaml")).bodies is None
    # an envelope's records and a JSON Lines log are parsed events, not a response body
    assert load(str(FIXTURES / "conversations/envelope_two_turns.jsonl"), bodies=True).bodies == []
    assert load(str(FIXTURES / "anthropic/empty_input_bug.jsonl"), bodies=True).bodies == []
