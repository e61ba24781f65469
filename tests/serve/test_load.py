"""``serve.load``: a capture's turns as the server plays them, from every container, and the captures
that cannot be served said in one line."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest

from stream_doctor.capture import load
from stream_doctor.serve.load import ServeError, load_script
from tests.conftest import FIXTURES


def test_an_envelope_is_written_back_as_the_sse_its_events_were() -> None:
    script = load_script(str(FIXTURES / "anthropic/empty_input_bug.jsonl"))
    (turn,) = script.turns
    recorded = turn.recorded
    assert script.provider == "anthropic" and recorded.status == 200
    assert dict(recorded.headers)["Content-Type"].startswith("text/event-stream")
    assert b"".join(data for _, data in recorded.events) == recorded.body
    # the served bytes read back as the same frames the envelope holds
    frames = [f for f in load("served.sse", data=recorded.body).frames if f.kind == "event"]
    originals = [f for f in load(str(FIXTURES / "anthropic/empty_input_bug.jsonl")).frames if f.kind == "event"]
    assert [(f.event, f.value) for f in frames] == [(f.event, f.value) for f in originals]
    # times are the recorded ones, counted from the request
    assert recorded.events[0][0] == pytest.approx(1.084)
    assert turn.request is not None and turn.request["body"]["model"] == "claude-sonnet-4-5-20250929"


def test_a_cassette_serves_each_interaction_byte_for_byte() -> None:
    path = FIXTURES / "conversations/anthropic_echo_empty_input.yaml"
    script = load_script(str(path))
    bodies = load(str(path), bodies=True).bodies or []
    assert [t.recorded.body for t in script.turns] == [b.data for b in bodies]
    assert [t.number for t in script.turns] == [1, 2]
    assert all(t.recorded.events[0][0] is None for t in script.turns)  # a cassette keeps no times


def test_a_gzip_body_keeps_its_coding_to_apply_again() -> None:
    script = load_script(str(FIXTURES / "conversations/anthropic_nock_gzip_hex.json"))
    assert [t.recorded.encoding for t in script.turns] == ["gzip", "gzip"]
    assert script.turns[0].recorded.body.startswith(b"event: message_start")  # decoded; served gzipped


def test_a_bare_stream_is_one_turn_without_a_request() -> None:
    script = load_script(str(FIXTURES / "anthropic/one_call.sse"))
    (turn,) = script.turns
    assert turn.request is None
    assert turn.recorded.body == (FIXTURES / "anthropic/one_call.sse").read_bytes()


def test_a_non_streamed_har_is_one_line_error(tmp_path: Path) -> None:
    answer = {"id": "msg_1", "type": "message", "role": "assistant", "content": [{"type": "text", "text": "hi"}]}
    entry = {
        "request": {
            "method": "POST",
            "url": "https://api.anthropic.com/v1/messages",
            "headers": [],
            "postData": {"text": "{}"},
        },
        "response": {
            "status": 200,
            "headers": [],
            "content": {"mimeType": "application/json", "text": orjson.dumps(answer).decode()},
        },
    }
    path = tmp_path / "plain.har"
    path.write_bytes(orjson.dumps({"log": {"version": "1.2", "entries": [entry]}}))
    with pytest.raises(ServeError) as raised:
        load_script(str(path))
    assert "\n" not in str(raised.value) and str(path) in str(raised.value)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"", "empty"),
        (b"\x00\x01binary", "could not recognise"),
        (gzip.compress(b"", mtime=0), "empty"),
    ],
)
def test_an_unreadable_capture_is_one_line_error(tmp_path: Path, content: bytes, said: str) -> None:
    path = tmp_path / "capture.bin"
    path.write_bytes(content)
    with pytest.raises(ServeError, match=said) as raised:
        load_script(str(path))
    assert "\n" not in str(raised.value)


def test_an_sdk_helper_log_is_not_served() -> None:
    with pytest.raises(ServeError, match="not the provider's wire"):
        load_script(str(FIXTURES / "anthropic/sdk_helper_one_call.jsonl"))


def test_an_envelope_of_an_eventstream_provider_is_not_served() -> None:
    with pytest.raises(ServeError, match="no response body this server can write"):
        load_script(str(FIXTURES / "bedrock/converse_one_call.jsonl"))


def test_an_eventstream_file_is_served_as_its_messages() -> None:
    script = load_script(str(FIXTURES / "bedrock/converse_parallel_calls.eventstream"))
    recorded = script.turns[0].recorded
    assert recorded.provider == "bedrock"
    assert dict(recorded.headers)["Content-Type"] == "application/vnd.amazon.eventstream"
    assert recorded.body == (FIXTURES / "bedrock/converse_parallel_calls.eventstream").read_bytes()
