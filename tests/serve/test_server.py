"""``stream-doctor serve`` with the real SDKs on loopback: a correct agent loop is judged clean, its buggy
twin (the tool run at content_block_start with ``{}``) with the empty-input finding, SD608's own words."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.conftest import FIXTURES
from tests.serve import apps

#: the loopback server in front of the real SDKs
pytestmark = [pytest.mark.external]

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")
pytest.importorskip("aiohttp")

EMPTY_INPUT = str(FIXTURES / "anthropic/empty_input_bug.jsonl")
CASSETTE = str(FIXTURES / "conversations/anthropic_echo_empty_input.yaml")
OPENAI_GZIP = str(FIXTURES / "conversations/openai_gzip_two_turns.yaml")
STREAMED_INPUT = {
    "path": "notes/todo.md",
    "content": "# TODO\n\n- [ ] Renew the TLS certificate for api.internal\n- [ ] Rotate the staging database "
    "password\n- [ ] Reply to the Q4 budget thread\n",
}


def request_of(capture: str) -> dict[str, Any]:
    from stream_doctor.serve.load import load_script

    request = load_script(capture).turns[0].request
    assert request is not None
    return request


def codes(server: Any) -> list[tuple[str, str | None]]:
    return [(v.severity.label, v.code) for judged in server.stop() for v in judged.verdicts]


@pytest.mark.stream_doctor_serve(EMPTY_INPUT)
def test_the_buggy_loop_is_judged_with_the_empty_input_finding(stream_doctor_server: Any) -> None:
    client = anthropic.Anthropic(base_url=stream_doctor_server.url, api_key="test", max_retries=0)
    assert apps.anthropic_buggy(client, request_of(EMPTY_INPUT)) == [("write_file", {})]
    (judged,) = stream_doctor_server.stop()
    (finding,) = [v for v in judged.verdicts if v.code == "SD608"]
    assert finding.severity.label == "error"
    assert 'with {}, but its stream carried {"path":"notes/todo.md"' in finding.message
    assert stream_doctor_server.worst() == "error"
    assert "error SD608: write_file (toolu_01gcx3DpVvg6wzPCEBtz4hRD)" in stream_doctor_server.report()


@pytest.mark.stream_doctor_serve(EMPTY_INPUT)
def test_the_correct_loop_is_judged_clean(stream_doctor_server: Any) -> None:
    client = anthropic.Anthropic(base_url=stream_doctor_server.url, api_key="test", max_retries=0)
    assert apps.anthropic_correct(client, request_of(EMPTY_INPUT)) == [("write_file", STREAMED_INPUT)]
    # its follow-up goes past the capture's only turn: recorded, judged, noted (info), never an error
    assert codes(stream_doctor_server) == [("info", None)]


def test_async_raw_iteration_correct_and_buggy_on_a_two_turn_cassette(stream_doctor_server: Any) -> None:
    """The cassette's second turn is served to the loop that sends back the right input: a whole
    conversation played; the buggy twin's second request is served too (inputs never refuse) and judged."""
    request = request_of(CASSETTE)
    server = stream_doctor_server(CASSETTE)
    client = anthropic.AsyncAnthropic(base_url=server.url, api_key="test", max_retries=0)
    ran = asyncio.run(apps.anthropic_correct_async(client, request))
    assert [name for name, _ in ran] == ["write_file"] and ran[0][1]["path"] == "notes/todo.md"
    assert codes(server) == []
    assert [turn.ending for turn in server.stop()[0].served.turns] == ["served", "served"]
    buggy = stream_doctor_server(CASSETTE)
    apps.anthropic_buggy(anthropic.Anthropic(base_url=buggy.url, api_key="test", max_retries=0), request)
    assert codes(buggy) == [("error", "SD608")]


@pytest.mark.stream_doctor_serve(OPENAI_GZIP)
def test_openai_is_served_its_gzip_body_and_judged_clean(stream_doctor_server: Any) -> None:
    client = openai.OpenAI(base_url=stream_doctor_server.url + "/v1", api_key="test", max_retries=0)
    ran = apps.openai_loop(client, request_of(OPENAI_GZIP))
    assert ran == [("get_weather", {"location": "Nairobi, Kenya", "unit": "celsius"})]
    assert codes(stream_doctor_server) == []


@pytest.mark.stream_doctor_serve(OPENAI_GZIP)
def test_openai_buggy_loop_is_judged(stream_doctor_server: Any) -> None:
    client = openai.OpenAI(base_url=stream_doctor_server.url + "/v1", api_key="test", max_retries=0)
    assert apps.openai_loop(client, request_of(OPENAI_GZIP), buggy=True) == [("get_weather", {})]
    assert ("error", "SD608") in codes(stream_doctor_server)


def test_several_captures_at_once_each_answers_its_own_conversation(stream_doctor_server: Any) -> None:
    """Two captures of one provider on one server: each application conversation is answered by the
    capture whose first request it is (its user message), whatever the order they come in."""
    server = stream_doctor_server(EMPTY_INPUT, CASSETTE)
    client = anthropic.Anthropic(base_url=server.url, api_key="test", max_retries=0)
    second = apps.anthropic_correct(client, request_of(CASSETTE))
    first = apps.anthropic_buggy(client, request_of(EMPTY_INPUT))
    assert second[0][1]["path"] == "notes/todo.md" and first == [("write_file", {})]
    judged = {one.served.script.path: one for one in server.stop()}
    assert [t.ending for t in judged[CASSETTE].served.turns] == ["served", "served"]
    assert [v.code for v in judged[CASSETTE].verdicts] == []
    assert "SD608" in [v.code for v in judged[EMPTY_INPUT].verdicts]


@pytest.mark.stream_doctor_serve(OPENAI_GZIP)
def test_openai_stream_helper_is_judged_clean(stream_doctor_server: Any) -> None:
    client = openai.OpenAI(base_url=stream_doctor_server.url + "/v1", api_key="test", max_retries=0)
    ran = apps.openai_helper(client, request_of(OPENAI_GZIP))
    assert ran == [("get_weather", {"location": "Nairobi, Kenya", "unit": "celsius"})]
    assert codes(stream_doctor_server) == []


@pytest.mark.stream_doctor_serve(OPENAI_GZIP)
def test_openai_async_raw_iteration_is_judged_clean(stream_doctor_server: Any) -> None:
    client = openai.AsyncOpenAI(base_url=stream_doctor_server.url + "/v1", api_key="test", max_retries=0)
    ran = asyncio.run(apps.openai_async(client, request_of(OPENAI_GZIP)))
    assert ran == [("get_weather", {"location": "Nairobi, Kenya", "unit": "celsius"})]
    assert codes(stream_doctor_server) == []
