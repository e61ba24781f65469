"""The recording proxy records first and diagnoses after (issues 31 and 36): on loopback, against a fake
upstream, every exchange a client makes is forwarded, answered and written whatever its request body
holds; a diagnosis that fails counts for ``--fail-on``; the log escapes what the client and the
upstream sent; an unreachable upstream, a normal end and a port in use are said as what they are.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from stream_doctor import replay
from tests.record.proxy_server import RunningProxy
from tests.record.test_live import _listening, free_port
from tests.record.test_proxy import envelopes, wait_for
from tests.record.upstream import FakeUpstream
from tests.test_adversarial import _limit as address_space_limit

pytest.importorskip("aiohttp")
httpx2 = pytest.importorskip("httpx2")
openai = pytest.importorskip("openai")

ROOT = Path(__file__).resolve().parents[2]
ONE_CALL = ROOT / "fixtures/anthropic/one_call.sse"
OPENAI_CALL = ROOT / "fixtures/openai/one_call.sse"


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


#: Request bodies whose fields a reader reads hold another type (issue 31: the proxy forwarded them, then
#: its grouping raised: a 500 to the client, a traceback, nothing recorded), and bodies nested deeper than
#: orjson writes (254 levels); with the SD001 findings each gives on replay.
BODIES: list[tuple[dict[str, Any], int]] = [
    ({"model": "m", "stream": True, "tools": 7, "messages": [{"role": "user", "content": "?"}]}, 1),
    ({"model": "m", "stream": True, "messages": True}, 1),
    ({"model": "m", "stream": True, "messages": 1.5, "tools": {"name": "f"}}, 2),
    ({"model": "m", "stream": True, "messages": [{"role": "user", "content": nested(300)}]}, 0),
    ({"model": "m", "stream": True, "messages": [], "tools": []}, 0),  # the near miss: lists
]


@pytest.mark.parametrize(("body", "wrong"), BODIES, ids=["tools", "messages", "both", "deep", "near-miss"])
def test_any_request_body_is_forwarded_answered_and_recorded(tmp_path: Path, body: dict[str, Any], wrong: int) -> None:
    out = tmp_path / "out"
    with FakeUpstream(ONE_CALL.read_bytes()) as upstream, RunningProxy(upstream.url, str(out)) as proxy:
        with httpx2.Client(base_url=proxy.url, timeout=30) as client:
            from stream_doctor import jsontext

            response = client.post("/v1/messages", content=jsontext.dumps(body))
        wait_for(lambda: len(proxy.lines) == 1)
    assert response.status_code == 200 and response.content == ONE_CALL.read_bytes()
    assert not any("internal error" in line for line in proxy.lines + proxy.live_lines), proxy.lines
    [envelope] = envelopes(out)
    report = replay(str(envelope))
    assert [c.call_id for c in report.calls] == [c.call_id for c in replay(str(ONE_CALL)).calls]
    assert [f.code for f in report.findings if f.code == "SD001"] == ["SD001"] * wrong
    assert all(f.code in ("SD001",) for f in report.findings) or report.codes == replay(str(ONE_CALL)).codes


def test_a_live_check_that_fails_is_one_line_and_counts_as_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stream_doctor.live import LiveConversation

    def broken(self: Any, record: Any, line: bytes, pos: Any) -> None:
        raise RecursionError("maximum recursion depth exceeded\x1b]0;x\x07")

    out = tmp_path / "out"
    monkeypatch.setattr(LiveConversation, "record", broken)
    with FakeUpstream(ONE_CALL.read_bytes()) as upstream, RunningProxy(upstream.url, str(out)) as proxy:
        with httpx2.Client(base_url=proxy.url, timeout=30) as client:
            response = client.post("/v1/messages", json={"model": "m", "stream": True, "messages": []})
        wait_for(lambda: len(proxy.lines) == 2)
    assert response.content == ONE_CALL.read_bytes() and len(envelopes(out)) == 1  # recorded all the same
    [said] = [line for line in proxy.lines if "no more live findings" in line]
    assert "RecursionError" in said and "\x1b" not in said and "\\x1b" in said
    assert proxy.live.broken == 1 and proxy.live.failed  # whatever --fail-on: nothing found is no pass


def test_a_live_check_that_runs_does_not_fail_a_clean_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with FakeUpstream(ONE_CALL.read_bytes()) as upstream, RunningProxy(upstream.url, str(out)) as proxy:
        with httpx2.Client(base_url=proxy.url, timeout=30) as client:
            client.post("/v1/messages", json={"model": "m", "stream": True, "messages": []})
        wait_for(lambda: len(proxy.lines) == 1)
    assert proxy.live.broken == 0 and not proxy.live.failed


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("/v1/messages%1b]0;TITLE%07", "/v1/messages\\x1b]0;TITLE\\x07"),
        ("/v1/%00messages", "/v1/\\x00messages"),
        ("/v1/messages%e2%80%a8::warning::x", "/v1/messages\\u2028::warning::x"),
        ("/v1/messages", "/v1/messages"),  # the near miss: a plain path, as it is
    ],
)
def test_the_log_escapes_the_path_the_client_sent(tmp_path: Path, path: str, shown: str) -> None:
    out = tmp_path / "out"
    with FakeUpstream(ONE_CALL.read_bytes()) as upstream, RunningProxy(upstream.url, str(out)) as proxy:
        with httpx2.Client(base_url=proxy.url, timeout=30) as client:
            client.post(path, json={"model": "m", "stream": True, "messages": []})
        wait_for(lambda: len(proxy.lines) == 1)
    [line] = proxy.lines
    assert line.startswith(f"POST {shown} 200 complete")
    assert line.isprintable()


def test_an_unreachable_upstream_is_a_502_naming_it_and_no_capture_finding(tmp_path: Path) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    out = tmp_path / "out"
    body = orjson.dumps({"model": "m", "stream": True, "messages": [{"role": "user", "content": "x" * 100_000}]})
    with RunningProxy(f"http://127.0.0.1:{port}", str(out)) as proxy, httpx2.Client(base_url=proxy.url) as client:
        response = client.post("/v1/messages", content=body)
        wait_for(lambda: len(proxy.lines) == 1)
    said = f"the upstream http://127.0.0.1:{port} could not be reached: [Errno 111] Connection refused"
    assert response.status_code == 502 and response.text == f"stream-doctor record: {said}\n"
    [line] = proxy.lines
    assert line.startswith(f"POST /v1/messages → {said} → ")
    [envelope] = envelopes(out)
    [request] = [r for r in map(orjson.loads, envelope.read_bytes().splitlines()) if r["sd"] == "request"]
    assert "partial" not in request and "problems" not in request  # the body was read whole: nothing was cut
    assert request["body"]["messages"][0]["content"] == "x" * 100_000
    assert request["response"] == {"status": None, "error": said}
    from stream_doctor.stages import RunError

    with pytest.raises(RunError, match="the capture holds no events"):  # no response: nothing to diagnose
        replay(str(envelope))


def test_the_openai_sdk_closing_after_done_is_a_normal_end(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with FakeUpstream(OPENAI_CALL.read_bytes()) as upstream, RunningProxy(upstream.url, str(out)) as proxy:
        client = openai.OpenAI(api_key="k", base_url=f"{proxy.url}/v1", max_retries=0)
        chunks = list(
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "?"}], stream=True)
        )
        client.close()
        wait_for(lambda: len(proxy.lines) == 1)
    assert chunks
    [line] = proxy.lines
    assert " 200 complete" in line and "disconnected" not in line, line


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "stream_doctor", "record", "--upstream", "http://127.0.0.1:9"]
            + ["--listen", f"127.0.0.1:{port}", "--out", str(tmp_path / "out")],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
            env=os.environ | {"PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "default"},
            preexec_fn=address_space_limit,
        )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"stream-doctor: error: --listen 127.0.0.1:{port}: Address already in use"]


def test_the_command_fails_on_a_deep_call_with_a_client_profile(tmp_path: Path) -> None:
    """issue 31: 5,000 unclosed ``[`` with ``--client anthropic-python`` killed the live thread (RecursionError)
    and the run exited 0; the SD201 error now counts (exit 1), as it does without ``--client``."""
    deep = ONE_CALL.read_bytes().replace(b'"partial_json":"', b'"partial_json":"' + b"[" * 5000, 1)
    for body, code in ((deep, 1), (ONE_CALL.read_bytes(), 0)):  # and the near miss: the fixture as it is
        assert _record_once(tmp_path / str(code), body, ["--client", "anthropic-python"]) == code


def _record_once(out: Path, body: bytes, options: list[str]) -> int:
    port = free_port()
    with FakeUpstream(body) as upstream:
        command = [sys.executable, "-m", "stream_doctor", "record", "--upstream", upstream.url, "--listen"]
        command += [f"127.0.0.1:{port}", "--out", str(out), "--live", "--fail-on", "error", *options]
        proxy = subprocess.Popen(
            command, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=os.environ | {"PYTHONPATH": str(ROOT)},
            preexec_fn=address_space_limit,
        )  # fmt: skip
        try:
            wait_for(lambda: _listening(port), 20)
            with httpx2.Client(timeout=30) as client:
                client.post(f"http://127.0.0.1:{port}/v1/messages", json={"model": "m", "stream": True, "messages": []})
            wait_for(lambda: any(out.glob("*.jsonl")) and b"message_stop" in next(out.glob("*.jsonl")).read_bytes())
            proxy.send_signal(signal.SIGTERM)
            _, stderr = proxy.communicate(timeout=30)
        finally:
            if proxy.poll() is None:
                proxy.kill()
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    return proxy.returncode
