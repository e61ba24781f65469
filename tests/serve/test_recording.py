"""The server records what it wrote after the write (``serve.recording``), and nothing of the recording is lost
by it: each event's time in the envelope is when its read went out, and a follow-up that continues its
conversation only by the call ids it sends back, sent the moment the stream ends, still joins that conversation
(the grouping waits for the turn's recording, as it waits for the live diagnosis)."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import orjson
import pytest

from benchmarks.captures import write_calls
from tests.conftest import FIXTURES, plain_http_tls

#: the loopback server and a raw HTTP client
pytestmark = [pytest.mark.external]

pytest.importorskip("aiohttp")
httpx = pytest.importorskip("httpx")

from stream_doctor.serve.load import load_script  # noqa: E402
from stream_doctor.serve.wire import Plan, Recorded  # noqa: E402

TIMEOUT = 60.0
PAUSE = 0.05
FIRST = {"model": "claude", "max_tokens": 64, "stream": True, "messages": [{"role": "user", "content": "Go."}]}


def _events(envelope: str) -> list[dict[str, Any]]:
    with open(envelope, "rb") as file:
        return [record for record in map(orjson.loads, file) if record["sd"] == "event"]


def _paced(recorded: Recorded) -> Plan:
    return Plan(recorded.status, recorded.headers, tuple((PAUSE, data) for _, data in recorded.events))


@pytest.mark.parametrize("paced", [True, False])
def test_each_event_is_recorded_at_the_time_its_read_went_out(stream_doctor_server: Any, paced: bool) -> None:
    capture = str(FIXTURES / "anthropic/parallel_calls.sse")
    server = stream_doctor_server(capture, **({"plan": _paced} if paced else {}))
    answered = httpx.post(server.url + "/v1/messages", json=FIRST, timeout=TIMEOUT, verify=plain_http_tls())
    assert answered.content == load_script(capture).turns[0].recorded.body
    (judged,) = server.stop()
    times = [event["t"] for event in _events(judged.served.envelope)]
    assert len(times) == len(load_script(capture).turns[0].recorded.events)
    gaps = [after - before for before, after in pairwise(times)]
    if paced:  # the pauses between the writes, not the moment the recording ran (all at once, after them)
        assert min(gaps) >= PAUSE * 0.8
    else:  # the near miss: written back to back, recorded back to back
        assert max(gaps) < PAUSE * 0.8 and min(gaps) >= 0


def test_a_follow_up_by_call_ids_alone_joins_its_conversation_while_its_turn_is_recorded(
    stream_doctor_server: Any, tmp_path: Path
) -> None:
    """A long turn (3,000 events: its recording outlasts the client's next request), then a follow-up whose
    history does not extend the first request's (the tool result in a user message after the user's, no
    assistant turn): only the call id it answers ties it to the conversation."""
    capture = tmp_path / "calls.sse"
    write_calls(capture, 300)
    server = stream_doctor_server(str(capture))
    with (
        httpx.Client(timeout=TIMEOUT, verify=plain_http_tls()) as first,
        httpx.Client(timeout=TIMEOUT, verify=plain_http_tls()) as second,
    ):
        assert first.post(server.url + "/v1/messages", json=FIRST).status_code == 200
        result = {"type": "tool_result", "tool_use_id": "toolu_00000007", "content": "ok"}
        follow_up = {**FIRST, "messages": [*FIRST["messages"], {"role": "user", "content": [result]}]}
        assert second.post(server.url + "/v1/messages", json=follow_up).status_code == 400  # past the capture
    judged = server.stop()
    assert len(judged) == 1, [one.served.envelope for one in judged]
    assert judged[0].served.beyond == [2]


def test_the_grouping_waits_for_a_turn_being_recorded_and_not_for_one_recorded() -> None:
    """``Pending.settled`` (what the grouping awaits before it reads the call ids a turn held) returns once
    the turn is recorded and the listener has read it; at once when nothing is being recorded."""
    import asyncio

    from stream_doctor.serve.recording import Pending

    class Listener:
        settled_calls = 0

        def record(self, *_: Any) -> None: ...

        def exchange_ended(self) -> None: ...

        def assistant_turn(self) -> tuple[frozenset[str], frozenset[str]]:
            return frozenset(), frozenset()

        def close(self) -> None: ...

        async def settled(self) -> None:
            self.settled_calls += 1

    async def main() -> None:
        inner = Listener()
        pending = Pending(inner)
        await asyncio.wait_for(pending.settled(), 1)  # the near miss: nothing being recorded
        pending.recorded.clear()  # a turn is being written, then recorded
        waiting = asyncio.ensure_future(pending.settled())
        await asyncio.sleep(0.05)
        assert not waiting.done() and inner.settled_calls == 1
        pending.recorded.set()
        await asyncio.wait_for(waiting, 1)
        assert inner.settled_calls == 2

    asyncio.run(main())


@pytest.mark.slow  # twenty 2,203-event streams served, recorded and judged at once (4.7 s of CPU)
def test_a_stop_right_after_many_streams_records_every_one_whole(
    stream_doctor_server: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Twenty clients read a 2,203-event stream at once and the server is stopped the moment the last has it:
    the stop waits for the recordings still going, so each envelope holds every event, no conversation has a
    verdict above info, and nothing is logged as an unhandled error (aiohttp's, for a handler still busy)."""
    from concurrent.futures import ThreadPoolExecutor

    capture = tmp_path / "calls.sse"
    write_calls(capture, 200)
    body = load_script(str(capture)).turns[0].recorded
    server = stream_doctor_server(str(capture))

    def read(_: int) -> bytes:
        return httpx.post(server.url + "/v1/messages", json=FIRST, timeout=TIMEOUT, verify=plain_http_tls()).content

    with ThreadPoolExecutor(20) as pool:
        assert all(answer == body.body for answer in pool.map(read, range(20)))
    judged = server.stop()
    assert len(judged) == 20
    for one in judged:
        assert len(_events(one.served.envelope)) == len(body.events)
        assert [v.severity.label for v in one.verdicts] == ["info"]  # a bare stream: its request is not checked
    assert [r.getMessage() for r in caplog.records if r.levelname == "ERROR"] == []


