"""The command line as a user runs it: exit codes, formats, options, and one-line errors."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from stream_doctor.cli import app
from tests.conftest import ROOT

runner = CliRunner()
EMPTY_INPUT = "fixtures/anthropic/empty_input_bug.jsonl"
CLEAN = "fixtures/anthropic/one_call.sse"


def run(*args: str, stdin: bytes | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), input=stdin)


def test_clean_capture_exits_0() -> None:
    result = run("replay", CLEAN, "--width", "100")
    assert result.exit_code == 0, result.output
    assert "No findings." in result.output
    assert "get_weather" in result.output and "complete" in result.output


def test_capture_with_an_error_exits_1_and_names_rule_and_place() -> None:
    result = run("replay", EMPTY_INPUT, "--width", "120")
    assert result.exit_code == 1
    assert "SD102" in result.output and "empty-input-execution" in result.output
    assert f"{EMPTY_INPUT}:" in result.output


def test_fail_on_controls_the_exit_code() -> None:
    assert run("replay", "fixtures/anthropic/pause_turn.sse").exit_code == 0  # an info finding only
    assert run("replay", "fixtures/anthropic/pause_turn.sse", "--fail-on", "info").exit_code == 1
    assert run("replay", EMPTY_INPUT, "--ignore", "SD1").exit_code == 0
    assert run("replay", EMPTY_INPUT, "--select", "SD3,SD4").exit_code == 0


def test_json_format_is_machine_readable() -> None:
    result = run("replay", EMPTY_INPUT, "--format", "json")
    data = json.loads(result.stdout)
    assert data["schema_version"] == 1
    assert [f["code"] for f in data["findings"]] == ["SD705", "SD102"]  # SD705: info, where an eager client ran early
    assert data["calls"][0]["arguments"]["path"] == "notes/todo.md"


def test_call_option_shows_fragments_and_reassembled_input() -> None:
    data = json.loads(run("replay", CLEAN, "--format", "json").stdout)
    call_id = data["calls"][0]["id"]
    result = run("replay", CLEAN, "--call", call_id, "--width", "120")
    assert result.exit_code == 0
    assert "reassembled input" in result.output
    assert '"location": "Lisbon, Portugal"' in result.output
    assert '\'{"location": "Lis\'' in result.output  # a fragment, shown as received
    as_json = json.loads(run("replay", CLEAN, "--call", call_id, "--format", "json").stdout)
    assert len(as_json["calls"]) == 1 and len(as_json["calls"][0]["fragment_list"]) == 5
    by_number = json.loads(run("replay", CLEAN, "--call", "1", "--format", "json").stdout)
    assert by_number["calls"] == as_json["calls"]  # the number the table shows selects it in JSON too


def test_timeline_folds_runs_of_deltas() -> None:
    result = run("replay", CLEAN, "--timeline", "--width", "120")
    assert result.exit_code == 0
    assert "Timeline" in result.output
    assert "content_block_delta  index 1 input_json_delta ×5 (51 chars)" in result.output
    assert "message_stop" in result.output


def test_stdin_and_gzip(tmp_path: Path) -> None:
    data = (ROOT / CLEAN).read_bytes()
    result = run("replay", "-", "--format", "json", stdin=data)
    assert result.exit_code == 0 and json.loads(result.stdout)["capture"]["path"] == "<stdin>"
    packed = tmp_path / "capture.sse.gz"
    packed.write_bytes(gzip.compress(data))
    as_gzip = json.loads(run("replay", str(packed), "--format", "json").stdout)
    assert as_gzip["capture"]["compressed"] == "gzip" and len(as_gzip["calls"]) == 1


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4,
        b"[" * 100_000,
        b"hello, world\n",
        b'{"sd":"header","version":99}\n',
    ],
    ids=["empty", "binary", "deep-nesting", "plain-text", "future-envelope"],
)
def test_unusable_input_is_a_one_line_error_with_exit_2(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "capture.bin"
    path.write_bytes(content)
    result = run("replay", str(path))
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"stream-doctor: error: {path}")


def test_missing_file_and_bad_options_exit_2(tmp_path: Path) -> None:
    missing = run("replay", str(tmp_path / "nope.sse"))
    assert missing.exit_code == 2 and "nope.sse" in missing.output
    assert run("replay", CLEAN, "--provider", "nonesuch").exit_code == 2
    assert run("replay", CLEAN, "--container", "nonesuch").exit_code == 2
    assert run("replay", CLEAN, "--fail-on", "fatal").exit_code == 2


def test_a_forced_provider_that_reads_none_of_the_events_exits_2_naming_the_detected_one(tmp_path: Path) -> None:
    """Issue 36: --provider openai on an Anthropic capture had said "No tool calls ... passed" (exit 0)."""
    result = run("replay", "fixtures/anthropic/one_call.sse", "--provider", "openai")
    assert result.exit_code == 2
    assert result.output == (
        "stream-doctor: error: fixtures/anthropic/one_call.sse: --provider openai reads none of its 15 frames "
        "(14 unknown or malformed); it looks like anthropic (detected): leave out --provider, or force anthropic\n"
    )
    path = tmp_path / "other.jsonl"
    path.write_text('{"foo":1}\n{"bar":2}\n')
    garbage = run("replay", str(path), "--provider", "anthropic")
    assert garbage.exit_code == 2 and garbage.output.endswith(
        "no provider is detected in it either: is it an LLM stream?\n"
    )


def test_a_forced_provider_that_reads_some_of_the_events_is_reported(tmp_path: Path) -> None:
    """The near miss: one event the forced adapter reads, and the rest are findings, not a refusal."""
    path = tmp_path / "other.jsonl"
    chunk = '{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"}}]}\n'
    path.write_text(chunk * 2 + '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n')
    from stream_doctor import replay

    assert (
        replay(path).stream.capture.provider == "openai"
    )  # detected: anthropic is forced on a capture it partly reads
    result = run("replay", str(path), "--provider", "anthropic")
    assert result.exit_code in (0, 1) and "SD001" in result.output and "anthropic (forced)" in result.output
    assert run("replay", "fixtures/anthropic/one_call.sse", "--provider", "anthropic").exit_code == 0


def test_rules_and_explain() -> None:
    listing = run("rules", "--format", "json")
    rules = json.loads(listing.stdout)
    assert {r["code"] for r in rules} >= {"SD101", "SD102", "SD201", "SD301"}
    explained = run("explain", "SD102")
    assert explained.exit_code == 0 and "How to fix" in explained.output
    assert run("explain", "empty-input-execution").exit_code == 0
    unknown = run("explain", "SD999")
    assert unknown.exit_code == 2 and "SD999" in unknown.output


def test_help_does_not_import_what_commands_do_not_need() -> None:
    code = (
        "import sys\n"
        "from stream_doctor.cli import app\n"
        "try:\n    app(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('jsonschema', 'orjson', 'yaml', 'stream_doctor.engine.pipeline') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_replay_does_not_import_jsonschema() -> None:
    code = (
        "import sys\n"
        "from stream_doctor.engine.pipeline import replay\nfrom stream_doctor.values.options import Options\n"
        f"replay({CLEAN!r}, Options())\n"
        "print('jsonschema' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert out.strip() == "False"


def test_a_capture_that_fits_several_providers_names_the_candidates(tmp_path: Path) -> None:
    # An error-only stream: Anthropic and the Responses API both send {"type": "error", ...}.
    path = tmp_path / "error_only.jsonl"
    path.write_text('{"type":"error","sequence_number":0,"error":{"type":"server_error","message":"boom"}}\n')
    result = run("replay", str(path))
    assert result.exit_code == 2
    assert "fits several providers equally well" in result.output
    assert "anthropic (70)" in result.output and "openai-responses (70)" in result.output
    assert "--provider" in result.output
    forced = run("replay", str(path), "--provider", "openai-responses", "--format", "json")
    assert forced.exit_code == 1 and json.loads(forced.stdout)["findings"][0]["code"] == "SD302"


def test_a_capture_no_provider_recognises_lists_what_was_tried(tmp_path: Path) -> None:
    path = tmp_path / "unknown.jsonl"
    path.write_text('{"foo": 1}\n{"bar": 2}\n')
    result = run("replay", str(path))
    assert result.exit_code == 2
    assert "could not tell which provider" in result.output
    assert "anthropic" in result.output and "openai" in result.output and "gemini" in result.output
    assert "holds JSON" not in result.output and "holds no JSON" not in result.output  # its frames are JSON


def test_a_capture_whose_frames_hold_no_json_says_why_no_provider_was_told(tmp_path: Path) -> None:
    path = tmp_path / "deep.sse"  # a Gemini chunk whose arguments nest past what the JSON reader follows
    deep = "[" * 1100 + "]" * 1100
    path.write_text(
        f'data: {{"candidates":[{{"content":{{"parts":[{{"functionCall":{{"name":"f","args":{{"x":{deep}}}}}}}]}}}}]}}\n\n'
    )
    result = run("replay", str(path))
    assert result.exit_code == 2
    assert "its one event frame holds no JSON (line 1: not JSON to the reader: depth limit exceeded" in result.output
    assert "nests deeper than 1,024 levels" in result.output and "--provider" in result.output
    path.write_text('data: {"a":\n\ndata: [DONE]\n\n')
    result = run("replay", str(path))
    assert result.exit_code == 2 and "none of its first 2 event frames holds JSON (line 1: not JSON:" in result.output


def test_an_unknown_call_exits_2_listing_the_calls() -> None:
    result = run("replay", "fixtures/anthropic/parallel_calls.sse", "--call", "3")
    assert result.exit_code == 2
    assert "no call '3' in this capture" in result.output
    assert "1 (toolu_01G1jK3D2s1aQU1VJa1a6xDP, get_weather), 2 (" in result.output


def test_call_numbers_are_the_same_in_every_format_across_turns() -> None:
    capture = "fixtures/conversations/positional_ids_reused.yaml"
    table = run("replay", capture, "--width", "120").output
    assert "2      0  call_0  get_local_time" in table  # numbered across turns, as --call takes them
    terminal = run("replay", capture, "--call", "2", "--width", "120").output
    assert "Call 2: get_local_time" in terminal
    as_json = json.loads(run("replay", capture, "--call", "2", "--format", "json").stdout)
    assert [(c["number"], c["name"], c["turn"]) for c in as_json["calls"]] == [(2, "get_local_time", 2)]
    lines = [json.loads(line) for line in run("replay", capture, "--format", "jsonl").stdout.splitlines()]
    assert [(line["number"], line["name"]) for line in lines if line["type"] == "call"] == [
        (1, "get_weather"),
        (2, "get_local_time"),
    ]


def test_status_colours_match_their_meaning() -> None:
    out = run("replay", "fixtures/anthropic/unparseable_trailing_data.sse", "--color", "--width", "160").output
    status = out[out.index("unparseable (") - 20 : out.index("unparseable (")]
    assert "\x1b[1;31m" in status and "\x1b[32m" not in status  # red, not green
    clean = run("replay", CLEAN, "--color", "--width", "160").output
    assert "\x1b[32mcomplete" in clean


def test_statistics_count_findings_per_code() -> None:
    result = run("replay", EMPTY_INPUT, "--statistics", "--width", "100")
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        "1  SD102  error    empty-input-execution",
        "1  SD705  info     partial-parse-hazard",
        "2 findings of 2 codes",
    ]
    as_json = json.loads(run("replay", EMPTY_INPUT, "--statistics", "--format", "json").stdout)
    assert {row["code"]: row["count"] for row in as_json} == {"SD102": 1, "SD705": 1}


@pytest.mark.slow  # --client all: every installed library run in a child process, twice (29 s of CPU)
def test_statistics_count_a_code_found_at_two_severities_in_two_rows() -> None:
    """Issue 36: SD801 is a warning for a real library and info for a naive pattern; one row had
    counted all three at the first one's severity (3 warnings where the summary says 1 and 2 info)."""
    capture = "fixtures/anthropic/skipped_block_index.sse"
    result = run("replay", capture, "--client", "all", "--statistics", "--width", "100")
    assert result.output.splitlines() == [
        "2  SD801  info     client-input-differs",
        "1  SD404  warning  block-index-gap",
        "1  SD801  warning  client-input-differs",
        "1  SD805  warning  client-raises",
        "5 findings of 3 codes",
    ]
    summary = run("replay", capture, "--client", "all").output.splitlines()[-1]
    assert summary.startswith("0 errors, 3 warnings, 2 info")  # the rows add up to the report's summary


