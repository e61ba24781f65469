"""JSON recordings of exchanges: one-exchange {request, response} wrappers and nock recordings."""

from __future__ import annotations

import base64
import binascii
import gzip
import json
from pathlib import Path

import pytest

from stream_doctor.capture import load
from stream_doctor.capture.base import CaptureError

SSE = 'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n'
URL = "https://api.openai.com/v1/chat/completions"
BODY = {"model": "gpt-4o", "stream": True, "messages": []}


def frames(data: bytes) -> list[tuple[str, int | None]]:
    capture = load("rec.json", data=data)
    assert capture.container == "recording"
    return [(f.kind, f.interaction) for f in capture.frames]


def test_a_one_exchange_wrapper_is_one_turn_with_its_status() -> None:
    data = json.dumps(
        {
            "request": {"method": "POST", "url": URL, "headers": {"Authorization": "Bearer sk-secret"}, "body": "{}"},
            "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": SSE},
        }
    ).encode()
    capture = load("rec.json", data=data)
    assert [(f.kind, f.interaction) for f in capture.frames][:2] == [("request", 1), ("event", 1)]
    assert capture.exchanges[0].status == 200
    assert b"sk-secret" not in capture.frames[0].data  # credentials never pass through


def test_nock_bodies_as_text_hex_chunks_and_binary_hex() -> None:
    gz = gzip.compress(SSE.encode(), mtime=0)
    chunks = [binascii.hexlify(gz[:10]).decode(), binascii.hexlify(gz[10:]).decode()]
    entries = [
        {"scope": "https://api.openai.com:443", "method": "POST", "path": "/v1/chat/completions", "body": BODY,
         "status": 200, "response": SSE},
        {"scope": "https://api.openai.com:443", "method": "POST", "path": "/v1/chat/completions", "body": BODY,
         "status": 200, "response": chunks, "rawHeaders": ["Content-Encoding", "gzip"]},
        {"scope": "https://api.openai.com:443", "method": "POST", "path": "/v1/chat/completions", "body": BODY,
         "status": 200, "response": binascii.hexlify(SSE.encode()).decode(), "responseIsBinary": True},
        {"scope": "https://api.openai.com:443", "method": "GET", "path": "/v1/models", "status": 200,
         "response": {"data": []}},
    ]  # fmt: skip
    found = frames(json.dumps(entries).encode())
    assert [n for kind, n in found if kind == "request"] == [1, 2, 3]
    assert sum(1 for kind, n in found if kind == "event") == 6  # a chunk and [DONE] in each of three streams


def test_a_json_object_that_is_not_an_exchange_is_not_taken_for_one() -> None:
    assert load("x.json", data=b'{"hello": "world"}').container != "recording"
    with pytest.raises(CaptureError) as caught:
        load("x.bin", data=b"<html>not a capture</html>")
    assert "recording: neither" in str(caught.value)  # the one-line error says what each reader wanted


def test_nock_14_raw_headers_object_and_a_deflated_body_kept_as_sent() -> None:
    """nock 14 (@mswjs/interceptors) writes ``rawHeaders`` as an object and compresses again what fetch
    decoded, keeping it as hex chunks: the body is undone by its Content-Encoding, even deflate, which
    has no magic number to be recognised by."""
    import zlib

    entry = {
        "scope": "https://api.openai.com:443", "method": "POST", "path": "/v1/chat/completions", "body": BODY,
        "status": 200, "response": [zlib.compress(SSE.encode()).hex()], "responseIsBinary": False,
        "rawHeaders": {"content-encoding": "deflate", "content-type": "text/event-stream; charset=utf-8"},
    }  # fmt: skip
    capture = load("rec.json", data=json.dumps([entry]).encode())
    assert capture.problems == []
    assert capture.exchanges[0].body_container == "sse"
    assert [f.kind for f in capture.frames] == ["request", "event", "event"]


def _transcript(chunks: list[object], **extra: object) -> bytes:
    """A ReqLLM transcript as ``ReqLLM.Test.Transcript.to_json`` writes it: Jason sorts the keys."""
    request = {"body": {"b64": "e30="}, "canonical_json": BODY, "headers": {}, "method": "POST", "url": URL}
    document = {"captured_at": "2026-02-11T08:14:52.318204Z", "chunks": chunks, "model_spec": "openai:gpt-4o",
                "provider": "openai", "request": request, "response": {"body": None, "headers": {}, "status": 200},
                **extra}  # fmt: skip
    return json.dumps(document, indent=2, sort_keys=True).encode()


def test_a_req_llm_transcript_is_its_chunks_joined_whatever_the_byte_boundaries() -> None:
    cut = SSE.encode()
    chunks = [{"b64": binascii.b2a_base64(part, newline=False).decode()} for part in (cut[:7], cut[7:40], cut[40:])]
    capture = load("fixture.json", data=_transcript(chunks))
    assert [(f.kind, f.interaction) for f in capture.frames] == [("request", 1), ("event", 1), ("event", 1)]
    assert capture.problems == []
    # the older files keep each chunk as a plain string
    assert len(load("fixture.json", data=_transcript([SSE])).frames) == 3


