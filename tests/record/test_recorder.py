"""The Python recorder wrapped around the real Anthropic and OpenAI SDKs, against a fake upstream."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from stream_doctor import replay
from stream_doctor.capture import load
from stream_doctor.record import Recorder
from tests.record.upstream import FakeUpstream

#: the real SDKs through the recording transport, before a loopback upstream
pytestmark = [pytest.mark.external]

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
httpx2 = pytest.importorskip("httpx2")

ANTHROPIC_SSE = Path("fixtures/anthropic/one_call.sse")
OPENAI_SSE = Path("fixtures/openai/one_call.sse")


def calls(report):  # type: ignore[no-untyped-def]
    return [(c.call_id, c.name, c.arguments, c.status, c.fragment_count) for c in report.calls]


def test_anthropic_sdk_streams_unchanged_and_the_envelope_replays_to_the_same_calls(tmp_path: Path) -> None:
    envelope = tmp_path / "run.jsonl"
    with FakeUpstream(ANTHROPIC_SSE.read_bytes()) as upstream, Recorder(envelope) as recorder:
        client = anthropic.Anthropic(
            api_key="sk-ant-secret", base_url=upstream.url, http_client=httpx2.Client(transport=recorder.transport())
        )
        stream = client.messages.create(
            model="claude-haiku-4-5", max_tokens=100, messages=[{"role": "user", "content": "Weather?"}], stream=True
        )
        received = [event.to_dict() for event in stream]
        tool = next(e for e in received if e["type"] == "content_block_start" and e["index"] == 1)
        recorder.executed(tool["content_block"]["id"], tool["content_block"]["name"], tool["content_block"]["input"])
    assert received[0]["type"] == "message_start" and received[-1]["type"] == "message_stop"
    text = envelope.read_text()
    assert text.count('"sd":"event"') == len(load(str(ANTHROPIC_SSE)).frames)  # every event, pings included
    assert "sk-ant-secret" not in text and '"authorization":"[redacted]"' in text
    assert "sk-ant-secret" in upstream.seen[0].headers["authorization"]  # the request itself is untouched
    report = replay(str(envelope))
    assert calls(report) == calls(replay(str(ANTHROPIC_SSE)))
    assert report.codes == ("SD102",)  # the app ran the start event's {} placeholder
    assert report.stream.capture.container == "envelope"
    assert report.stream.requests and report.stream.requests[0]["model"] == "claude-haiku-4-5"


def test_anthropic_stream_helper_and_a_correct_execution(tmp_path: Path) -> None:
    envelope = tmp_path / "run.jsonl"
    with FakeUpstream(ANTHROPIC_SSE.read_bytes()) as upstream, Recorder(envelope) as recorder:
        client = anthropic.Anthropic(
            api_key="k", base_url=upstream.url, http_client=httpx2.Client(event_hooks=recorder.event_hooks())
        )
        with client.messages.stream(
            model="claude-haiku-4-5", max_tokens=100, messages=[{"role": "user", "content": "Weather?"}]
        ) as stream:
            message = stream.get_final_message()
        block = next(b for b in message.content if b.type == "tool_use")
        recorder.executed(block.id, block.name, block.input)
    report = replay(str(envelope))
    assert calls(report) == calls(replay(str(ANTHROPIC_SSE)))
    assert report.codes == () and report.executions == 1


def test_openai_sdk_async_client(tmp_path: Path) -> None:
    envelope = tmp_path / "run.jsonl"

    async def main(url: str, recorder: Recorder) -> list[object]:
        client = openai.AsyncOpenAI(
            api_key="sk-secret",
            base_url=f"{url}/v1",
            http_client=httpx2.AsyncClient(transport=recorder.async_transport()),
        )
        stream = await client.chat.completions.create(
            model="gpt-4.1", messages=[{"role": "user", "content": "Weather?"}], stream=True
        )
        return [chunk async for chunk in stream]

    with FakeUpstream(OPENAI_SSE.read_bytes()) as upstream, Recorder(envelope) as recorder:
        chunks = asyncio.run(main(upstream.url, recorder))
    assert len(chunks) == len(load(str(OPENAI_SSE)).frames) - 1  # every chunk but [DONE] reached the SDK
    assert "sk-secret" not in envelope.read_text()
    report = replay(str(envelope))
    assert calls(report) == calls(replay(str(OPENAI_SSE)))
    assert report.stream.capture.provider == "openai"


def test_an_upstream_that_dies_mid_stream_is_recorded_as_cut(tmp_path: Path) -> None:
    envelope = tmp_path / "run.jsonl"
    with FakeUpstream(ANTHROPIC_SSE.read_bytes(), die_after=10) as upstream, Recorder(envelope) as recorder:
        client = anthropic.Anthropic(
            api_key="k", base_url=upstream.url, http_client=httpx2.Client(transport=recorder.transport()), max_retries=0
        )
        stream = client.messages.create(
            model="m", max_tokens=100, messages=[{"role": "user", "content": "Weather?"}], stream=True
        )
        received = []
        with pytest.raises(Exception):  # noqa: B017 - the SDK's own error for a broken connection
            for event in stream:
                received.append(event)
    assert len(received) == 9  # the ten events sent whole, but the ping, which the SDK skips
    report = replay(str(envelope))
    assert report.stream.capture.frames == 1 + 10 + 1  # the request, ten events, the cut with the half event
    assert "SD003" in report.codes  # the cut, with why
    cut = next(f for f in report.findings if f.code == "SD003")
    assert "the connection failed" in cut.message
    assert report.calls[0].status == "abandoned"


def test_a_plain_httpx_client_gets_the_bytes_unchanged(tmp_path: Path) -> None:
    httpx = pytest.importorskip("httpx")
    envelope = tmp_path / "run.jsonl"
    body = ANTHROPIC_SSE.read_bytes()
    with FakeUpstream(body) as upstream, Recorder(envelope) as recorder:
        with httpx.Client(transport=recorder.transport(httpx.HTTPTransport())) as client:
            with client.stream(
                "POST", f"{upstream.url}/v1/messages?key=secret-k", content=b'{"stream": true}'
            ) as response:
                received = b"".join(response.iter_raw())
    assert received == body
    text = envelope.read_text()
    assert "secret-k" not in text
    assert calls(replay(str(envelope))) == calls(replay(str(ANTHROPIC_SSE)))


def test_a_client_that_stops_reading_leaves_a_readable_envelope(tmp_path: Path) -> None:
    envelope = tmp_path / "run.jsonl"
    with FakeUpstream(ANTHROPIC_SSE.read_bytes()) as upstream, Recorder(envelope) as recorder:
        client = anthropic.Anthropic(
            api_key="k", base_url=upstream.url, http_client=httpx2.Client(transport=recorder.transport())
        )
        stream = client.messages.create(
            model="m", max_tokens=1, messages=[{"role": "user", "content": "Hi"}], stream=True
        )
        for event in stream:
            if event.type == "content_block_start" and event.index == 1:
                break
        stream.close()
    report = replay(str(envelope))
    cut = next(f for f in report.findings if f.code == "SD003")
    assert "the client" in cut.message
    assert report.calls[0].status == "abandoned"
