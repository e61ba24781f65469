"""An SDK's retry of a turn is answered as that turn again, in its own conversation: the real anthropic SDK
(``max_retries=2``) retrying each turn's 429 plays the two-turn cassette as one conversation, judged clean
but for the retries noted. The near misses start conversations of their own: the same first request
again after its answer succeeded (another run of the application), one the SDK marks a first attempt
(``x-stainless-retry-count: 0``) however alike, and fifty identical first requests at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import plain_http_tls
from tests.serve import apps

anthropic = pytest.importorskip("anthropic")
pytest.importorskip("aiohttp")
httpx = pytest.importorskip("httpx")

from stream_doctor.serve.load import load_script  # noqa: E402
from stream_doctor.serve.matrix import played  # noqa: E402
from stream_doctor.serve.variants import VARIANTS  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CASSETTE = str(FIXTURES / "conversations/anthropic_echo_empty_input.yaml")
TIMEOUT = 20.0


def request_of(capture: str) -> dict[str, Any]:
    request = load_script(capture).turns[0].request
    assert request is not None
    return request


def post(server: Any, retry_count: str | None = None) -> httpx.Response:
    headers = {"x-stainless-retry-count": retry_count} if retry_count is not None else {}
    return httpx.post(
        server.url + "/v1/messages",
        json=request_of(CASSETTE)["body"],
        headers=headers,
        timeout=TIMEOUT,
        verify=plain_http_tls(),
    )


def test_the_sdks_retries_of_each_429_continue_the_conversation(stream_doctor_server: Any) -> None:
    server = stream_doctor_server(CASSETTE, plan=played(VARIANTS["status-429"], 0))
    client = anthropic.Anthropic(base_url=server.url, api_key="test", max_retries=2, timeout=TIMEOUT)
    ran = apps.anthropic_correct(client, request_of(CASSETTE))
    assert [name for name, _ in ran] == ["write_file"] and ran[0][1]["path"] == "notes/todo.md"
    (judged,) = server.stop()  # one conversation, not one per attempt
    assert [(t.number, t.status, t.ending) for t in judged.served.turns] == [(1, 200, "served"), (2, 200, "served")]
    assert [(t.number, t.status) for t in judged.served.retried] == [(1, 429), (2, 429)]
    verdicts = [(v.severity.label, v.code, v.message) for v in judged.verdicts]
    assert [(severity, code) for severity, code, _ in verdicts] == [("info", None), ("info", None)]
    assert "request 2 was sent again (a retry) after its answer was a 429 error" in verdicts[1][2]


def test_a_retry_without_the_header_follows_a_failed_answer(stream_doctor_server: Any) -> None:
    server = stream_doctor_server(CASSETTE, plan=played(VARIANTS["status-429"], 0))
    assert post(server).status_code == 429
    again = post(server)
    assert again.status_code == 200 and again.headers["x-stream-doctor-turn"] == "1"
    (judged,) = server.stop()
    assert len(judged.served.turns) == 1 and len(judged.served.retried) == 1


def test_a_retry_the_sdk_counts_is_one_even_after_an_answer_that_succeeded(stream_doctor_server: Any) -> None:
    """The client gave up on an answer the server wrote whole (its own timeout): the header says it retries."""
    server = stream_doctor_server(CASSETTE)
    assert post(server, "0").status_code == 200
    assert post(server, "1").status_code == 200
    (judged,) = server.stop()
    assert [t.number for t in judged.served.turns] == [1] and [t.number for t in judged.served.retried] == [1]
    verdicts = [(v.severity.label, v.code, v.message) for v in judged.verdicts]
    assert [(severity, code) for severity, code, _ in verdicts if severity != "info"] == [
        ("error", None)  # no follow-up came: the conversation stopped at turn 1 of 2
    ]
    assert any("request 1 was sent again (a retry) after its answer was written whole" in m for *_, m in verdicts)


@pytest.mark.parametrize(
    ("first", "again"),
    [
        (None, None),  # the same question after a whole answer: the application ran again
        ("0", "0"),  # the SDK says a first attempt, after a whole answer
    ],
)
def test_the_same_first_request_after_a_whole_answer_is_a_new_conversation(
    first: str | None, again: str | None, stream_doctor_server: Any
) -> None:
    server = stream_doctor_server(CASSETTE)
    assert post(server, first).status_code == 200
    assert post(server, again).status_code == 200
    assert [len(j.served.turns) for j in server.stop()] == [1, 1]


def test_a_first_attempt_after_a_failed_answer_is_a_new_conversation(stream_doctor_server: Any) -> None:
    server = stream_doctor_server(CASSETTE, plan=played(VARIANTS["status-429"], 0))
    assert post(server, "0").status_code == 429
    assert post(server, "0").status_code == 429  # not a retry: answered as a first attempt, by the variant
    assert [[t.status for t in j.served.turns] for j in server.stop()] == [[429], [429]]
