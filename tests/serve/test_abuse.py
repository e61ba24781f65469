"""The server under requests it must not answer with the capture: too large, at an unknown path or
method, asking another question; a client that disconnects mid-stream; fifty at once. Each gets the
provider's own error shape or a verdict, and the near miss next to it is served."""

from __future__ import annotations

import gzip
import socket
import threading
from typing import Any

import orjson
import pytest

pytest.importorskip("aiohttp")
httpx = pytest.importorskip("httpx")

from stream_doctor.serve.load import load_script  # noqa: E402
from stream_doctor.serve.wire import Plan, Recorded  # noqa: E402
from tests.conftest import FIXTURES, plain_http_tls  # noqa: E402

#: the loopback server, attacked over sockets
pytestmark = [pytest.mark.external]

EMPTY_INPUT = str(FIXTURES / "anthropic/empty_input_bug.jsonl")
CASSETTE = str(FIXTURES / "conversations/anthropic_echo_empty_input.yaml")
OPENAI_GZIP = str(FIXTURES / "conversations/openai_gzip_two_turns.yaml")
TIMEOUT = 20.0


def first_body(capture: str) -> dict[str, Any]:
    request = load_script(capture).turns[0].request
    assert request is not None
    return dict(request["body"])


def post(url: str, body: Any, **options: Any) -> httpx.Response:
    data = body if isinstance(body, bytes) else orjson.dumps(body)
    return httpx.post(
        url,
        content=data,
        headers={"content-type": "application/json"},
        timeout=TIMEOUT,
        verify=plain_http_tls(),
        **options,
    )


def verdicts(server: Any) -> list[tuple[str, str | None, str]]:
    return [(v.severity.label, v.code, v.message) for judged in server.stop() for v in judged.verdicts]


def test_a_request_over_the_limit_is_413_in_the_providers_shape(stream_doctor_server: Any) -> None:
    server = stream_doctor_server(EMPTY_INPUT, max_request=4096)
    body = first_body(EMPTY_INPUT)
    answered = post(server.url + "/v1/messages", {**body, "metadata": {"user_id": "x" * 5000}})
    assert answered.status_code == 413
    assert answered.json()["type"] == "error" and answered.json()["error"]["type"] == "request_too_large"
    assert "--max-request 4096" in answered.json()["error"]["message"]
    near_miss = post(server.url + "/v1/messages", body)  # the same request within the limit is served
    assert near_miss.status_code == 200 and b"message_stop" in near_miss.content


@pytest.mark.stream_doctor_serve(EMPTY_INPUT)
def test_unknown_paths_and_methods_are_the_providers_404_and_405(stream_doctor_server: Any) -> None:
    url = stream_doctor_server.url
    unknown = post(url + "/v1/embeddings", {"input": "x"})
    assert unknown.status_code == 404 and unknown.json()["error"]["type"] == "not_found_error"  # OpenAI's shape
    wrong = httpx.get(url + "/v1/messages", timeout=TIMEOUT, verify=plain_http_tls())
    assert wrong.status_code == 405 and wrong.json()["type"] == "error"  # Anthropic's shape
    elsewhere = post(url + "/v1/chat/completions", {"model": "gpt-4o", "messages": []})
    assert (
        elsewhere.status_code == 404
        and "no capture answers /v1/chat/completions" in elsewhere.json()["error"]["message"]
    )
    assert stream_doctor_server.stop() == []  # none of them is a conversation


@pytest.mark.stream_doctor_serve(EMPTY_INPUT)
def test_another_model_is_refused_and_a_system_prompt_edit_is_served(stream_doctor_server: Any) -> None:
    body = first_body(EMPTY_INPUT)
    refused = post(stream_doctor_server.url + "/v1/messages", {**body, "model": "claude-opus-4-1"})
    assert refused.status_code == 400 and refused.json()["error"]["type"] == "invalid_request_error"
    assert 'model "claude-opus-4-1", the capture\'s "claude-sonnet-4-5-20250929"' in refused.json()["error"]["message"]
    served = post(stream_doctor_server.url + "/v1/messages", {**body, "system": "Be brief.", "max_tokens": 100})
    assert served.status_code == 200 and b"message_stop" in served.content
    found = verdicts(stream_doctor_server)
    assert [(severity, code) for severity, code, _ in found] == [("error", None), ("info", None)]
    assert "refused (400): model" in found[0][2]
    assert "max_tokens differs" in found[1][2] and "system differs" in found[1][2]


