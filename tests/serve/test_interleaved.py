"""``stream-doctor serve`` of one capture holding two agents' conversations interleaved, with two real anthropic SDK
agents at once: each conversation is served whole and judged on its own (the buggy agent's SD608 in its own, the
correct agent's clean), the response and the envelope name the conversation that answered; a request that begins
neither conversation is still refused with the difference."""

from __future__ import annotations

import signal
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings

from stream_doctor.serve.load import load_scripts
from stream_doctor.serve.wire import CONVERSATION_HEADER, TURN_HEADER
from tests.conftest import plain_http_tls
from tests.serve import apps
from tests.serve.interleaving import Order, interactions, interleaved, orders

#: the loopback server in front of the real SDK
pytestmark = [pytest.mark.external]

anthropic = pytest.importorskip("anthropic")
httpx = pytest.importorskip("httpx")
pytest.importorskip("aiohttp")

from stream_doctor.serve.running import RunningServer  # noqa: E402 - needs the record extra (aiohttp)


@pytest.fixture
def agents(tmp_path: Path) -> str:
    """The weather agent's and the file agent's exchanges interleaved in one cassette: A1, B1, A2, B2."""
    weather, files = interactions("anthropic_two_turns"), interactions("anthropic_echo_empty_input")
    return interleaved(tmp_path, [(0, weather[0]), (1, files[0]), (0, weather[1]), (1, files[1])])


def test_two_agents_at_once_are_each_served_their_conversation_whole(agents: str, stream_doctor_server: Any) -> None:
    weather, files = load_scripts(agents)
    server = stream_doctor_server(agents)
    client = anthropic.Anthropic(base_url=server.url, api_key="test", max_retries=0)
    with ThreadPoolExecutor(2) as pool:  # both agents at once, on one server
        correct = pool.submit(apps.anthropic_correct, client, weather.turns[0].request)
        buggy = pool.submit(apps.anthropic_buggy, client, files.turns[0].request)
        ran = [correct.result(), buggy.result()]
    assert ran[0] == [("get_weather", {"location": "Porto, Portugal", "unit": "celsius"})]
    assert ran[1] == [("write_file", {})]
    judged = {one.served.script.conversation: one for one in server.stop()}
    assert [t.ending for t in judged[1].served.turns] == [t.ending for t in judged[2].served.turns] == ["served"] * 2
    assert [v.code for v in judged[1].verdicts] == []  # the correct agent: clean
    assert [v.code for v in judged[2].verdicts] == ["SD608"]  # the buggy one, in its own conversation
    report = server.report()
    assert f"{agents} (conversation 2 of 2), 2 of 2 turns served" in report
    # the envelope of each says which conversation of the capture answered each turn
    for conversation, one in judged.items():
        records = [orjson.loads(line) for line in Path(one.served.envelope).read_bytes().splitlines()]
        said = [r["response"]["headers"][CONVERSATION_HEADER] for r in records if r.get("sd") == "request"]
        assert said == [f"{conversation} of 2 in agents.yaml"] * 2


def test_a_request_that_begins_neither_conversation_is_refused_with_the_difference(
    agents: str, stream_doctor_server: Any
) -> None:
    weather, _ = load_scripts(agents)
    server = stream_doctor_server(agents)
    recorded = weather.turns[0].request
    assert recorded is not None
    asked = {**recorded["body"], "messages": [{"role": "user", "content": "What's the weather in Lisbon?"}]}
    with httpx.Client(timeout=30, verify=plain_http_tls()) as client:
        refused = client.post(server.url + "/v1/messages", content=orjson.dumps(asked))
        served = client.post(server.url + "/v1/messages", content=orjson.dumps(recorded["body"]))
    assert refused.status_code == 400
    assert "turn 1 of " + agents + " (conversation 1 of 2) does not answer this request" in refused.text
    assert "user messages" in refused.text and "Lisbon" in refused.text
    assert (served.status_code, served.headers[TURN_HEADER], served.headers[CONVERSATION_HEADER]) == (
        200,
        "1",
        "1 of 2 in agents.yaml",
    )
    (refusal, _) = server.stop()
    assert [v.message.startswith("request 1 differs") for v in refusal.verdicts] == [True]


def test_the_command_says_how_many_conversations_the_capture_holds(agents: str, tmp_path: Path) -> None:
    from tests.serve.test_cli import TIMEOUT, exports, start

    process = start(agents, "--port", "0", "--out", str(tmp_path / "runs"))
    try:
        assert exports(process)["ANTHROPIC_API_KEY"] == "stream-doctor-serve"
        assert process.stderr is not None
        said = process.stderr.readline()
    finally:
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=TIMEOUT)
    assert "serving 1 capture holding 2 conversations (anthropic) at http://127.0.0.1:" in said
    assert process.returncode == 0 and "stream-doctor serve: 0 conversations with the application" in out


@settings(max_examples=6, deadline=None, derandomize=True, database=None)
@given(orders())
def test_the_server_groups_the_capture_s_requests_as_the_capture_was_split(
    tmp_path_factory: pytest.TempPathFactory, order: Order
) -> None:
    """The real implementation of the rule: the server's grouping (the proxy's ``Conversations``, with the live
    listener's call ids), fed the capture's own requests in the order recorded, answers each with the
    conversation and turn the capture was split into."""
    path = interleaved(tmp_path_factory.mktemp("interleaved"), order)
    scripts = load_scripts(path)
    began = list(dict.fromkeys(number for number, _ in order))
    seen: dict[int, int] = {}
    asked = []  # each request in the order recorded, with the conversation and turn it is in the capture
    for number, _ in order:
        seen[number] = seen.get(number, 0) + 1
        asked.append((began.index(number) + 1, seen[number]))
    server = RunningServer(path, out=str(tmp_path_factory.mktemp("runs")))  # one per example
    answered = []
    try:
        with httpx.Client(timeout=30, verify=plain_http_tls()) as client:
            for conversation, turn in asked:
                request = scripts[conversation - 1].turns[turn - 1].request
                assert request is not None
                got = client.post(server.url + "/v1/messages", content=orjson.dumps(request["body"]))
                said = (int(got.headers[CONVERSATION_HEADER].split()[0]), int(got.headers[TURN_HEADER]))
                answered.append((got.status_code, said))
    finally:
        server.stop()
    assert answered == [(200, place) for place in asked]
