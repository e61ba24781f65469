"""The proxy's live findings: the same as ``replay`` gives on the envelope it wrote, printed as the
conversation goes, and an exit code a test harness can fail on."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2
import orjson
import pytest

from stream_doctor import replay
from stream_doctor.capture import load
from stream_doctor.capture.base import Pos
from stream_doctor.record.conversations import GROUPING
from stream_doctor.record.live import Live
from stream_doctor.values.options import Options
from tests.conftest import fixture_files, plain_http_tls
from tests.record.proxy_server import RunningProxy
from tests.record.upstream import FakeUpstream

#: the recording proxy before a loopback upstream
pytestmark = [pytest.mark.external]

pytest.importorskip("aiohttp")

FIXTURES = Path("fixtures")
#: Where a client sends a streamed request, for each provider the proxy can front (``writer.provider_of``).
PATHS = {
    "anthropic": "/v1/messages",
    "openai": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "gemini": "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    "ollama": "/api/chat",
}


def single_responses(provider: str) -> list[Path]:
    """The provider's fixtures that are one response body as the wire carries it (not an envelope)."""
    return fixture_files(provider, suffixes=(".sse", ".jsonl") if provider == "ollama" else (".sse",))


def found(findings: Any) -> Counter[tuple[str, str | None, str]]:
    return Counter((f.code, f.call_id, str(f.location)) for f in findings)


@pytest.mark.parametrize("provider", sorted(PATHS))
def test_live_findings_are_replays_findings_for_every_fixture_served_through_the_proxy(
    tmp_path: Path, provider: str
) -> None:
    fixtures = single_responses(provider)
    assert fixtures
    bodies = {path.name: path.read_bytes() for path in fixtures}
    content_type = "application/x-ndjson" if provider == "ollama" else "text/event-stream"

    def choose(request: bytes) -> bytes:
        return bodies[orjson.loads(request)["fixture"]]

    out = tmp_path / "out"
    with (
        FakeUpstream(b"", content_type=content_type, choose=choose) as upstream,
        RunningProxy(upstream.url, str(out)) as proxy,
        httpx2.Client(base_url=proxy.url, timeout=30, verify=plain_http_tls()) as client,
    ):
        for name in bodies:
            body = {"model": "m", "stream": True, "fixture": name, "messages": [{"role": "user", "content": name}]}
            client.post(PATHS[provider], json=body).read()
        wait_for(lambda: len(proxy.lines) == len(bodies))
    conversations = {c.path: c for c in proxy.live.conversations}
    assert len(conversations) == len(bodies)  # nothing sent back: a conversation each
    compared = 0
    for path, conversation in conversations.items():
        fixture = load(path).frames[0].value["body"]["fixture"]
        expected = found(replay(path).findings)
        assert found(conversation.findings) == expected, fixture
        compared += sum(expected.values())
    assert compared > 0  # the fixtures show findings: the comparison is not of empty lists
    # one line per finding, and a summary per conversation
    summaries = [line for line in proxy.live_lines if re.search(r": 1 exchange, \d+ errors?", line)]
    assert len(summaries) == len(bodies)
    assert len(proxy.live_lines) == len(bodies) + sum(len(c.findings) for c in conversations.values())


# -- the empty-input bug, seen live and in the replay, and the exit code ---------------------------

ONE_CALL = FIXTURES / "anthropic" / "one_call.sse"
TEXT = FIXTURES / "anthropic" / "text_answer.sse"


def call_of(body: bytes) -> tuple[str, str, dict[str, Any]]:
    report = replay(body)
    [call] = report.calls
    assert call.call_id and call.name
    return call.call_id, call.name, call.arguments