def _slow_recording(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each turn's recording outlasts the grouping's ``SETTLE`` (0.3 s here) many times over, deterministically:
    one read recorded at a time, 50 ms given to the loop before each, as a 10 MB answer's would on a busy machine."""
    import asyncio

    from stream_doctor.record import conversations
    from stream_doctor.serve import recording

    async def slow_room(self: recording.Pending) -> None:
        await asyncio.sleep(0.05)

    monkeypatch.setattr(conversations, "SETTLE", 0.3)
    monkeypatch.setattr(recording, "SLICE", 1)
    monkeypatch.setattr(recording.Pending, "room", slow_room)


RESPONSES_FIRST = {"model": "gpt-4.1", "stream": True, "input": "Go."}
RESPONSE_ID = "resp_691f2a3ceb6f8192a7cd62de963a8cc76be1679f6ae28652"  # one_call.sse's


def _asked_twice(server: Any, path: str, first_request: Any, follow_up: Any, joins: bool) -> None:
    """The first request, then the follow-up on another connection while the first turn is still recorded:
    one conversation of two turns when the follow-up ``joins`` it, else two conversations of one turn each."""
    with (
        httpx.Client(timeout=TIMEOUT, verify=plain_http_tls()) as first,
        httpx.Client(timeout=TIMEOUT, verify=plain_http_tls()) as second,
    ):
        assert first.post(server.url + path, json=first_request).status_code == 200
        second.post(server.url + path, json=follow_up)
    judged = server.stop()
    if joins:
        assert len(judged) == 1, [one.served.envelope for one in judged]
        assert judged[0].served.beyond == [2]
    else:
        assert len(judged) == 2 and [len(one.served.turns) for one in judged] == [1, 1]


@pytest.mark.slow  # a recording slowed on purpose, waited out: 2-12 s of wall each
@pytest.mark.parametrize("previous", [RESPONSE_ID, "resp_another"])
def test_a_follow_up_by_previous_response_id_joins_its_conversation_however_long_its_recording(
    stream_doctor_server: Any, monkeypatch: pytest.MonkeyPatch, previous: str
) -> None:
    """A Responses follow-up that sends back only ``previous_response_id`` (a new user message, no history) while
    its turn is still recorded past the grouping's limit joins the conversation of that response; the near miss,
    a follow-up of a response never served, starts one of its own."""
    _slow_recording(monkeypatch)
    server = stream_doctor_server(str(FIXTURES / "openai-responses/one_call.sse"))
    follow_up = {**RESPONSES_FIRST, "previous_response_id": previous, "input": [{"role": "user", "content": "And?"}]}
    _asked_twice(server, "/v1/responses", RESPONSES_FIRST, follow_up, joins=previous == RESPONSE_ID)


@pytest.mark.slow  # a recording slowed on purpose, waited out: 2-12 s of wall each
@pytest.mark.parametrize("answered", ["toolu_00000003", "toolu_never_served"])
def test_a_follow_up_by_call_ids_alone_joins_its_conversation_however_long_its_recording(
    stream_doctor_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answered: str
) -> None:
    """The same with a follow-up that only answers a call the turn carried (its history does not extend the
    first request's); the near miss answers a call no turn carried, and starts a conversation of its own."""
    _slow_recording(monkeypatch)
    capture = tmp_path / "calls.sse"
    write_calls(capture, 10)
    server = stream_doctor_server(str(capture))
    result = {"type": "tool_result", "tool_use_id": answered, "content": "ok"}
    follow_up = {**FIRST, "messages": [*FIRST["messages"], {"role": "user", "content": [result]}]}
    _asked_twice(server, "/v1/messages", FIRST, follow_up, joins=answered == "toolu_00000003")
