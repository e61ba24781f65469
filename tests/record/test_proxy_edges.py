"""The recording proxy records first and diagnoses after (issues 31 and 36): on loopback, against a fake
upstream, every exchange a client makes is forwarded, answered and written whatever its request body
holds; a diagnosis that fails counts for ``--fail-on``; the log escapes what the client and the
upstream sent; an unreachable upstream, a normal end and a port in use are said as what they are.

Issue 31's rows run ``stream-doctor record`` as a user runs it, a subprocess under an address-space limit
(``proxy_process.Proxy``: exit code, log, peak memory), each beside a near miss; the tests that reach into
the proxy (a listener replaced, a diagnosis made to fail) run it in-process (``proxy_server.RunningProxy``).
"""

from __future__ import annotations

import copy
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from stream_doctor import replay
from stream_doctor.util import jsontext
from tests.record.proxy_process import BASELINE, Proxy
from tests.record.proxy_server import RunningProxy
from tests.record.test_live import PATHS
from tests.record.test_proxy import envelopes, wait_for
from tests.record.upstream import FakeUpstream
from tests.request_bodies import FIELDS, set_field
from tests.test_adversarial import _limit as address_space_limit
from tests.test_hostile_writers import _ACTING as ACTING

#: the recording proxy in a subprocess under an address-space limit, before loopback upstreams
pytestmark = [pytest.mark.external, pytest.mark.slow]

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
#: orjson writes (254 levels); with the SD001 findings each gives on replay. The last is the near miss.
BODIES: list[tuple[dict[str, Any], int]] = [
    ({"model": "m", "stream": True, "tools": 7, "messages": [{"role": "user", "content": "?"}]}, 1),
    ({"model": "m", "stream": True, "messages": True}, 1),
    ({"model": "m", "stream": True, "messages": 1.5, "tools": {"name": "f"}}, 2),
    ({"model": "m", "stream": True, "messages": [{"role": "user", "content": nested(300)}]}, 0),
    ({"model": "m", "stream": True, "messages": [], "tools": []}, 0),  # the near miss: lists
]


def recorded_one_each(out: Path, path: str, answer: bytes, bodies: list[Any], content_type: str) -> list[Path]:
    """``bodies`` sent one at a time to ``path`` of the real proxy under its address-space limit, in front of an
    upstream that answers each with ``answer``: each answered with it (200), none an internal error, the run
    exits 0 within the memory bound, and an envelope each (none sends anything back), in the order sent."""
    with (
        FakeUpstream(answer, content_type=content_type) as upstream,
        Proxy(upstream.url, out, "--live") as proxy,
        httpx2.Client(base_url=proxy.url, timeout=30) as client,
    ):
        for body in bodies:
            response = client.post(path, content=jsontext.dumps(body))
            assert response.status_code == 200 and response.content == answer, body
        proxy.wait_for_lines(len(bodies))
        peak = proxy.peak()
        code = proxy.stop()
    assert code == 0 and peak < BASELINE, (code, peak)
    assert not any("internal error" in line or "Traceback" in line for line in proxy.lines), proxy.lines
    written = envelopes(out)
    assert len(written) == len(bodies)
    return written


def test_any_request_body_is_forwarded_answered_and_recorded(tmp_path: Path) -> None:
    bodies = [body for body, _ in BODIES]
    written = recorded_one_each(tmp_path / "out", "/v1/messages", ONE_CALL.read_bytes(), bodies, "text/event-stream")
    for (body, wrong), envelope in zip(BODIES, written, strict=True):
        report = replay(str(envelope))
        assert [c.call_id for c in report.calls] == [c.call_id for c in replay(str(ONE_CALL)).calls], body
        assert [f.code for f in report.findings if f.code == "SD001"] == ["SD001"] * wrong, body
        assert all(f.code in ("SD001",) for f in report.findings) or report.codes == replay(str(ONE_CALL)).codes