def test_a_req_llm_chunk_that_is_not_base64_is_a_one_line_error() -> None:
    with pytest.raises(CaptureError) as caught:
        load("fixture.json", data=_transcript([{"b64": "not base64!"}]))
    assert str(caught.value).endswith("not a readable ReqLLM transcript: chunk 1 is not base64")


def test_an_older_req_llm_transcript_keeps_the_body_as_base64_in_a_one_exchange_wrapper() -> None:
    """ReqLLM's first transcripts had no ``chunks``: the response's bytes as ``{"b64"}`` in
    ``response.body``, the request as base64 with ``canonical_json`` beside it."""
    encoded = binascii.b2a_base64(SSE.encode(), newline=False).decode()
    data = json.dumps(
        {
            "request": {"body": {"b64": "e30="}, "canonical_json": BODY, "headers": {}, "method": "POST", "url": URL},
            "response": {"body": {"b64": encoded}, "headers": {"content-type": "text/event-stream"}, "status": 200},
        }
    ).encode()
    capture = load("fixture.json", data=data)
    assert [f.kind for f in capture.frames] == ["request", "event", "event"]
    assert b'"model"' in capture.frames[0].data  # the request read from canonical_json, not {"b64": …}


def mastra(response: dict, **request: object) -> dict:
    return {
        "hash": "0f3c9e21a7b4d85e",
        "request": {"url": URL, "method": "POST", "body": BODY, "timestamp": 1770767968084, **request},
        "response": {"status": 200, "statusText": "OK", "headers": {"content-type": "text/event-stream"}, **response},
    }


def test_mastra_recordings_join_their_chunks_whatever_the_cut() -> None:
    # Mastra's llm-recorder keeps a stream as the decoded network chunks; a chunk may end inside an event
    cut = [SSE[:17], SSE[17:40], SSE[40:]]
    streamed = mastra({"chunks": cut, "chunkTimings": [3, 1, 0], "isStreaming": True})
    whole = mastra({"body": {"id": "chatcmpl-1", "object": "chat.completion"}, "isStreaming": False})
    for document in (
        [streamed, whole],
        {"meta": {"name": "suite", "createdAt": "2026-02-10"}, "recordings": [streamed]},
    ):
        capture = load("rec.json", data=json.dumps(document, indent=2).encode())
        assert capture.container == "recording"
        events = [f for f in capture.frames if f.kind == "event" and f.interaction == 1]
        assert [json.loads(f.data)["choices"][0]["delta"]["content"] for f in events[:1]] == ["hi"]
        assert len(events) == 2  # the content chunk and [DONE], each whole although the cuts split them


def test_an_array_that_does_not_open_with_a_mastra_recording_is_not_read_as_one() -> None:
    from stream_doctor.capture.recordings import READER

    assert READER.sniff(json.dumps([mastra({"chunks": [SSE]})]).encode()) == 95
    assert READER.sniff(b'{"meta": {"name": "x"}, "recordings": [') == 95
    assert READER.sniff(json.dumps([{"request": {}, "hash": "x"}]).encode()) == 0  # hash not first
    assert READER.sniff(b'{"meta": {"name": "x"}, "entries": [') == 0


FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "conversations"


def test_a_test_agent_body_marked_base64_is_its_bytes_an_event_stream_inside() -> None:
    """ddapm-test-agent stores a body with a NUL byte (an AWS event stream) or not UTF-8 as ``"base64:"`` and its
    base64 (``vcr_proxy._decode_body``), and replays it decoded (``_encode_body``): the body is those bytes."""
    path = FIXTURES / "bedrock_test_agent_base64_eventstream.json"
    capture = load(str(path), bodies=True)
    recorded = json.loads(path.read_text())["response"]["body"]
    (body,) = capture.bodies or []
    assert body.container == "eventstream" and body.data == base64.b64decode(recorded.removeprefix("base64:"))
    events = [f.event for f in capture.frames if f.kind == "event"]
    assert events[:2] == ["messageStart", "contentBlockStart"] and events[-1] == "metadata"
    assert capture.frames[0].kind == "request" and b"get_weather" in capture.frames[0].data


def test_a_test_agent_text_body_that_mentions_base64_stays_text() -> None:
    # the near miss: a text body is stored as it is; "base64:" inside an argument is the argument's text
    capture = load(str(FIXTURES / "openai_test_agent_text_body.json"), bodies=True)
    (body,) = capture.bodies or []
    assert body.container == "sse" and b"base64:aGVsbG8=" in body.data


def test_a_test_agent_body_marked_base64_that_is_not_is_a_one_line_error() -> None:
    data = json.dumps(
        {
            "request": {"method": "POST", "url": URL, "headers": {}, "body": "{}"},
            "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": "base64:not*base64"},
        }
    ).encode()
    with pytest.raises(CaptureError) as caught:
        load("rec.json", data=data)
    assert str(caught.value).endswith("not a readable test agent cassette: response body is not base64")