def test_jsonl_ends_with_the_summary() -> None:
    lines = [json.loads(line) for line in run("replay", EMPTY_INPUT, "--format", "jsonl").stdout.splitlines()]
    assert [line["type"] for line in lines] == ["call", "finding", "finding", "summary"]
    assert lines[-1]["failed"] is True and lines[-1]["error"] == 1


def test_max_rows_applies_to_the_terminal_report_on_standard_output() -> None:
    capped = run("replay", "fixtures/anthropic/parallel_calls.sse", "--max-rows", "1", "--width", "120").output
    assert "more call not shown" in capped or "more calls not shown" in capped
    whole = run("replay", "fixtures/anthropic/parallel_calls.sse", "--width", "120").output
    assert "not shown" not in whole


def _on_a_terminal(*args: str) -> tuple[int, bytes, str]:
    """The CLI run with its standard output a pseudo-terminal, read as it writes; (exit code, output, stderr)."""
    import pty
    import select

    leader, follower = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "100"}
    process = subprocess.Popen(
        [sys.executable, "-m", "stream_doctor", *args], stdout=follower, stderr=subprocess.PIPE, cwd=ROOT, env=env
    )
    os.close(follower)
    out = b""
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], 60)
            assert ready, "no output for 60 seconds"
            try:
                chunk = os.read(leader, 1 << 16)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
        err = process.stderr.read().decode() if process.stderr else ""
        return process.wait(timeout=60), out, err
    finally:
        os.close(leader)
        if process.stderr:
            process.stderr.close()


def test_an_html_report_is_not_written_to_a_terminal() -> None:
    """Issue 36: ``--format html`` without -o had poured the page's markup onto the terminal."""
    code, out, err = _on_a_terminal("replay", CLEAN, "--format", "html")
    assert (code, out) == (2, b"")
    assert err == (
        "stream-doctor: error: --format html writes a web page, not text for the terminal: "
        "add -o report.html, or redirect (> report.html)\n"
    )


def test_an_html_report_asked_for_on_standard_output_is_written() -> None:
    """The near misses: redirected (a pipe), or ``-o -`` on a terminal, the page is written there."""
    piped = subprocess.run(
        [sys.executable, "-m", "stream_doctor", "replay", CLEAN, "--format", "html"],
        cwd=ROOT,
        capture_output=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert piped.returncode == 0 and piped.stdout.lower().startswith(b"<!doctype html>"), piped.stderr
    code, out, _ = _on_a_terminal("replay", CLEAN, "--format", "html", "-o", "-")
    assert code == 0 and out.lower().startswith(b"<!doctype html>")
    assert _on_a_terminal("replay", CLEAN, "--format", "json")[0] == 0  # only the page is refused
