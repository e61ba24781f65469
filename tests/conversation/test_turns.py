"""Turns: how a capture is split into them, how positions name them, and the options that feed the schema checks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from stream_doctor.capture.base import Pos
from stream_doctor.cli import app
from stream_doctor.engine.pipeline import replay
from stream_doctor.values.findings import Location
from stream_doctor.values.options import Options

runner = CliRunner()
EVENT = {"sd": "event", "event": "message_stop", "data": {"type": "message_stop"}}
START = {
    "sd": "event",
    "event": "message_start",
    "data": {"type": "message_start", "message": {"id": "msg_1", "model": "m"}},
}


def envelope(tmp_path: Path, records: list[dict]) -> str:
    path = tmp_path / "capture.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def request(n: int) -> dict:
    return {"sd": "request", "body": {"model": "m", "messages": [{"role": "user", "content": "?"}] * n}}


def test_a_request_after_events_starts_a_turn(tmp_path: Path) -> None:
    report = replay(envelope(tmp_path, [request(1), START, EVENT, request(3), START, EVENT]), Options())
    assert [(t.number, t.interaction, len(t.stream.messages)) for t in report.turns] == [(1, 1, 1), (2, 2, 1)]
    assert report.conversation and report.stream is report.turns[-1].stream


def test_one_request_is_one_turn_exactly_as_before(tmp_path: Path) -> None:
    report = replay(envelope(tmp_path, [request(1), START, EVENT]), Options())
    assert len(report.turns) == 1 and report.turns[0].interaction is None and not report.conversation
    no_request = replay(envelope(tmp_path, [START, EVENT]), Options())
    assert len(no_request.turns) == 1 and no_request.turns[0].request is None


def test_consecutive_requests_are_turns_of_their_own(tmp_path: Path) -> None:
    report = replay(envelope(tmp_path, [request(1), request(1), START, EVENT]), Options())
    assert [len(t.stream.messages) for t in report.turns] == [0, 1]


def test_locations_name_the_interaction_and_the_request_path() -> None:
    assert str(Location.at("c.sse", Pos(7, 12, 300))) == "c.sse:12 (event 7)"
    assert str(Location.at("c.yaml", Pos(7, 212, 300), 2)) == "c.yaml:212 (interaction 2, event 7)"
    assert str(Location("c.yaml", 40, None, 9, 2, "messages[3].content[0]")) == (
        "c.yaml:40 (interaction 2, request messages[3].content[0])"
    )
    assert str(Location.at("c.yaml", Pos(0, 2, 16), 1)) == "c.yaml:2 (interaction 1)"


def test_tools_file_for_a_bare_stream(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(
        json.dumps(
            [
                {
                    "name": "get_weather",
                    "input_schema": {
                        "type": "object",
                        "properties": {"location": {"type": "integer"}},
                        "required": ["location"],
                    },
                }
            ]
        )
    )
    report = replay("fixtures/anthropic/one_call.sse", Options(tools=str(tools)))
    assert [f.code for f in report.findings] == ["SD705", "SD702"]  # location streams in pieces; it is no integer
    assert report.findings[1].related[-1].location.path == str(tools)
    result = runner.invoke(app, ["replay", "fixtures/anthropic/one_call.sse", "--tools", str(tools)])
    assert result.exit_code == 1 and "SD702" in result.output
    missing = runner.invoke(app, ["replay", "fixtures/anthropic/one_call.sse", "--tools", str(tmp_path / "none.json")])
    assert missing.exit_code == 2 and "--tools" in missing.output


def test_a_tools_file_that_is_not_json_says_so(tmp_path: Path) -> None:
    """Issue 36: a capture given as --tools (any text is some YAML) had said "no tool definitions found"."""
    capture = "fixtures/anthropic/one_call.sse"
    text = tmp_path / "tools.txt"
    text.write_text("get_weather takes a city\n")
    wanted = "(a list of tools, or a request body, in JSON or YAML)\n"
    not_json = "not JSON (unexpected character, expected a JSON value at line 1 column 1)"
    for path, kind in ((capture, "a mapping"), (str(text), "plain text")):
        result = runner.invoke(app, ["replay", capture, "--tools", path])
        assert result.exit_code == 2
        assert result.output.endswith(
            f"--tools {path}: {not_json}, and read as YAML it is {kind} without tool definitions {wanted}"
        )
    cut = tmp_path / "cut.json"
    cut.write_text('[{"name": "get_weather",\n')
    result = runner.invoke(app, ["replay", capture, "--tools", str(cut)])
    assert result.output.endswith(
        f"--tools {cut}: not JSON (unexpected end of data at line 2 column 1), nor YAML {wanted}"
    )
    (tmp_path / "empty.json").write_text("\n")
    assert runner.invoke(app, ["replay", capture, "--tools", str(tmp_path / "empty.json")]).output.endswith(
        "the file is empty\n"
    )


def test_a_tools_file_in_json_without_tools_and_one_in_yaml_with_them(tmp_path: Path) -> None:
    """The near misses: JSON that holds no tools says what it is; a YAML list of tools is read."""
    capture = "fixtures/anthropic/one_call.sse"
    body = tmp_path / "body.json"
    body.write_text('{"model": "claude", "messages": []}')
    result = runner.invoke(app, ["replay", capture, "--tools", str(body)])
    assert result.exit_code == 2 and f"--tools {body}: its JSON is a mapping without tool definitions" in result.output
    listed = tmp_path / "tools.yaml"
    listed.write_text("- name: get_weather\n  input_schema: {type: object}\n")
    assert runner.invoke(app, ["replay", capture, "--tools", str(listed)]).exit_code == 0


def test_convert_command_writes_the_envelope(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["convert", "fixtures/conversations/anthropic_two_turns.yaml", "-o", str(out)])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["sd"] for r in records].count("request") == 2 and records[0]["provider"] == "anthropic"
    to_stdout = runner.invoke(app, ["convert", "fixtures/conversations/anthropic_two_turns.yaml"])
    assert to_stdout.exit_code == 0 and to_stdout.stdout_bytes == out.read_bytes()
    assert runner.invoke(app, ["convert", str(tmp_path / "nothing.har")]).exit_code == 2


def test_a_plain_replay_imports_neither_jsonschema_nor_yaml() -> None:
    code = (
        "import sys\n"
        "from stream_doctor.engine.pipeline import replay\nfrom stream_doctor.values.options import Options\n"
        "replay('fixtures/anthropic/one_call.sse', Options())\n"
        "print(sorted(m for m in ('jsonschema', 'yaml') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_a_har_without_llm_calls_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "pages.har"
    page = {
        "request": {"method": "GET", "url": "https://example.com/"},
        "response": {"status": 200, "content": {"mimeType": "text/html", "text": "<p>"}},
    }
    path.write_text(json.dumps({"log": {"entries": [page]}}))
    result = runner.invoke(app, ["replay", str(path)])
    assert result.exit_code == 2 and "(1 interaction, 1 of them not LLM calls)" in result.output
    forced = runner.invoke(app, ["replay", str(path), "--provider", "anthropic"])
    assert forced.exit_code == 2 and "none of its interactions is an LLM call" in forced.output
