"""The recording proxy end to end on loopback: a fake upstream streams a canned capture."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stream_doctor import replay
from stream_doctor.capture import load
from tests.conftest import plain_http_tls
from tests.record.proxy_server import RunningProxy
from tests.record.upstream import FakeUpstream

#: the recording proxy before a loopback upstream, with the real SDKs
pytestmark = [pytest.mark.external]

pytest.importorskip("aiohttp")
anthropic = pytest.importorskip("anthropic")
httpx2 = pytest.importorskip("httpx2")

ANTHROPIC_SSE = Path("fixtures/anthropic/one_call.sse")
OLLAMA_JSONL = Path("fixtures/ollama/one_call.jsonl")


def calls(report):  # type: ignore[no-untyped-def]
    return [(c.call_id, c.name, c.arguments, c.status, c.fragment_count) for c in report.calls]


def envelopes(out: Path) -> list[Path]:
    return sorted(out.glob("*.jsonl"))


def wait_for(condition, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_the_sdk_through_the_proxy_gets_every_byte_and_the_envelope_replays_to_the_same_calls(tmp_path: Path) -> None:
    out = tmp_path / "captures"
    with FakeUpstream(ANTHROPIC_SSE.read_bytes()) as upstream, RunningProxy(upstream.url, str(out)) as proxy:
        client = anthropic.Anthropic(api_key="sk-ant-secret-1", base_url=proxy.url, max_retries=0)
        events = list(
            client.messages.create(
                model="claude-haiku-4-5", max_tokens=100, messages=[{"role": "user", "content": "Hi"}], stream=True
            )
        )
        wait_for(lambda: len(proxy.lines) == 1)
    assert events[-1].type == "message_stop"
    seen = upstream.seen[0]
    assert seen.path_qs == "/v1/messages" and "sk-ant-secret-1" in seen.headers["authorization"]  # forwarded as is
    [envelope] = envelopes(out)
    text = envelope.read_text()
    assert "sk-ant-secret-1" not in text
    report = replay(str(envelope))
    assert calls(report) == calls(replay(str(ANTHROPIC_SSE)))
    assert report.codes == ()
    assert report.stream.capture.header is not None and report.stream.capture.header["provider"] == "anthropic"
    assert "complete, 15 events" in proxy.lines[0]


def test_bytes_pass_unchanged_and_secrets_never_reach_the_envelope(tmp_path: Path) -> None:
    out = tmp_path / "captures"
    body = ANTHROPIC_SSE.read_bytes()
    with (
        FakeUpstream(body) as upstream,
        RunningProxy(upstream.url, str(out), frozenset({"x-team-secret"})) as proxy,
        httpx2.Client(verify=plain_http_tls()) as client,
    ):
        headers = {
            "x-api-key": "secret-a",
            "api-key": "secret-b",
            "authorization": "Bearer secret-c",
            "x-team-secret": "secret-d",
            "anthropic-beta": "fine-grained-tool-streaming-2025-05-14",
        }
        request = b'{"model": "m",  "stream": true, "messages": []}'  # spacing kept: bytes forwarded as sent
        with client.stream(
            "POST",
            f"{proxy.url}/v1beta/models/g:streamGenerateContent?alt=sse&key=secret-e",
            content=request,
            headers=headers,
        ) as response:
            received = b"".join(response.iter_raw())
        wait_for(lambda: len(proxy.lines) == 1)
    assert received == body
    seen = upstream.seen[0]
    assert seen.body == request and seen.path_qs.endswith("key=secret-e")
    assert all(seen.headers[name] == value for name, value in headers.items())
    text = envelopes(out)[0].read_text()
    for secret in ("secret-a", "secret-b", "secret-c", "secret-d", "secret-e"):
        assert secret not in text
    assert "fine-grained-tool-streaming-2025-05-14" in text  # other headers are kept: they explain the stream


def test_a_client_that_disconnects_mid_stream(tmp_path: Path) -> None:
    out = tmp_path / "captures"
    with (
        FakeUpstream(ANTHROPIC_SSE.read_bytes(), pause=0.05) as upstream,
        RunningProxy(upstream.url, str(out)) as proxy,
    ):
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as client:
            client.sendall(
                b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 2\r\n\r\n{}"
            )
            received = b""
            while received.count(b"\n\n") < 4:  # the head and a few events
                chunk = client.recv(65536)
                assert chunk, f"the proxy closed the connection early: {received!r}"
                received += chunk
        wait_for(lambda: len(proxy.lines) == 1)
    assert "client disconnected" in proxy.lines[0]
    [envelope] = envelopes(out)
    report = replay(str(envelope))  # valid, readable, every event the upstream sent before the cut
    cut = [f for f in report.findings if f.code == "SD003"]
    assert cut and "the client disconnected mid-stream" in cut[0].message
    recorded = report.stream.capture.frames - 2  # but the request and the cut record
    assert 4 <= recorded <= upstream.sent_events < len(load(str(ANTHROPIC_SSE)).frames)


def test_a_client_that_disconnects_after_the_last_event_cut_nothing(tmp_path: Path) -> None:
    out = tmp_path / "captures"
    after = b": keep-alive\n\n" * 3  # the upstream goes on after message_stop (a relay's keep-alives)
    with (
        FakeUpstream(ANTHROPIC_SSE.read_bytes() + after, pause=0.05) as upstream,
        RunningProxy(upstream.url, str(out)) as proxy,
    ):
        with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as client:
            client.sendall(
                b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 2\r\n\r\n{}"
            )
            received = b""
            while b"message_stop" not in received:  # the last event, then the client goes
                chunk = client.recv(65536)
                assert chunk, f"the proxy closed the connection early: {received!r}"
                received += chunk
        wait_for(lambda: len(proxy.lines) == 1)
    assert proxy.lines[0].split(" 200 ")[1].startswith("complete")
    report = replay(str(envelopes(out)[0]))
    assert report.codes == ()  # no cut: nothing was due after message_stop


def test_an_upstream_that_dies_mid_stream(tmp_path: Path) -> None:
    out = tmp_path / "captures"
    with (
        FakeUpstream(ANTHROPIC_SSE.read_bytes(), die_after=10) as upstream,
        RunningProxy(upstream.url, str(out)) as proxy,
        httpx2.Client(verify=plain_http_tls()) as client,
    ):
        received = b""
        with pytest.raises(httpx2.RemoteProtocolError):  # the client sees the cut too
            with client.stream("POST", f"{proxy.url}/v1/messages", content=b"{}") as response:
                for chunk in response.iter_raw():
                    received += chunk
        wait_for(lambda: len(proxy.lines) == 1)
    assert "upstream failed mid-stream" in proxy.lines[0]
    report = replay(str(envelopes(out)[0]))
    assert report.stream.capture.frames == 1 + 10 + 1  # the request, the ten whole events, the cut
    cut = next(f for f in report.findings if f.code == "SD003")
    assert "the upstream connection failed" in cut.message
    assert report.calls[0].status == "abandoned"
    assert received.startswith(ANTHROPIC_SSE.read_bytes()[: len(received) - 40])


def test_json_lines_and_concurrent_exchanges_get_one_envelope_each(tmp_path: Path) -> None:
    out = tmp_path / "captures"
    with (
        FakeUpstream(OLLAMA_JSONL.read_bytes(), content_type="application/x-ndjson") as upstream,
        RunningProxy(upstream.url, str(out)) as proxy,
        httpx2.Client(verify=plain_http_tls()) as client,
    ):
        for _ in range(3):
            assert (
                client.post(f"{proxy.url}/api/chat", content=b'{"model": "qwen3"}').content == OLLAMA_JSONL.read_bytes()
            )
        wait_for(lambda: len(proxy.lines) == 3)
    found = envelopes(out)
    assert len(found) == 3
    for envelope in found:
        assert calls(replay(str(envelope))) == calls(replay(str(OLLAMA_JSONL)))


def test_an_unreachable_upstream_is_a_502_and_a_record(tmp_path: Path) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    out = tmp_path / "captures"
    with RunningProxy(f"http://127.0.0.1:{port}", str(out)) as proxy, httpx2.Client(verify=plain_http_tls()) as client:
        response = client.post(f"{proxy.url}/v1/messages", content=b"{}")
    assert response.status_code == 502 and "could not be reached" in response.text
    assert f'"error":"the upstream http://127.0.0.1:{port} could not be reached' in envelopes(out)[0].read_text()


def test_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "captures"
    with FakeUpstream(ANTHROPIC_SSE.read_bytes()) as upstream:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "stream_doctor",
                "record",
                "--upstream",
                upstream.url,
                "--listen",
                "127.0.0.1:0",
                "--out",
                str(out),
            ],
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stderr is not None
            started = process.stderr.readline()
            assert "listening on http://127.0.0.1:" in started, started
            port = int(started.split("http://127.0.0.1:")[1].split(",")[0])
            with httpx2.Client(verify=plain_http_tls()) as client:
                assert (
                    client.post(f"http://127.0.0.1:{port}/v1/messages", content=b"{}").content
                    == ANTHROPIC_SSE.read_bytes()
                )
            logged = process.stderr.readline()
            assert "POST /v1/messages 200 complete, 15 events" in logged
        finally:
            process.terminate()
            process.wait(10)
    assert len(envelopes(out)) == 1


def test_command_line_errors_are_one_line() -> None:
    from typer.testing import CliRunner

    from stream_doctor.cli import app

    runner = CliRunner()
    for args, said in (
        (["--upstream", "api.anthropic.com", "--out", "x"], "expected an http:// or https:// URL"),
        (["--upstream", "https://a", "--listen", "8080", "--out", "x"], "expected HOST:PORT"),
    ):
        result = runner.invoke(app, ["record", *args])
        assert result.exit_code == 2 and said in result.output and result.output.count("\n") == 1, result.output
