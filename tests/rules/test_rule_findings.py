"""Each stream rule on the fixture that shows it: where the finding points, which call, and the
facts its message must state. (The goldens hold the full wording; this is what users rely on.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_doctor.engine.pipeline import replay
from stream_doctor.values.findings import Finding, Severity
from stream_doctor.values.options import Options


def findings(name: str, code: str) -> list[Finding]:
    report = replay(f"fixtures/anthropic/{name}", Options())
    return [f for f in report.findings if f.code == code]


# (fixture, code, line, event, call id or None, facts the message states)
CASES = [
    ("relay_keepalive_not_json.sse", "SD001", 28, 10, None, ["not JSON"]),
    ("unknown_event_type.sse", "SD002", 19, 7, None, ["content_block_annotation", "once"]),
    ("capture_cut_inside_event.sse", "SD003", 31, 11, None, ["incomplete"]),
    ("not_utf8_text_delta.sse", "SD004", 10, 4, None, ["line 11", "UTF-8"]),
    ("event_name_mismatch.sse", "SD005", 37, 13, None, ["content_block_delta", "content_block_stop"]),
    ("premature_execution_partial_buffer.jsonl", "SD101", 12, 11, "toolu_01ycvehzvpJrV3wARkwFJ5Lr",
     ['{"command":"in"}', "2 of 4 fragments", "line 15"]),
    ("executed_abandoned_call.jsonl", "SD101", 21, 20, "toolu_01mL8fVDjVwske5fVAtHBvHJ", ["never completed", "max-tokens"]),
    ("empty_input_bug.jsonl", "SD102", 20, 19, "toolu_01gcx3DpVvg6wzPCEBtz4hRD",
     ["executed with {}", "7 fragments", "notes/todo.md", "missing content, path"]),
    ("executed_input_differs.jsonl", "SD103", 17, 16, "toolu_01HWHh5NUUCDowUx1ELPyS3i", ["fahrenheit", "celsius", "unit"]),
    ("executed_unknown_id.jsonl", "SD104", 17, 16, None, ["toolu_01iJkoxNcG4X4rE4LvynjcaE"]),
    ("executed_twice.jsonl", "SD105", 17, 16, "toolu_01ikr9zRE19T4bdrUWDpFNmn", ["first execution at line 16"]),
    ("executed_server_tool.jsonl", "SD106", 22, 21, "srvtoolu_01cUPw5g8ed2nEhMXHDdYXkp", ["server_tool_use"]),
    ("unparseable_trailing_data.sse", "SD201", 31, 11, "toolu_01xzYm2agHZNN5z5JYvyMUbT", ["trailing-data", "byte 60 of 62", "fragment 3 of 3"]),
    ("unparseable_fine_grained_arguments.sse", "SD201", 31, 11, "toolu_011LgjPPkMrcwjwezuh7oBK6", ["unterminated-string"]),
    ("argument_text_as_text_delta.sse", "SD201", 37, 13, "toolu_01f3H9Mn3GSMpLjVNa749dnK", ["invalid"]),
    ("unparseable_trailing_data.sse", "SD202", 25, 9, "toolu_01xzYm2agHZNN5z5JYvyMUbT", ["after fragment 2 of 3"]),
    ("abandoned_at_max_tokens.sse", "SD301", 70, 24, "toolu_01jhDCupgNe8oewpxxaRE2nn", ["max_tokens", "16 fragments", "line 19"]),
    ("stream_cut_mid_arguments.sse", "SD301", 28, 10, "toolu_01yfCCZt8xZQoxSUV6jWywUx", ["the stream ended before content_block_stop"]),
    ("overloaded_error_mid_stream.sse", "SD301", 34, 12, "toolu_01TfcxLkTmYhuEtXJuzW7Waj", ["error event"]),
    ("spliced_retry_stream.sse", "SD301", 28, 10, "toolu_01f3H9Mn3GSMpLjVNa749dnK", ["new message"]),
    ("overloaded_error_mid_stream.sse", "SD302", 34, 12, None, ["overloaded_error", "1 call(s) were still open"]),
    ("stream_cut_mid_arguments.sse", "SD303", 28, 10, None, ["message_stop"]),
    ("stop_reason_end_turn_with_tool_call.sse", "SD304", 34, 12, None, ["convert_currency", "end_turn"]),
    ("delta_for_unstarted_block.sse", "SD304", 31, 11, None, ["tool_use", "no client tool call"]),
    ("pause_turn.sse", "SD305", 103, 35, None, ["paused", "3 server tool call(s)"]),
    ("delta_for_unstarted_block.sse", "SD401", 19, 7, None, ["3 input_json_delta events", "a stop", "block index 1"]),
    ("events_after_message_stop.sse", "SD402", 40, 14, None, ['on, France"}', "line 31"]),
    ("block_index_reused.sse", "SD403", 37, 13, None, ["block index 1", "line 22"]),
    ("skipped_block_index.sse", "SD404", 22, 8, None, ["index 2", "index 1 was expected"]),
    ("duplicate_tool_ids.sse", "SD405", 31, 11, None, ["toolu_01gLaSMhSa99td7LGsxXLLyU"]),
    ("tool_use_without_id.sse", "SD406", 19, 7, None, ["without an id"]),
    ("events_after_message_stop.sse", "SD407", 40, 14, None, ["line 37"]),
    ("no_message_start.sse", "SD408", 1, 1, None, ["outside any message (message_start had not opened one)"]),
    ("spliced_retry_stream.sse", "SD409", 28, 10, None, ["message 1 was still open"]),
    ("argument_text_as_text_delta.sse", "SD410", 25, 9, None, ["text_delta", "tool_use block"]),
    ("stop_reason_set_twice.sse", "SD411", 43, 15, None, ["'tool_use'", "'end_turn'"]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "code", "line", "event", "call_id", "facts"), CASES, ids=[f"{c[1]}-{c[0]}" for c in CASES]
)
def test_rule_finding(name: str, code: str, line: int, event: int, call_id: str | None, facts: list[str]) -> None:
    matching = [f for f in findings(name, code) if f.location.line == line]
    assert len(matching) == 1, [(f.location.line, f.message) for f in findings(name, code)]
    (finding,) = matching
    assert finding.location.event == event
    assert finding.location.path == f"fixtures/anthropic/{name}"
    assert finding.call_id == call_id
    for fact in facts:
        assert fact in finding.message, (fact, finding.message)
    assert finding.hint and finding.name


def test_a_trimmed_final_blank_line_is_information_and_a_cut_frame_a_warning(tmp_path: Path) -> None:
    trimmed = tmp_path / "trimmed.sse"
    trimmed.write_bytes(Path("fixtures/anthropic/one_call.sse").read_bytes().rstrip(b"\n"))
    (note,) = [f for f in replay(str(trimmed), Options()).findings if f.code == "SD003"]
    assert note.severity is Severity.INFO and "data is whole" in note.message
    (cut,) = findings("capture_cut_inside_event.sse", "SD003")
    assert cut.severity is Severity.WARNING


def test_sd402_is_an_error_for_a_call_and_a_warning_for_text(tmp_path: Path) -> None:
    """A late fragment of a tool call proves the call ran short; late text after a finish_reason does not."""

    chunk = '{{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{{"index":0,"delta":{delta},"finish_reason":{reason}}}]}}'
    text = tmp_path / "text.sse"
    text.write_text(
        "".join(
            f"data: {chunk.format(delta=d, reason=r)}\n\n"
            for d, r in [('{"content":"a"}', '"stop"'), ('{"content":"b"}', '"stop"')]
        )
        + "data: [DONE]\n\n"
    )
    (late,) = [f for f in replay(str(text), Options(select=("SD402",))).findings]
    assert late.severity is Severity.WARNING
    call = replay(
        "fixtures/vercel-ai/data_stream_v4_delta_repeated_after_call.txt", Options(select=("SD402",))
    ).findings
    assert [f.severity for f in call] == [Severity.ERROR]


def test_sd304_is_info_when_the_request_forced_the_tool(tmp_path: Path) -> None:
    """OpenAI answers a forced function with finish_reason stop: a verdict on what the request asked for is info."""
    forced = Path("fixtures/openai/forced_tool_finish_stop.jsonl")
    (finding,) = replay(str(forced), Options(select=("SD304",))).findings
    assert finding.severity is Severity.INFO
    offered = tmp_path / "offered.jsonl"
    offered.write_text(
        forced.read_text().replace(
            '"tool_choice":{"type":"function","function":{"name":"record_invoice"}}', '"tool_choice":"auto"'
        )
    )
    (finding,) = replay(str(offered), Options(select=("SD304",))).findings
    assert finding.severity is Severity.WARNING


def test_sd404_is_info_for_bedrocks_converse_events(tmp_path: Path) -> None:
    """A skipped contentBlockIndex breaks no Converse client (they key by value): info; Anthropic's stays a warning."""
    converse = tmp_path / "converse.jsonl"
    converse.write_text(
        Path("fixtures/bedrock/converse_one_call.jsonl")
        .read_text()
        .replace('"contentBlockIndex":1', '"contentBlockIndex":2')
    )
    assert [f.severity for f in replay(str(converse), Options(select=("SD404",))).findings] == [Severity.INFO]
    anthropic = replay("fixtures/anthropic/skipped_block_index.sse", Options(select=("SD404",))).findings
    assert [f.severity for f in anthropic] == [Severity.WARNING]
