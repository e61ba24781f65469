"""Every capture of the project's fixtures that can be served is served byte for byte: each turn, asked
with the request the capture recorded, answers with the recorded status and the recorded body (gzip
undone by the client where it was applied again); the ones that cannot are one line (``ServeError``)."""

from __future__ import annotations

import orjson
import pytest

from stream_doctor.serve.load import Script, ServeError, load_scripts
from tests.conftest import FIXTURES, fixture_files, plain_http_tls

pytest.importorskip("aiohttp")
httpx = pytest.importorskip("httpx")

from stream_doctor.serve.wire import CONVERSATION_HEADER, TURN_HEADER  # noqa: E402

#: every fixture served by the loopback server
pytestmark = [pytest.mark.external]

PATHS = {
    "anthropic": "/v1/messages",
    "openai": "/v1/chat/completions",
    "mistral": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "gemini": "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
    "bedrock": "/model/anthropic.claude/converse-stream",
    "cohere": "/v2/chat",
    "ollama": "/api/chat",
}
CAPTURES = sorted(str(path.relative_to(FIXTURES)) for path in fixture_files())


def messages(body: object) -> list[object]:
    """The conversation a request body carries (``messages``, ``contents``, or Responses' ``input``)."""
    if isinstance(body, dict):
        for key in ("messages", "contents", "input"):
            if isinstance(body.get(key), list):
                return list(body[key])
    return []


def scripts_of(name: str) -> tuple[Script, ...]:
    try:
        return load_scripts(str(FIXTURES / name))
    except ServeError as error:
        assert "\n" not in str(error)
        return ()


@pytest.mark.parametrize("name", CAPTURES)
def test_each_turn_is_served_as_recorded(name: str, stream_doctor_server: object) -> None:
    """Each conversation of the capture asked in turn (a capture's resend of a request is a conversation of
    its own, answered by what the resend got: ``x-stream-doctor-conversation`` names it)."""
    scripts = scripts_of(name)
    if not scripts:
        return
    assert set(PATHS) >= {script.provider for script in scripts}
    server = stream_doctor_server(str(FIXTURES / name))  # type: ignore[operator]
    with httpx.Client(timeout=30, verify=plain_http_tls()) as client:
        for script in scripts:
            previous: object = {}
            for turn in script.turns:
                body = turn.request.get("body", {}) if turn.request is not None else {}
                answered = client.post(server.url + PATHS[script.provider], content=orjson.dumps(body))
                conversation = answered.headers.get(CONVERSATION_HEADER, "1").split()[0]
                assert conversation == str(script.conversation)
                # the turn of the application's conversation: the capture's own, unless its recorded request
                # does not continue the previous one (a retry of the same request starts a conversation)
                served = script.turns[int(answered.headers[TURN_HEADER]) - 1].recorded
                assert (answered.status_code, answered.content) == (served.status, served.body), turn.number
                continues = turn.number > 1 and len(messages(body)) > len(messages(previous))
                assert served is turn.recorded or not continues
                previous = body
