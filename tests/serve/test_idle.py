"""A client that stops reading its answer is dropped after the server's idle timeout (``wire.IDLE_TIMEOUT``;
the fixture's ``idle_timeout=``, here one second), said as a verdict, and the server answers the next client;
a near miss, a client that reads slowly with pauses shorter than the timeout, gets its whole stream. So
does a client that sends its request body too slowly: 408 in the provider's shape, then the next client. The
command line sets the bound with ``--idle-timeout``, checked as it is read."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

pytest.importorskip("aiohttp")
httpx = pytest.importorskip("httpx")

from stream_doctor.serve.load import load_script  # noqa: E402
from tests.conftest import first_in_the_inner_loop, plain_http_tls  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
IDLE = 1.0
TIMEOUT = 20.0
#: a text delta this large, and this many of them: more than the loopback socket's and aiohttp's buffers hold
DELTA = 256 * 1024
DELTAS = 64


def _big_capture(folder: Path) -> str:
    """An Anthropic stream of 16 MiB of text: a client that reads none of it blocks the server's writes."""
    message = {"id": "msg_idle", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5"}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**message, "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x" * DELTA}}
            for _ in range(DELTAS)
        ),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]
    records = [
        {"sd": "header", "version": 1, "provider": "anthropic"},
        {"sd": "request", "method": "POST", "url": "https://api.anthropic.com/v1/messages", "body": _request()},
        *({"sd": "event", "event": e["type"], "data": e} for e in events),
    ]
    path = folder / "big.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


def _request() -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 64,
        "stream": True,
        "messages": [{"role": "user", "content": "Say x."}],
    }


def _head(port: int, body: bytes, length: int | None = None) -> bytes:
    return (
        f"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body) if length is None else length}\r\n\r\n"
    ).encode() + body


def _never_reads(port: int) -> socket.socket:
    client = socket.socket()
    client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # a small window: the server's writes block
    client.connect(("127.0.0.1", port))
    client.sendall(_head(port, orjson.dumps(_request())))
    return client


def test_a_client_that_stops_reading_is_dropped_and_the_next_one_is_served(
    stream_doctor_server: Any, tmp_path: Path
) -> None:
    capture = _big_capture(tmp_path)
    server = stream_doctor_server(capture, idle_timeout=IDLE)
    began = time.monotonic()
    stuck = _never_reads(server.port)
    try:
        stuck.settimeout(TIMEOUT)
        time.sleep(IDLE * 3)  # the server's write blocks, then its idle timeout drops the connection
        other = {**_request(), "max_tokens": 65}  # another application's request (the same body: a retry)
        answered = httpx.post(server.url + "/v1/messages", json=other, timeout=TIMEOUT, verify=plain_http_tls())
        assert answered.status_code == 200 and answered.content == load_script(capture).turns[0].recorded.body
        got = 0
        try:  # what the server had sent, then the end of the connection (a reset, or none)
            while chunk := stuck.recv(1 << 20):
                got += len(chunk)
        except OSError:
            pass
        assert got < len(answered.content)  # cut short, never finished
    finally:
        stuck.close()
    judged = server.stop()
    assert time.monotonic() - began < TIMEOUT
    endings = sorted(turn.ending for one in judged for turn in one.served.turns)
    assert endings == ["served", "stalled"]
    (stalled,) = [one for one in judged if one.served.turns[0].ending == "stalled"]
    (verdict,) = stalled.verdicts
    assert verdict.severity.label == "error" and "stopped reading turn 1 after" in verdict.message
    assert "idle timeout" in verdict.message


def test_a_slow_reader_within_the_idle_timeout_gets_the_whole_stream(stream_doctor_server: Any, tmp_path: Path) -> None:
    capture = _big_capture(tmp_path)
    server = stream_doctor_server(capture, idle_timeout=IDLE)
    received = bytearray()
    with httpx.Client(timeout=TIMEOUT, verify=plain_http_tls()) as client:
        with client.stream("POST", server.url + "/v1/messages", json=_request()) as response:
            for number, chunk in enumerate(response.iter_raw(1 << 20)):
                received += chunk
                if number < 4:
                    time.sleep(IDLE / 3)  # pauses, each shorter than the timeout
    assert bytes(received) == load_script(capture).turns[0].recorded.body
    (judged,) = server.stop()
    assert [t.ending for t in judged.served.turns] == ["served"]


def test_a_request_body_that_stops_arriving_is_408_and_the_next_client_is_served(
    stream_doctor_server: Any, tmp_path: Path
) -> None:
    capture = _big_capture(tmp_path)
    server = stream_doctor_server(capture, idle_timeout=IDLE)
    body = orjson.dumps(_request())
    with socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT) as client:
        client.sendall(_head(server.port, body[:10], length=len(body)))  # promises more than it sends
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += client.recv(4096)
    assert answer.startswith(b"HTTP/1.1 408")
    answered = httpx.post(server.url + "/v1/messages", json=_request(), timeout=TIMEOUT, verify=plain_http_tls())
    assert answered.status_code == 200


def test_the_cli_idle_timeout_drops_a_client_that_stops_reading(tmp_path: Path) -> None:
    """``serve --idle-timeout 1``: the client that reads nothing is dropped within seconds (the default is a
    minute), said as a verdict on stop, and a client reading meanwhile is served whole."""
    capture = _big_capture(tmp_path)
    command = [sys.executable, "-m", "stream_doctor", "serve", capture, "--port", "0", "--out", str(tmp_path / "out")]
    process = subprocess.Popen(
        [*command, "--idle-timeout", str(IDLE)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None
        exported = dict(process.stdout.readline().removeprefix("export ").strip().split("=", 1) for _ in range(2))
        port = int(exported["ANTHROPIC_BASE_URL"].rsplit(":", 1)[1])
        began = time.monotonic()
        stuck = _never_reads(port)
        try:
            time.sleep(IDLE * 3)  # the write blocks, then the idle timeout drops the connection
            other = {**_request(), "max_tokens": 65}  # another application's request (the same body: a retry)
            answered = httpx.post(
                exported["ANTHROPIC_BASE_URL"] + "/v1/messages", json=other, timeout=TIMEOUT, verify=plain_http_tls()
            )
            assert answered.status_code == 200
        finally:
            stuck.close()
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=TIMEOUT)
    assert time.monotonic() - began < TIMEOUT
    assert process.returncode == 1, err  # the dropped client's verdict is an error
    assert "2 conversations with the application" in out and "Traceback" not in err
    assert out.count("stopped reading turn 1 after") == 1 and "dropped after the server's idle timeout" in out


@pytest.mark.parametrize("seconds", first_in_the_inner_loop(["0", "-1", "nan", "inf", "soon"]))
def test_the_cli_idle_timeout_is_checked_as_the_command_line_is_read(seconds: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "stream_doctor", "serve", "capture.sse", "--idle-timeout", seconds],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        timeout=TIMEOUT,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"stream-doctor: error: --idle-timeout {seconds}: ") and done.stderr.count("\n") == 1
