"""Executions told after the fact: --executed, --executions, execute records appended to JSONL."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
from typer.testing import CliRunner

from stream_doctor.capture import load
from stream_doctor.cli import app
from stream_doctor.engine.pipeline import replay
from stream_doctor.values.options import Options
from stream_doctor.values.report import NO_EXECUTIONS_NOTE
from tests.conftest import fixture_files

runner = CliRunner()
RAW = "fixtures/anthropic/one_call.sse"  # a raw stream: get_weather {"location": "Lisbon, Portugal", "unit": "celsius"}
TWO = "fixtures/anthropic/parallel_calls.sse"  # get_weather, get_local_time
REAL_INPUT = '{"location": "Lisbon, Portugal", "unit": "celsius"}'


def run(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["replay", *args, "--width", "200"])


def codes(report) -> list[str]:  # type: ignore[no-untyped-def]
    return [f.code for f in report.findings]


def test_empty_input_given_by_call_number_fires_sd102_at_the_option() -> None:
    result = run(RAW, "--executed", "1={}")
    assert result.exit_code == 1, result.output
    assert "SD102" in result.output
    assert "--executed 1={}" in result.output  # where the execution came from
    assert f"{RAW}:19 (event 7)" in result.output  # and where the call started in the capture
    assert NO_EXECUTIONS_NOTE.split(",")[0] not in result.output


def test_the_real_input_by_tool_name_or_id_is_a_near_miss() -> None:
    for call in ("get_weather", "toolu_01f3H9Mn3GSMpLjVNa749dnK", "1"):
        report = replay(RAW, Options(executed=(f"{call}={REAL_INPUT}",)))
        assert codes(report) == [], call
        assert report.executions == 1 and report.execution_note is None
        assert report.stream.capture.frames == replay(RAW, Options()).stream.capture.frames  # not one more event


def test_a_changed_value_is_sd103_and_a_missing_key_sd102() -> None:
    differs = replay(RAW, Options(executed=('get_weather={"location": "Lisbon", "unit": "celsius"}',)))
    assert codes(differs) == ["SD103"]
    missing = replay(RAW, Options(executed=('get_weather={"location": "Lisbon, Portugal"}',)))
    assert codes(missing) == ["SD102"]


def test_each_execution_goes_to_the_call_it_names() -> None:
    report = replay(TWO, Options(executed=("2={}", 'get_weather={"location": "Tokyo, Japan"}')))
    assert codes(report) == ["SD102"]
    assert report.findings[0].call_id == "toolu_01rUxqCsyH1oCEmGnpEf7AxN"
    assert [e.name for e in report.stream.executions] == ["get_local_time", "get_weather"]


def test_a_call_that_matches_nothing_is_a_one_line_error_listing_the_calls() -> None:
    for selector in ("search", "3", "0"):
        result = run(TWO, "--executed", f"{selector}={{}}")
        assert result.exit_code == 2, result.output
        assert result.output.count("\n") == 1
        assert "#1 get_weather toolu_01G1jK3D2s1aQU1VJa1a6xDP" in result.output
        assert "#2 get_local_time toolu_01rUxqCsyH1oCEmGnpEf7AxN" in result.output


def test_an_ambiguous_tool_name_is_a_one_line_error(tmp_path: Path) -> None:
    lines = Path(TWO).read_text().replace("get_local_time", "get_weather")
    capture = tmp_path / "twins.sse"
    capture.write_text(lines)
    result = run(str(capture), "--executed", "get_weather={}")
    assert result.exit_code == 2
    assert "matches 2 calls (#1, #2); name one by number" in result.output
    assert result.output.count("\n") == 1


def test_malformed_options_are_one_line_errors() -> None:
    for value, said in (("1", "expected CALL=JSON"), ("1={path", "the input is not JSON"), ("={}", "CALL=JSON")):
        result = run(RAW, "--executed", value)
        assert result.exit_code == 2 and said in result.output, result.output
        assert result.output.count("\n") == 1


def test_executions_file_adds_execute_records_with_their_lines(tmp_path: Path) -> None:
    executions = tmp_path / "executions.jsonl"
    executions.write_text(
        '{"sd": "header", "version": 1}\n\n'
        '{"sd": "execute", "call_id": "toolu_01G1jK3D2s1aQU1VJa1a6xDP", "name": "get_weather", "input": {}}\n'
        '{"name": "get_local_time", "input": {"timezone": "Asia/Tokyo"}}\n'
        '{"sd": "execute", "call_id": "toolu_nope", "input": {}}\n'
    )
    report = replay(TWO, Options(executions=str(executions)))
    assert [(f.code, str(f.location)) for f in report.findings] == [
        ("SD102", f"{executions}:3"),
        ("SD104", f"{executions}:5"),
    ]


def test_a_bad_executions_file_is_a_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    for text, said in (
        ('{"sd": "execute", "name": "get_weather"}\n', 'no "input"'),
        ('{"sd": "event", "data": {}}\n', "execute records only"),
        ("{nope\n", "not JSON"),
        ("\n", "no execute records"),
        ('{"input": {}}\n', "needs a call_id or a name"),
    ):
        bad.write_text(text)
        result = run(TWO, "--executions", str(bad))
        assert result.exit_code == 2 and said in result.output, (text, result.output)
        assert result.output.count("\n") == 1
    result = run(TWO, "--executions", str(tmp_path / "missing.jsonl"))
    assert result.exit_code == 2 and "cannot read the executions" in result.output


def test_a_turn_of_a_conversation_gets_its_execution() -> None:
    capture = "fixtures/conversations/envelope_two_turns.jsonl"
    report = replay(capture, Options(executed=("1={}",)))  # the envelope records the real execution already
    assert [(f.code, f.location.path) for f in report.findings] == [
        ("SD102", "--executed 1={}"),
        ("SD105", "--executed 1={}"),
    ]
    assert [len(turn.stream.executions) for turn in report.turns] == [2, 0]


def _chunk_log(tmp_path: Path) -> Path:
    """An OpenAI SDK chunk log: one chat.completion.chunk per line, as ``chunk.model_dump_json()`` writes it."""
    capture = load("fixtures/openai/one_call.sse")
    chunks = [frame.data.decode() for frame in capture.frames if frame.data != b"[DONE]"]
    log = tmp_path / "chunks.jsonl"
    log.write_text("\n".join(chunks) + "\n")
    return log


def test_execute_records_appended_to_an_sdk_chunk_log(tmp_path: Path) -> None:
    log = _chunk_log(tmp_path)
    assert codes(replay(str(log), Options())) == []
    with log.open("a") as file:
        file.write(
            '{"sd": "execute", "call_id": "call_r4DjtPeGKp23YZ0GleiIJ2fn", "name": "get_weather", "input": {}}\n'
        )
    report = replay(str(log), Options())
    assert codes(report) == ["SD102"]
    last = len(log.read_text().splitlines())
    assert str(report.findings[0].location) == f"{log}:{last} (event {last})"


def test_other_envelope_records_in_a_bare_jsonl_capture_are_reported_not_used(tmp_path: Path) -> None:
    log = _chunk_log(tmp_path)
    with log.open("a") as file:
        file.write('{"sd": "request", "body": {}}\n')
    report = replay(str(log), Options())
    assert report.stream.requests == ()
    assert any("only execute records may be appended" in f.message for f in report.findings)


def test_the_note_says_how_to_supply_executions_when_a_raw_stream_has_calls() -> None:
    result = run(RAW)
    assert result.exit_code == 0
    assert "execution checks (SD1xx) did not run" in result.output and "--executed CALL=JSON" in result.output
    data = json.loads(run(RAW, "--format", "json").output)
    assert data["execution_checks"] == {"ran": False, "executions": 0, "note": NO_EXECUTIONS_NOTE}
    given = json.loads(run(RAW, "--format", "json", "--executed", "1={}").output)
    assert given["execution_checks"] == {"ran": True, "executions": 1, "note": None}
    assert given["executions"][0]["given"] == "--executed 1={}"


def test_no_note_without_calls_or_without_the_execution_rules() -> None:
    no_calls = next(p for p in fixture_files("anthropic", suffixes=(".sse",)) if not replay(str(p), Options()).calls)
    assert replay(str(no_calls), Options()).execution_note is None
    assert replay(RAW, Options(ignore=("SD1",))).execution_note is None
    assert replay(RAW, Options(select=("SD2",))).execution_note is None
    assert replay(RAW, Options(select=("SD102",))).execution_note == NO_EXECUTIONS_NOTE


def test_explain_says_what_the_execution_rules_need_and_how_to_give_it() -> None:
    for code in ("SD101", "SD102", "SD103"):
        result = runner.invoke(app, ["explain", code])
        assert result.exit_code == 0
        text = result.output
        assert "What it needs" in text
        assert text.index("What it checks") < text.index("What it needs") < text.index("Why it matters")
        assert "stream-doctor replay capture.sse --executed 1='{}'" in text
        assert "--executions executions.jsonl" in text
    assert "What it needs" not in runner.invoke(app, ["explain", "SD201"]).output
    data = orjson.loads(runner.invoke(app, ["rules", "--format", "json"]).output)
    assert {r["code"]: r["needs"] is not None for r in data}["SD102"] is True
