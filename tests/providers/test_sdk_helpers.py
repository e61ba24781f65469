"""SDK helper-stream logs: the real SDK helpers write them, the *-sdk adapters read them back into
the same calls as the wire stream, and a helper snapshot that differs from the fragments is SD532."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_doctor.engine.pipeline import replay
from stream_doctor.values.options import Options
from tests.conftest import FIXTURES
from tools.sdk_helper_logs import helper_log

#: helper log fixture -> (helper, the wire fixture it was written from)
LOGS = {
    "anthropic/sdk_helper_one_call.jsonl": ("anthropic", "anthropic/one_call.sse"),
    "anthropic/sdk_helper_thinking_text_tool.jsonl": ("anthropic", "anthropic/thinking_text_tool.sse"),
    "anthropic/sdk_helper_block_index_reused.jsonl": ("anthropic", "anthropic/block_index_reused.sse"),
    "openai/sdk_helper_one_call.jsonl": ("openai", "openai/one_call.sse"),
    "openai/sdk_helper_parallel_calls.jsonl": ("openai", "openai/parallel_calls.sse"),
    "openai/sdk_helper_every_call_index_0.jsonl": ("openai", "openai/every_call_index_0.sse"),
    "openai/sdk_helper_two_choices_n2.jsonl": ("openai", "openai/two_choices_n2.sse"),
    "openai/sdk_helper_text_then_tool_call.jsonl": ("openai", "openai/text_then_tool_call.sse"),
    "openai/sdk_helper_strict_parsed_arguments.jsonl": ("openai-strict", "openai/text_then_tool_call.sse"),
    "openai-responses/sdk_helper_one_call.jsonl": ("responses", "openai-responses/one_call.sse"),
    "openai-responses/sdk_helper_parallel_calls.jsonl": ("responses", "openai-responses/parallel_calls.sse"),
}
#: the adapter each helper's log is read by (the Responses helper only adds ``snapshot`` to wire events)
READ_BY = {
    "anthropic": "anthropic-sdk",
    "openai": "openai-sdk",
    "openai-strict": "openai-sdk",
    "responses": "openai-responses",
}


def calls(path: Path | str, **options: object) -> list[tuple[str | None, str | None, str]]:
    report = replay(str(path), Options(**options))  # type: ignore[arg-type]
    return [(c.call_id, c.name, c.raw_arguments) for c in report.stream.calls]


@pytest.mark.parametrize("log", sorted(LOGS))
def test_fixture_is_what_the_pinned_sdk_helper_writes(log: str) -> None:
    """The fixtures are the helper's own output (anthropic-python as pinned in the test extra)."""
    helper, wire = LOGS[log]
    written = helper_log(helper, (FIXTURES / wire).read_bytes())
    assert written == (FIXTURES / log).read_text()


@pytest.mark.parametrize("log", sorted(LOGS))
def test_helper_log_rebuilds_the_wire_calls(log: str) -> None:
    _, wire = LOGS[log]
    report = replay(str(FIXTURES / log), Options())
    assert report.stream.capture.provider == READ_BY[LOGS[log][0]]
    assert calls(FIXTURES / log) == calls(FIXTURES / wire)


def test_wire_stream_is_not_taken_for_a_helper_log() -> None:
    assert replay(str(FIXTURES / "anthropic/one_call.sse"), Options()).stream.capture.provider == "anthropic"


def test_helper_log_can_be_forced(tmp_path: Path) -> None:
    # Only raw events (the helper's own lines dropped): not sniffed as a helper log, readable when forced.
    log = FIXTURES / "anthropic/sdk_helper_one_call.jsonl"
    raw_lines = [
        line
        for line in log.read_text().splitlines()
        if '"type":"input_json"' not in line and '"type":"text"' not in line and '"content_block_stop"' not in line
    ]
    path = tmp_path / "raw_only.jsonl"
    path.write_text("\n".join(raw_lines) + "\n")
    assert replay(str(path), Options()).stream.capture.provider == "anthropic"
    forced = replay(str(path), Options(provider="anthropic-sdk"))
    assert forced.stream.capture.provider == "anthropic-sdk"


def test_reused_index_snapshot_is_reported_where_the_helper_wrote_it() -> None:
    report = replay(str(FIXTURES / "anthropic/sdk_helper_block_index_reused.jsonl"), Options())
    [finding] = [f for f in report.findings if f.code == "SD532"]
    assert finding.location.line == 20  # the first input_json of get_local_time
    assert 'input_json.snapshot is {"location":"Tokyo, Japan"}' in finding.message
    assert "nothing yet" in finding.message


def test_openai_merged_call_snapshot_is_reported() -> None:
    report = replay(str(FIXTURES / "openai/sdk_helper_every_call_index_0.jsonl"), Options())
    [finding] = [f for f in report.findings if f.code == "SD532"]
    # the chunk that starts the second call: its snapshot already has it merged into the first
    assert finding.location.line == 15
    assert "chunk.snapshot.choices[0].message.tool_calls[0].function.arguments is" in finding.message
    assert "Berlin" in finding.message


def test_wire_chunks_are_not_taken_for_a_helper_log() -> None:
    assert replay(str(FIXTURES / "openai/one_call.sse"), Options()).stream.capture.provider == "openai"


def test_responses_helper_log_is_json_lines_not_a_recording() -> None:
    report = replay(str(FIXTURES / "openai-responses/sdk_helper_one_call.jsonl"), Options())
    assert report.stream.capture.container == "jsonl"


def test_helper_events_without_their_raw_deltas_are_not_compared(tmp_path: Path) -> None:
    # A log that left the raw content_block_delta lines out does not hold what the snapshots restate:
    # no verdict on them (the real helper yields each of its events right after its delta).
    log = FIXTURES / "anthropic/sdk_helper_thinking_text_tool.jsonl"
    lines = [line for line in log.read_text().splitlines() if '"type":"content_block_delta"' not in line]
    path = tmp_path / "without_raw_deltas.jsonl"
    path.write_text("\n".join(lines) + "\n")
    report = replay(str(path), Options(provider="anthropic-sdk"))
    assert [f.code for f in report.findings if f.code == "SD532"] == []