def agent_turns(url: str, echoed: dict[str, Any] | None) -> None:
    """Two turns of an agent: the second sends the first turn's call back with ``echoed`` as its
    input (None: the input it streamed), and its result."""
    call_id, name, streamed = call_of(ONE_CALL.read_bytes())
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Lisbon?"}]
    with httpx2.Client(base_url=url, timeout=30, verify=plain_http_tls()) as client:
        body = {"model": "claude-haiku-4-5", "max_tokens": 100, "stream": True, "messages": messages}
        client.post("/v1/messages", json=body, headers={"x-api-key": "sk-ant-live-1"}).read()
        tool_use = {"type": "tool_use", "id": call_id, "name": name, "input": streamed if echoed is None else echoed}
        messages += [
            {"role": "assistant", "content": [tool_use]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "21 °C"}]},
        ]
        client.post("/v1/messages", json=body | {"messages": messages}, headers={"x-api-key": "sk-ant-live-1"}).read()


def second_turn(request: bytes) -> bytes:
    return TEXT.read_bytes() if b"tool_result" in request else ONE_CALL.read_bytes()


def test_a_conversation_is_one_envelope_and_the_empty_input_echo_is_sd608_live_and_in_replay(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with (
        FakeUpstream(b"", choose=second_turn) as upstream,
        RunningProxy(upstream.url, str(out)) as proxy,
    ):
        agent_turns(proxy.url, {})
        wait_for(lambda: len(proxy.lines) == 2)
        # SD608 is printed when the second request passes, before the proxy stops
        wait_for(lambda: any(" SD608 " in line for line in proxy.live_lines))
        assert not any(": 2 exchanges" in line for line in proxy.live_lines)
    [envelope] = sorted(out.glob("*.jsonl"))
    header = orjson.loads(envelope.read_bytes().split(b"\n", 1)[0])
    assert header["grouping"] == GROUPING and header["exchanges"] == 2 and header["started"].endswith("Z")
    report = replay(str(envelope))
    assert len(report.turns) == 2
    assert [(f.code, f.call_id) for f in report.findings] == [("SD608", call_of(ONE_CALL.read_bytes())[0])]
    [conversation] = proxy.live.conversations
    assert found(conversation.findings) == found(report.findings)  # the same place too
    [line] = [line for line in proxy.live_lines if " SD608 " in line]
    assert line.startswith("error   SD608 echoed-empty-input  ") and str(report.findings[0].location) in line
    assert proxy.live_lines[-1].endswith(": 2 exchanges, 1 error, 0 warnings, 0 info")


def test_a_call_sent_back_as_it_streamed_continues_the_conversation_with_no_finding(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with (
        FakeUpstream(b"", choose=second_turn) as upstream,
        RunningProxy(upstream.url, str(out)) as proxy,
    ):
        agent_turns(proxy.url, None)
        wait_for(lambda: len(proxy.lines) == 2)
    [envelope] = sorted(out.glob("*.jsonl"))
    assert replay(str(envelope)).codes == ()
    assert proxy.live_lines == [f"{envelope}: 2 exchanges, 0 errors, 0 warnings, 0 info"]


def test_requests_that_send_nothing_back_are_conversations_of_their_own_even_at_once(tmp_path: Path) -> None:
    """Two agents through one proxy, interleaved: each conversation stays in its own file."""
    out = tmp_path / "out"
    with (
        FakeUpstream(b"", choose=second_turn, pause=0.01) as upstream,
        RunningProxy(upstream.url, str(out)) as proxy,
    ):
        import threading

        agents = [threading.Thread(target=agent_turns, args=(proxy.url, echo)) for echo in ({}, None)]
        for agent in agents:
            agent.start()
        for agent in agents:
            agent.join(60)
        wait_for(lambda: len(proxy.lines) == 4)
    envelopes = sorted(out.glob("*.jsonl"))
    assert len(envelopes) == 2
    reports = [replay(str(path)) for path in envelopes]
    assert all(len(report.turns) == 2 for report in reports)
    assert sorted(report.codes for report in reports) == [(), ("SD608",)]
    # each file: one conversation, its second request sending back its own first turn's call
    for path in envelopes:
        bodies = [frame.value["body"] for frame in load(str(path)).frames if frame.kind == "request"]
        assert len(bodies[1]["messages"]) == 3


def test_the_live_findings_reach_the_clients_named(tmp_path: Path) -> None:
    """``--client``: what a named client would hand the tool is judged live too (SD8xx), as replay judges it."""
    out = tmp_path / "out"
    with (
        FakeUpstream((FIXTURES / "anthropic" / "no_argument_tool.sse").read_bytes()) as upstream,
        RunningProxy(upstream.url, str(out), options=Options(clients=("all",), client_mode="model")) as proxy,
        httpx2.Client(base_url=proxy.url, timeout=30, verify=plain_http_tls()) as client,
    ):
        client.post("/v1/messages", json={"model": "m", "stream": True, "messages": []}).read()
        wait_for(lambda: len(proxy.lines) == 1)
    [envelope] = sorted(out.glob("*.jsonl"))
    [conversation] = proxy.live.conversations
    expected = replay(
        str(envelope), clients="all", client_mode="model"
    ).findings  # the models: test_live_runs.py runs them
    assert any(f.code.startswith("SD8") for f in expected)
    assert found(conversation.findings) == found(expected)


def test_fail_on_says_whether_a_finding_reached_it() -> None:
    live = Live(Options())
    assert not live.failed
    from stream_doctor.values.findings import Finding, Location, Severity

    warning = Finding("SD000", "x", Severity.WARNING, "m", "h", Location("p"))
    conversation = live.listener("p.jsonl", "anthropic")
    live.found(conversation, [warning])
    assert not live.failed  # the default, error
    assert Live(Options(fail_on=Severity.WARNING)).failed is False
    strict = Live(Options(fail_on=Severity.WARNING))
    strict.found(strict.listener("p.jsonl", "anthropic"), [warning])
    assert strict.failed


# -- the live thread: the proxy never waits for it ------------------------------------------------


def held_up(live: Live) -> tuple[Any, threading.Event, threading.Event]:
    """A conversation of ``live`` whose diagnosis of a record waits for ``gate`` (a slow turn end);
    ``reading`` is set when the live thread is held there."""
    handle = live.queued("p.jsonl", "anthropic")
    gate, reading = threading.Event(), threading.Event()
    read = handle.conversation.records  # (what the live thread reads a queued item of records with)

    def slow(records: Any) -> None:
        reading.set()
        assert gate.wait(30)
        read(records)

    handle.conversation.records = slow  # type: ignore[method-assign]
    return handle, gate, reading


def test_records_the_diagnosis_has_no_room_for_are_counted_and_said_once_never_waited_for() -> None:
    said: list[str] = []
    printed: list[str] = []
    live = Live(Options(), printed.append, said.append, queue_bytes=4096)
    handle, gate, reading = held_up(live)
    header = {"sd": "header", "v": 1}
    handle.record(header, b"x" * 1000, Pos(0, 1, 0))
    assert reading.wait(30)  # the live thread holds the first record
    for _ in range(4):  # 2,512 bytes each as estimated: the first waits in the queue, the next do not fit
        handle.record(header, b"x" * 1000, Pos(0, 1, 0))
    assert not gate.is_set()  # every call came back while the diagnosis was held up
    assert handle.skipped == 3 and handle.assistant_turn() == (frozenset(), frozenset())
    assert len(said) == 1 and said[0].startswith("stream-doctor record: no more live findings for p.jsonl: ")
    handle.close()
    gate.set()
    assert live.drain(30)
    assert live.undiagnosed == 3
    assert printed == ["p.jsonl: 0 exchanges, 0 errors, 0 warnings, 0 info; 3 records not diagnosed live (replay it)"]


def test_a_queue_with_room_diagnoses_every_record() -> None:
    printed: list[str] = []
    live = Live(Options(), printed.append, queue_bytes=4096)
    handle, gate, _ = held_up(live)
    handle.record({"sd": "header", "v": 1}, b"x" * 1000, Pos(0, 1, 0))
    handle.close()
    gate.set()
    assert live.drain(30) and live.undiagnosed == 0 and handle.skipped == 0
    assert printed == ["p.jsonl: 0 exchanges, 0 errors, 0 warnings, 0 info"]


def test_the_stop_waits_for_the_live_thread_a_bounded_time_and_counts_what_it_left() -> None:
    said: list[str] = []
    live = Live(Options(), None, said.append)
    handle, gate, reading = held_up(live)
    for _ in range(3):
        handle.record({"sd": "header", "v": 1}, b"{}", Pos(0, 1, 0))
    handle.close()
    assert reading.wait(30)
    assert not live.drain(0.2)  # the first record is being read: the other two never will be
    assert live.undiagnosed == 2
    assert said == [
        "stream-doctor record: stopped waiting for the live findings after 0.2 s; 2 records not diagnosed "
        "(replay the envelopes)"
    ]
    gate.set()


def test_a_writer_waiting_for_room_is_woken_by_the_live_thread_not_by_polling() -> None:
    """``Queued.room`` (what ``serve`` awaits after an answer while the queue is over half its bound)
    returns once the live thread takes what fills it, and meanwhile looks only when the thread wakes it
    (or each ``WAKE_BOUND``): a poll every millisecond took the interpreter's lock from the thread it
    waits on a thousand times a second. The near miss: with room, it returns at its first look."""
    import asyncio

    from stream_doctor.record.live import WAKE_BOUND

    live = Live(Options(), None, None, queue_bytes=4096)
    handle, gate, reading = held_up(live)
    header = {"sd": "header", "v": 1}
    looks = 0
    until = live.until

    async def counted(ready: Any) -> None:
        def look() -> bool:
            nonlocal looks
            looks += 1
            return bool(ready())

        await until(look)

    live.until = counted  # type: ignore[method-assign]

    async def main() -> None:
        await asyncio.wait_for(handle.room(), 1)  # an empty queue: room at once
        assert looks == 1
        handle.record(header, b"x" * 1000, Pos(0, 1, 0))
        assert await asyncio.to_thread(reading.wait, 30)  # the thread holds the first record
        handle.record(header, b"x" * 1000, Pos(0, 1, 0))  # 2,512 bytes of 4,096 queued: over half
        waiting = asyncio.ensure_future(handle.room())
        await asyncio.sleep(10 * WAKE_BOUND)
        assert not waiting.done()
        assert looks <= 1 + 2 * 12  # one look and a re-look each bound, not one a millisecond
        gate.set()  # the thread takes the queued record: room
        await asyncio.wait_for(waiting, 30)

    asyncio.run(main())
    handle.close()
    assert live.drain(30) and live.undiagnosed == 0


# -- the command: a harness starts it, runs the agent, stops it, and fails on its exit code ---------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize(("echoed", "code"), [({}, 1), (None, 0)])
def test_the_proxy_exits_1_under_fail_on_when_the_run_showed_the_bug(
    tmp_path: Path, echoed: dict[str, Any] | None, code: int
) -> None:
    out = tmp_path / "out"
    port = free_port()
    with FakeUpstream(b"", choose=second_turn) as upstream:
        command = [sys.executable, "-m", "stream_doctor", "record", "--upstream", upstream.url]
        command += ["--listen", f"127.0.0.1:{port}", "--out", str(out), "--live", "--fail-on", "error"]
        proxy = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=os.environ | {"COLUMNS": "200"})
        try:
            wait_for(lambda: _listening(port), 20)
            agent_turns(f"http://127.0.0.1:{port}", echoed)
            wait_for(lambda: len(list(out.glob("*.jsonl"))) == 1 and _written(out, 2))
            proxy.send_signal(signal.SIGTERM)
            _, stderr = proxy.communicate(timeout=30)
        finally:
            if proxy.poll() is None:
                proxy.kill()
    assert proxy.returncode == code, stderr
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    [envelope] = sorted(out.glob("*.jsonl"))
    assert f"{envelope}: 2 exchanges, {code} error{'' if code == 1 else 's'}, 0 warnings, 0 info" in lines
    assert any(" SD608 " in line for line in lines) == (code == 1)
    if code:
        assert lines[-1] == "stream-doctor record: a finding reached --fail-on error (worst: error)"
    assert replay(str(envelope)).codes == (("SD608",) if code else ())
    assert "sk-ant-live-1" not in envelope.read_text()


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


def _written(out: Path, exchanges: int) -> bool:
    """Both responses recorded to their end (the last record of each is its last event)."""
    [path] = list(out.glob("*.jsonl"))
    return path.read_bytes().count(b"message_stop") >= exchanges


def wait_for(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_a_live_line_is_one_line_with_capture_text_escaped() -> None:
    from stream_doctor.reporters import live_lines as lines
    from stream_doctor.values.findings import Finding, Location, Severity

    hostile = Finding(
        "SD201",
        "unparseable-arguments",
        Severity.ERROR,
        "::add-mask::x \x1b[31mred\x1b[0m\nsecond line\u2028third",
        "h",
        Location("::warning file=x::a.jsonl", 3, 2),
    )
    line = lines.finding(hostile)
    assert "\n" not in line and "\x1b" not in line and "\u2028" not in line
    assert "\\x1b[31mred" in line and "\\x0asecond line\\u2028third" in line
    assert lines.summary("a\x1bb.jsonl", 1, [hostile]) == "a\\x1bb.jsonl: 1 exchange, 1 error, 0 warnings, 0 info"


def test_a_diagnosis_that_fails_stops_only_its_live_findings_never_the_recording(tmp_path: Path) -> None:
    class Broken:
        def record(self, record: Any, line: bytes, pos: Any) -> None:
            raise RuntimeError("boom")

        def exchange_ended(self) -> None: ...

        def assistant_turn(self) -> tuple[frozenset[str], frozenset[str]]:
            return frozenset(), frozenset()

        def close(self) -> None: ...

    out = tmp_path / "out"
    with FakeUpstream(ONE_CALL.read_bytes()) as upstream:
        proxy = RunningProxy(upstream.url, str(out))
        proxy.config.listen = lambda path, provider: Broken()
        with proxy, httpx2.Client(base_url=proxy.url, timeout=30, verify=plain_http_tls()) as client:
            response = client.post("/v1/messages", json={"model": "m", "stream": True, "messages": []})
            wait_for(lambda: len(proxy.lines) == 2)
    assert response.content == ONE_CALL.read_bytes()
    [envelope] = sorted(out.glob("*.jsonl"))
    assert "no more live findings" in proxy.lines[0] and "RuntimeError: boom" in proxy.lines[0]
    assert [c.call_id for c in replay(str(envelope)).calls] == [c.call_id for c in replay(str(ONE_CALL)).calls]


def test_the_grouping_waits_for_the_records_queued_when_it_asks_not_for_a_stream_still_going() -> None:
    """``Queued.settled`` (what a request that sends call ids back awaits, as long as the conversations make
    progress) returns once the live thread has read what was queued when it was called, though another
    stream keeps queuing records; the near miss: one of those records still unread, it waits."""
    import asyncio

    from stream_doctor.record.live import Queued

    async def main() -> None:
        queued = Queued(Live(Options()), None)  # type: ignore[arg-type]
        queued.sent, queued.done = 5, 3
        waiting = asyncio.ensure_future(queued.settled())
        await asyncio.sleep(0)  # it is called
        queued.sent = 50  # the stream goes on
        queued.done = 4
        await asyncio.sleep(0.05)
        assert not waiting.done()  # the near miss
        queued.done = 5
        await asyncio.wait_for(waiting, 1)

    asyncio.run(main())