@pytest.mark.stream_doctor_serve(CASSETTE)
def test_results_for_calls_never_made_are_refused_whatever_the_input_sent_back(stream_doctor_server: Any) -> None:
    script = load_script(CASSETTE)
    second = script.turns[1].request
    assert second is not None
    url = stream_doctor_server.url + "/v1/messages"
    assert post(url, first_body(CASSETTE)).status_code == 200
    body = orjson.loads(orjson.dumps(second["body"]).replace(b"toolu_016VrNJIy6Bc1b7mC4BgQKrx", b"toolu_never_made"))
    refused = post(url, body)
    assert refused.status_code == 400 and "results for calls the capture never made: toolu_never_made" in refused.text
    # the same turn with the call's input changed (what the application sends back) is served
    changed = orjson.loads(orjson.dumps(second["body"]))
    changed["messages"][1]["content"][1]["input"] = {"path": "elsewhere.md", "content": "x"}
    assert post(url, changed).status_code == 200


def test_a_client_that_disconnects_mid_stream_is_said_at_its_read(stream_doctor_server: Any) -> None:
    paced = stream_doctor_server(
        EMPTY_INPUT, plan=lambda r: Plan(r.status, r.headers, tuple((0.05, d) for _, d in r.events))
    )
    body = orjson.dumps({**first_body(EMPTY_INPUT)})
    with socket.create_connection(("127.0.0.1", paced.port), timeout=TIMEOUT) as connection:
        head = f"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        connection.sendall(head.encode() + body)
        received = b""
        while b"message_start" not in received:  # the head, then the first event
            received += connection.recv(65536)
    (judged,) = paced.stop()
    (turn,) = judged.served.turns
    assert turn.ending == "disconnected" and turn.written < turn.reads == 17
    (said,) = [v for v in judged.verdicts if v.code is None]
    assert said.severity.label == "error" and f"after {turn.written} of its 17 reads" in said.message
    # the near miss: a client that reads to the end is no disconnect
    whole = stream_doctor_server(EMPTY_INPUT)
    assert post(whole.url + "/v1/messages", first_body(EMPTY_INPUT)).status_code == 200
    assert [t.ending for t in whole.stop()[0].served.turns] == ["served"]


@pytest.mark.stream_doctor_serve(CASSETTE)
def test_a_follow_up_that_never_came_is_said(stream_doctor_server: Any) -> None:
    assert post(stream_doctor_server.url + "/v1/messages", first_body(CASSETTE)).status_code == 200
    ((severity, code, message),) = verdicts(stream_doctor_server)
    assert (severity, code) == ("error", None)
    assert "turn 1's stream was read to its end and no follow-up came" in message


@pytest.mark.stream_doctor_serve(OPENAI_GZIP)
def test_a_gzip_body_is_served_gzipped_and_decodes_to_the_recorded_bytes(stream_doctor_server: Any) -> None:
    recorded: Recorded = load_script(OPENAI_GZIP).turns[0].recorded
    with httpx.Client(timeout=TIMEOUT, verify=plain_http_tls()) as client:
        with client.stream(
            "POST", stream_doctor_server.url + "/v1/chat/completions", json=first_body(OPENAI_GZIP)
        ) as response:
            raw = b"".join(response.iter_raw())
    assert response.headers["content-encoding"] == "gzip"
    assert gzip.decompress(raw) == recorded.body


def test_fifty_concurrent_clients_each_get_the_whole_stream(stream_doctor_server: Any) -> None:
    server = stream_doctor_server(EMPTY_INPUT)
    body = first_body(EMPTY_INPUT)
    expected = load_script(EMPTY_INPUT).turns[0].recorded.body
    answers: list[bytes] = []
    barrier = threading.Barrier(50)

    def one() -> None:
        barrier.wait(TIMEOUT)
        answers.append(post(server.url + "/v1/messages", body).content)

    threads = [threading.Thread(target=one) for _ in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(TIMEOUT * 2)
    assert answers == [expected] * 50
    judged = server.stop()
    assert len(judged) == 50 and all([t.ending for t in j.served.turns] == ["served"] for j in judged)