#: A request of each provider the proxy fronts that sends a whole turn back (a call and its result), so
#: every path of ``tests/request_bodies.FIELDS`` a reader of it reads is there to be given a wrong type.
HISTORY: dict[str, dict[str, Any]] = {
    "anthropic": {
        "model": "m", "stream": True, "tools": [{"name": "f", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": "?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_x", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "ok"}]},
        ],
    },
    "openai": {
        "model": "m", "stream": True, "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
        "messages": [
            {"role": "user", "content": "?"},
            {"role": "assistant", "tool_calls": [
                {"id": "call_x", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ]},
            {"role": "tool", "tool_call_id": "call_x", "content": "ok"},
        ],
    },
    "openai-responses": {
        "model": "m", "stream": True, "tools": [{"type": "function", "name": "f", "parameters": {}}],
        "input": [
            {"role": "user", "content": "?"},
            {"type": "function_call", "call_id": "call_x", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_x", "output": "ok"},
        ],
    },
    "gemini": {
        "tools": [{"functionDeclarations": [{"name": "f"}]}],
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
        "contents": [
            {"role": "user", "parts": [{"text": "?"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
        ],
    },
    "ollama": {
        "model": "m", "stream": True, "tools": [{"type": "function", "function": {"name": "f"}}],
        "messages": [
            {"role": "user", "content": "?"},
            {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]},
            {"role": "tool", "content": "ok"},
        ],
    },
}  # fmt: skip
#: The top-level fields each provider's request reader takes as lists: one of another type is SD001.
LISTS = {
    "anthropic": {"messages", "tools"},
    "openai": {"messages", "tools", "functions"},
    "openai-responses": {"input", "tools"},
    "gemini": {"contents", "tools"},
    "ollama": {"messages", "tools", "functions"},
}
RESPONSES = {
    "anthropic": ROOT / "fixtures/anthropic/one_call.sse",
    "openai": ROOT / "fixtures/openai/one_call.sse",
    "openai-responses": ROOT / "fixtures/openai-responses/one_call.sse",
    "gemini": ROOT / "fixtures/gemini/one_call.sse",
    "ollama": ROOT / "fixtures/ollama/one_call.jsonl",
}


@pytest.mark.parametrize("provider", sorted(HISTORY))
def test_every_field_a_reader_reads_of_the_wrong_type_costs_no_exchange(tmp_path: Path, provider: str) -> None:
    """Issue 31's class through the real proxy: each field of ``FIELDS`` given true, 1.5 or 7 in a request of
    each provider the proxy fronts is forwarded, answered, recorded and replayed with the stream read as
    before; a top-level field the reader takes as a list is SD001. The near miss: the request as it was."""
    cases: list[tuple[tuple[Any, ...], Any]] = [(path, value) for path in FIELDS for value in (True, 1.5, 7)]
    cases.append(((), None))  # the near miss: nothing changed
    bodies = []
    for path, value in cases:
        body = copy.deepcopy(HISTORY[provider])
        if path:
            set_field(body, path, value)
        bodies.append(body)
    content_type = "application/x-ndjson" if provider == "ollama" else "text/event-stream"
    answer = RESPONSES[provider].read_bytes()
    written = recorded_one_each(tmp_path / "out", PATHS[provider], answer, bodies, content_type)
    expected = [c.call_id for c in replay(str(RESPONSES[provider])).calls]
    for (path, value), envelope in zip(cases, written, strict=True):  # numbered in the order the requests came
        report = replay(str(envelope))
        assert [c.call_id for c in report.calls] == expected, (path, value)
        said = {f.message for f in report.findings if f.code == "SD001"}
        wrong = len(path) == 1 and path[0] in LISTS[provider]
        assert (f"the request's {path[0]} is not a list: read as none" in said) == wrong if path else not said


def test_a_live_check_that_fails_is_one_line_and_counts_as_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stream_doctor.record.live import LiveConversation

    def broken(self: Any, records: Any) -> None:
        raise RecursionError("maximum recursion depth exceeded\x1b]0;x\x07")

    out = tmp_path / "out"
    monkeypatch.setattr(LiveConversation, "records", broken)  # (what the live thread reads records with)
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


#: Paths a client may send, as aiohttp percent-decodes them, and as the log line must show them (before,
#: %1b]0;…%07 retitled the terminal the proxy ran in, and a line separator began a line of its own).
LOGGED_PATHS = {
    "a terminal title": ("/v1/messages%1b]0;TITLE%07", "/v1/messages\\x1b]0;TITLE\\x07"),
    "a NUL": ("/v1/%00messages", "/v1/\\x00messages"),
    "a line separator before a workflow command": (
        "/v1/messages%e2%80%a8::warning::x",
        "/v1/messages\\u2028::warning::x",
    ),
    "all of them between segments": (
        "/v1/%1b]0;retitled%07/%e2%80%a8::warning::x/messages",
        "/v1/\\x1b]0;retitled\\x07/\\u2028::warning::x/messages",
    ),
    # the near misses: plain paths, as they are
    "a plain path": ("/v1/messages", "/v1/messages"),
    "a plain path of three segments": ("/v1/plain/messages", "/v1/plain/messages"),
}


@pytest.fixture(scope="module")
def logged(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, int, list[str], list[str]]:
    """One proxy sent every path of ``LOGGED_PATHS``, one at a time so that its log's lines come in that order:
    its exit code at SIGTERM, its peak memory, its exchange lines and its whole log."""
    out = tmp_path_factory.mktemp("logged") / "out"
    with FakeUpstream(ONE_CALL.read_bytes()) as upstream, Proxy(upstream.url, out) as proxy:
        with httpx2.Client(base_url=proxy.url, timeout=30) as client:
            for path, _ in LOGGED_PATHS.values():
                client.post(path, json={"model": "m", "stream": True, "messages": []})
        lines = proxy.wait_for_lines(len(LOGGED_PATHS))
        peak = proxy.peak()
        code = proxy.stop()
    return code, peak, lines, proxy.lines


@pytest.mark.parametrize("case", list(LOGGED_PATHS))
def test_the_log_escapes_the_path_the_client_sent(logged: tuple[int, int, list[str], list[str]], case: str) -> None:
    code, peak, lines, log = logged
    assert code == 0 and peak < BASELINE, (code, peak)
    assert len(lines) == len(LOGGED_PATHS) and len(log) == len(LOGGED_PATHS), log
    line = lines[list(LOGGED_PATHS).index(case)]
    assert line.startswith(f"POST {LOGGED_PATHS[case][1]} 200 complete")
    assert line.isprintable() and not ACTING.search(line), line


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
    from stream_doctor.engine.stages import RunError

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


def _deep(provider: str, before: bytes) -> bytes:
    """The provider's one-call fixture with 5,000 unclosed ``[`` put into its arguments' first fragment."""
    answer = RESPONSES[provider].read_bytes()
    assert before in answer
    return answer.replace(before, before + b"[" * 5000, 1)


DEEP_CALLS = {
    "anthropic": _deep("anthropic", b'"partial_json":"'),
    "openai": _deep("openai", b'"arguments":"'),
    "openai-responses": _deep("openai-responses", b'"delta":"'),
}


@pytest.mark.parametrize(
    ("provider", "body", "options", "code"),
    [
        ("anthropic", DEEP_CALLS["anthropic"], ["--client", "anthropic-python"], 1),
        ("anthropic", DEEP_CALLS["anthropic"], [], 1),
        ("openai", DEEP_CALLS["openai"], ["--client", "all"], 1),
        ("openai-responses", DEEP_CALLS["openai-responses"], ["--client", "all"], 1),
        ("anthropic", ONE_CALL.read_bytes(), ["--client", "anthropic-python"], 0),  # the near miss: the fixture
    ],
    ids=["deep-client", "deep", "openai-deep-all", "responses-deep-all", "near-miss"],
)
def test_the_command_fails_on_a_deep_call_with_a_client_profile(
    tmp_path: Path, provider: str, body: bytes, options: list[str], code: int
) -> None:
    """issue 31: 5,000 unclosed ``[`` with ``--client anthropic-python`` killed the live thread (RecursionError)
    and the run exited 0; the SD201 error now counts (exit 1), as it does without ``--client``, and so it
    does for the same arguments in the other providers' calls with every client profile."""
    out = tmp_path / "out"
    with (
        FakeUpstream(body) as upstream,
        Proxy(upstream.url, out, "--live", "--fail-on", "error", *options) as proxy,
        httpx2.Client(base_url=proxy.url, timeout=30) as client,
    ):
        client.post(PATHS[provider], json={"model": "m", "stream": True, "messages": []})
        proxy.wait_for_lines(1)
        peak = proxy.peak()
        exit_code = proxy.stop()
    assert not any("Traceback" in line or "internal error" in line for line in proxy.lines), proxy.lines
    assert exit_code == code and peak < BASELINE, (exit_code, peak, proxy.lines)
    assert any(" SD201 " in line for line in proxy.lines) == (code == 1)
    if code:
        assert proxy.lines[-1] == "stream-doctor record: a finding reached --fail-on error (worst: error)"
