"""``stream-doctor clients`` and ``replay --client`` as a user runs them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from stream_doctor.cli import app
from stream_doctor.clients import PROFILES

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def test_clients_lists_every_profile_with_version() -> None:
    result = CliRunner().invoke(app, ["clients"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for profile in PROFILES:
        assert profile.name in result.output
    assert "2.12.0" in result.output and "[TypeScript]" in result.output


def test_clients_json_names_sources_and_whether_checked_against_the_library() -> None:
    result = CliRunner().invoke(app, ["clients", "--format", "json"])
    data = json.loads(result.output)
    by_name = {c["name"]: c for c in data["clients"]}
    assert by_name["openai-python"]["checked_against_library"] is True
    assert by_name["openai-python"]["replays_through_library"] is True
    # checked under Node by the test suite, but stream_doctor.clients.library cannot run it
    assert by_name["openai-node"]["checked_against_library"] is True
    assert by_name["openai-node"]["replays_through_library"] is False
    assert by_name["naive-next-index"]["checked_against_library"] is False
    assert any("_deltas.py" in s for s in by_name["openai-python"]["sources"])


def test_replay_client_unknown_name_exits_2_with_did_you_mean() -> None:
    result = CliRunner().invoke(app, ["replay", str(FIXTURES / "openai/one_call.sse"), "--client", "openai-pyton"])
    assert result.exit_code == 2
    assert "did you mean 'openai-python'" in result.output
    assert "Traceback" not in result.output


def test_replay_client_shows_findings_tied_to_the_client() -> None:
    path = str(FIXTURES / "openai/parallel_calls_interleaved.sse")
    result = CliRunner().invoke(app, ["replay", path, "--client", "openai-python", "--width", "200"])
    assert result.exit_code == 0  # warnings do not fail the run
    assert "SD802" in result.output and "openai-python 3.54.0 would take" in result.output


def test_replay_client_all_json() -> None:
    path = str(FIXTURES / "openai/whole_calls_same_index.sse")
    result = CliRunner().invoke(app, ["replay", path, "--client", "all", "--format", "json"])
    data = json.loads(result.output)
    assert {"SD807", "SD801"} <= {f["code"] for f in data["findings"]}
    predicted = data["calls"][0]["extras"]["clients"]
    assert predicted["litellm"]["differences"] == ["merged"]
    assert predicted["vercel-ai"]["agrees"] is True


def _cassette(body: bytes) -> bytes:
    """A vcrpy cassette of one Anthropic call whose response body is ``body`` (SSE)."""
    request = '{"model":"claude","stream":true,"messages":[{"role":"user","content":"hi"}]}'
    return (
        f"interactions:\n- request:\n    body: '{request}'\n    headers: {{}}\n    method: POST\n"
        "    uri: https://api.anthropic.com/v1/messages\n  response:\n"
        f"    body:\n      string: {json.dumps(body.decode())}\n"
        "    headers:\n      Content-Type:\n      - text/event-stream\n    status:\n      code: 200\n      message: OK\n"
        "version: 1\n"
    ).encode()


def test_replay_client_reads_a_cassettes_sse_body_as_the_library_does(tmp_path: Path) -> None:
    # the libraries read a cassette's body with their own SSE decoder: with no event: lines the Anthropic SDK
    # dispatches nothing (get_final_message's AssertionError), as on the same body in a .sse file
    body = (FIXTURES / "anthropic/one_call.sse").read_bytes()
    for name, data, raises in (
        ("nameless.sse", re.sub(rb"(?m)^event: .*\n", b"", body), True),
        ("nameless.yaml", _cassette(re.sub(rb"(?m)^event: .*\n", b"", body)), True),
        ("named.yaml", _cassette(body), False),  # near miss: the event names are there, the call runs
    ):
        path = tmp_path / name
        path.write_bytes(data)
        result = CliRunner().invoke(app, ["replay", str(path), "--client", "anthropic-python", "--format", "json"])
        predicted = json.loads(result.output)["calls"][0]["extras"]["clients"]["anthropic-python"]
        assert ("raises" in predicted) is raises, name
        assert [h["input"] for h in predicted["handoffs"]] == (
            [] if raises else [{"location": "Lisbon, Portugal", "unit": "celsius"}]
        )
