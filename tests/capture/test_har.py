"""HAR 1.2: entries that are LLM calls become request and stream frames; the rest are counted; positions."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from stream_doctor.capture import load
from stream_doctor.capture.base import CaptureError
from stream_doctor.capture.eventstream import encode_message
from stream_doctor.capture.har import READER
from tests.conftest import fixture_files

SSE = 'data: {"choices":[{"index":0,"delta":{"content":"hi"}}]}\n\ndata: [DONE]\n\n'


def entry(
    url: str, body: object, text: str, mime: str = "text/event-stream", method: str = "POST", **content: object
) -> dict:
    return {
        "request": {
            "method": method,
            "url": url,
            "headers": [
                {"name": "Authorization", "value": "Bearer sk-proj-secret"},
                {"name": "Cookie", "value": "a=b"},
            ],
            "postData": {"mimeType": "application/json", "text": json.dumps(body)} if body is not None else None,
        },
        "response": {"status": 200, "headers": [], "content": {"mimeType": mime, "text": text, **content}},
    }


def har(*entries: dict) -> bytes:
    return json.dumps(
        {"log": {"version": "1.2", "creator": {"name": "test", "version": "1"}, "entries": list(entries)}}, indent=2
    ).encode()


def test_llm_entries_become_frames_and_others_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "session.har"
    page = entry("https://app.example.com/", None, "<html></html>", "text/html", "GET")
    call = entry("https://api.openai.com/v1/chat/completions?key=AIzaSecret", {"model": "gpt-4o", "messages": []}, SSE)
    path.write_bytes(har(page, call))
    capture = load(str(path))
    assert capture.container == "har"
    assert [e.skipped is not None for e in capture.exchanges] == [True, False]
    request, chunk, done = capture.frames
    assert request.value["url"] == "https://api.openai.com/v1/chat/completions?key=[redacted]"
    assert request.value["headers"] == {"authorization": "[redacted]", "cookie": "[redacted]"}
    assert request.interaction == chunk.interaction == 2 and chunk.pos.number == 1
    text = path.read_text()
    line = text.splitlines()[chunk.pos.line - 1]
    assert '"text": "data: ' in line  # the body's own line
    assert done.data == b"[DONE]"


def test_each_entry_url_is_redacted_whether_it_repeats_the_last_or_not(tmp_path: Path) -> None:
    # the reader keeps the last URL's redaction (a session's calls go to one URL); a URL after it is its own
    path = tmp_path / "session.har"
    keyed = "https://api.openai.com/v1/chat/completions?key=AIzaSecret"
    urls = [keyed, keyed, "https://api.openai.com/v1/chat/completions", keyed.replace("Secret", "Other")]
    path.write_bytes(har(*(entry(url, {"model": "gpt-4o", "messages": []}, SSE) for url in urls)))
    requests = [frame.value["url"] for frame in load(str(path)).frames if frame.kind == "request"]
    redacted = "https://api.openai.com/v1/chat/completions?key=[redacted]"
    assert requests == [redacted, redacted, "https://api.openai.com/v1/chat/completions", redacted]


def test_base64_body_holds_a_binary_event_stream(tmp_path: Path) -> None:
    stream = encode_message({":event-type": "messageStart", ":message-type": "event"}, b'{"role":"assistant"}')
    body = base64.b64encode(stream).decode()
    call = entry(
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/x/converse-stream",
        {"messages": []},
        body,
        "application/vnd.amazon.eventstream",
        encoding="base64",
    )
    path = tmp_path / "bedrock.har"
    path.write_bytes(har(call))
    capture = load(str(path))
    assert capture.exchanges[0].body_container == "eventstream"
    assert capture.frames[1].event == "messageStart" and capture.frames[1].value == {"role": "assistant"}


def test_a_minified_har_is_not_taken_for_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "one-line.har"
    path.write_bytes(
        json.dumps(
            {"log": {"entries": [entry("https://api.anthropic.com/v1/messages", {"messages": []}, "")]}}
        ).encode()
    )
    assert load(str(path)).container == "har"
    assert READER.sniff(b'{"log": {') == 95 and READER.sniff(b'{"sd": "header"}') == 0


def test_unreadable_har(tmp_path: Path) -> None:
    path = tmp_path / "broken.har"
    path.write_bytes(b'{"log": {"entries": [')
    with pytest.raises(CaptureError, match="not a readable HAR file"):
        load(str(path))
    path.write_bytes(b'{"log": {"version": "1.2"}}')
    with pytest.raises(CaptureError, match="no log.entries"):
        load(str(path))


@pytest.mark.parametrize("path", fixture_files("conversations", suffixes=(".har",)), ids=lambda p: p.name)
def test_entries_are_read_one_at_a_time(path: Path) -> None:
    from stream_doctor.capture.har import _entries, _entries_start

    data = path.read_bytes()
    assert data[_entries_start(data)] == ord("[")
    entries = list(_entries(data))
    assert entries and all(isinstance(frame.value, dict) for frame in entries)
    for frame in entries:  # each entry at its own line and offset
        assert data[frame.pos.offset :].startswith(frame.data)
        assert frame.pos.line == data.count(b"\n", 0, frame.pos.offset) + 1


def test_a_har_broken_after_its_entries_gives_the_whole_document_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.har"
    path.write_bytes(har(entry("https://api.openai.com/v1/chat/completions", {"messages": []}, SSE))[:-1] + b"!")
    with pytest.raises(CaptureError, match="not a readable HAR file: not JSON"):
        load(str(path))


def _polly_call(text: str, encoding: str | None) -> dict:
    call = entry(
        "https://api.openai.com/v1/chat/completions", {"model": "gpt-4o", "messages": []}, text, encoding=encoding
    )
    call["response"]["headers"] = [{"name": "content-encoding", "value": "gzip"}]
    if encoding is None:
        del call["response"]["content"]["encoding"]
    return call


@pytest.mark.parametrize(
    ("version", "encode", "encoding"),
    [("Polly 4+", lambda chunk: base64.b64encode(chunk).decode(), "base64"), ("Polly 1-3", bytes.hex, None)],
)
def test_polly_keeps_a_content_encoded_body_as_a_list_of_its_chunks(
    tmp_path: Path, version: str, encode: object, encoding: str | None
) -> None:
    """@pollyjs/adapter-node-http stores a response whose headers name a content coding as the JSON text of
    its chunks, each still compressed: base64 with "encoding": "base64" (4 and later), hex before. Each
    chunk is decoded alone; decoding the list as one base64 text loses the stream."""
    import gzip

    compressed = gzip.compress(SSE.encode(), mtime=0)
    chunks = [compressed[:7], compressed[7:30], compressed[30:]]
    path = tmp_path / "polly.har"
    path.write_bytes(har(_polly_call(json.dumps([encode(c) for c in chunks]), encoding)))  # type: ignore[operator]
    capture = load(str(path))
    assert capture.exchanges[0].body_container == "sse", version
    assert [f.data for f in capture.frames[1:]] == [SSE.split("\n")[0][6:].encode(), b"[DONE]"]


def test_a_json_array_body_is_not_taken_for_chunks_without_a_content_coding(tmp_path: Path) -> None:
    """The near miss: without a Content-Encoding the text is the body itself (a JSON array reply)."""
    path = tmp_path / "array.har"
    path.write_bytes(
        har(entry("https://api.openai.com/v1/chat/completions", {"messages": []}, '["abcd"]', "application/json"))
    )
    capture = load(str(path))
    assert capture.problems == [] and capture.exchanges[0].body_size == len('["abcd"]')  # the text, as it is
