"""Several captures of one session replayed as one conversation: the recording proxy writes one
envelope per exchange, and the cross-turn rules (SD608, the SD6xx pairing rules) must still see
both turns, with each finding pointing into the file it is about."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from typer.testing import CliRunner

import stream_doctor
from stream_doctor.capture.session import collect
from stream_doctor.cli import app
from stream_doctor.engine.stages import RunError
from stream_doctor.record.parse import event_record
from stream_doctor.record.writer import EnvelopeWriter, request_record

URL = "https://api.anthropic.com/v1/messages"
CALL_ID = "toolu_016VrNJIy6Bc1b7mC4BgQKrx"
ARGUMENTS = {"path": "notes/todo.md", "content": "# TODO\n\n- [ ] Renew the TLS certificate\n"}
TOOLS = [
    {
        "name": "write_file",
        "description": "Write a text file in the workspace.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
    }
]
USER = {"role": "user", "content": "Start a notes/todo.md with one item: renew the TLS certificate."}


def _sse(name: str, data: dict[str, Any]) -> tuple[str, bytes]:
    return name, json.dumps(data).encode()


def _first_response() -> list[tuple[str, bytes]]:
    text = json.dumps(ARGUMENTS)
    middle = len(text) // 2
    return [
        _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_01",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [],
                    "stop_reason": None,
                    "usage": {"input_tokens": 10, "output_tokens": 1},
                },
            },
        ),  # noqa: E501
        _sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": CALL_ID, "name": "write_file", "input": {}},
            },
        ),  # noqa: E501
        _sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": text[:middle]},
            },
        ),  # noqa: E501
        _sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": text[middle:]},
            },
        ),  # noqa: E501
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 40},
            },
        ),  # noqa: E501
        _sse("message_stop", {"type": "message_stop"}),
    ]


def _second_response() -> list[tuple[str, bytes]]:
    return [
        _sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_02",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [],
                    "stop_reason": None,
                    "usage": {"input_tokens": 60, "output_tokens": 1},
                },
            },
        ),  # noqa: E501
        _sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),  # noqa: E501
        _sse(
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Done."}},
        ),  # noqa: E501
        _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 3},
            },
        ),  # noqa: E501
        _sse("message_stop", {"type": "message_stop"}),
    ]


def _write(path: Path, body: dict[str, Any], events: list[tuple[str, bytes]], started: str | None = None) -> None:
    """One exchange as ``stream-doctor record``'s proxy writes it (record/proxy.py): header, request with
    its response status, then one record per event as it arrives."""
    with path.open("wb") as file:
        writer = EnvelopeWriter(file, start=0.0)
        writer.now = lambda: 0.25  # type: ignore[method-assign]
        if started is None:
            writer.header("anthropic", "stream-doctor record (proxy to https://api.anthropic.com)")
        else:  # a header that says when the exchange began (docs/envelope.md)
            writer.write({"sd": "header", "version": 1, "provider": "anthropic", "started": started})
        headers = [("content-type", "application/json"), ("x-api-key", "sk-ant-api03-not-a-real-key")]
        record = request_record(0.0, "POST", URL, json.dumps(body).encode(), headers)
        record["response"] = {"status": 200, "headers": {"content-type": "text/event-stream"}}
        writer.write(record)
        for name, payload in events:
            writer.write(event_record(writer.now(), name, payload))


def _session(
    folder: Path, echoed: dict[str, Any], names: tuple[str, str] = ("0001-a.jsonl", "0002-b.jsonl")
) -> tuple[Path, Path]:  # noqa: E501
    """Two exchanges of one agent loop: the call streamed in the first, sent back with ``echoed`` in the second."""
    folder.mkdir(exist_ok=True)
    first, second = folder / names[0], folder / names[1]
    _write(
        first,
        {"model": "claude-sonnet-4-5", "max_tokens": 1024, "stream": True, "tools": TOOLS, "messages": [USER]},
        _first_response(),
    )  # noqa: E501
    assistant = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": CALL_ID, "name": "write_file", "input": echoed}],
    }  # noqa: E501
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": CALL_ID, "content": "written"}]}
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "stream": True,
        "tools": TOOLS,
        "messages": [USER, assistant, result],
    }  # noqa: E501
    _write(second, body, _second_response())
    return first, second


def _replay_cli(*arguments: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(app, ["replay", *arguments, "--format", "json", "--isolated"])
    return result.exit_code, orjson.loads(result.stdout) if result.stdout.startswith("{") else {"error": result.output}


def _codes(report: dict[str, Any]) -> list[str]:
    return [f["code"] for f in report["findings"]]


def test_two_envelopes_give_sd608_at_the_echo_in_the_second_file(tmp_path: Path) -> None:
    first, second = _session(tmp_path / "session", echoed={})
    code, report = _replay_cli(str(first), str(second))
    assert code == 1, report
    (sd608,) = [f for f in report["findings"] if f["code"] == "SD608"]
    assert sd608["severity"] == "error"
    assert sd608["location"]["path"] == str(second)
    assert sd608["location"]["line"] == 2  # the request record, after the header
    assert sd608["location"]["request_path"] == "messages[1].content[0]"  # the tool_use sent back
    streamed = [r["location"] for r in sd608["related"]]
    assert any(where["path"] == str(first) for where in streamed), sd608["related"]
    assert report["capture"]["files"] == [str(first), str(second)]
    assert [(t["turn"], t["path"]) for t in report["turns"]] == [(1, str(first)), (2, str(second))]


def test_a_folder_is_replayed_as_its_files_in_order(tmp_path: Path) -> None:
    first, second = _session(tmp_path / "session", echoed={})
    code, report = _replay_cli(str(tmp_path / "session"))
    assert code == 1
    assert "SD608" in _codes(report)
    assert report["capture"]["path"] == str(tmp_path / "session")
    assert report["capture"]["files"] == [str(first), str(second)]
    assert report["capture"]["order"] == "in file-name order"


def test_files_given_out_of_order_are_replayed_in_file_name_order(tmp_path: Path) -> None:
    first, second = _session(tmp_path / "session", echoed={}, names=("0002-x.jsonl", "0010-y.jsonl"))
    code, report = _replay_cli(str(second), str(first))
    assert report["capture"]["files"] == [str(first), str(second)]  # 0002 before 0010: numbers as numbers
    assert "SD608" in _codes(report)


def test_recorded_start_times_order_the_files_before_their_names(tmp_path: Path) -> None:
    folder = tmp_path / "session"
    folder.mkdir()
    assistant = {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": CALL_ID, "name": "write_file", "input": {}}],
    }  # noqa: E501
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": CALL_ID, "content": "written"}]}
    later_body = {"model": "m", "max_tokens": 9, "stream": True, "tools": TOOLS, "messages": [USER, assistant, result]}
    _write(folder / "a.jsonl", later_body, _second_response(), started="2026-03-01T10:00:05Z")
    _write(
        folder / "b.jsonl",
        {"model": "m", "max_tokens": 9, "stream": True, "tools": TOOLS, "messages": [USER]},
        _first_response(),
        started="2026-03-01T10:00:00Z",
    )  # noqa: E501
    session = collect([str(folder)])
    assert session.files == (str(folder / "b.jsonl"), str(folder / "a.jsonl"))
    assert session.order_note == "in time order (header started)"
    code, report = _replay_cli(str(folder))
    assert "SD608" in _codes(report)
    assert report["capture"]["order"] == "in time order (header started)"


def test_near_miss_the_echo_carries_the_streamed_input(tmp_path: Path) -> None:
    first, second = _session(tmp_path / "session", echoed=ARGUMENTS)
    code, report = _replay_cli(str(first), str(second))
    assert code == 0, report
    assert not [c for c in _codes(report) if c.startswith("SD6")]


def test_each_file_alone_cannot_show_the_echo(tmp_path: Path) -> None:
    """What the issue is about: one exchange per file hides SD608 unless the files are replayed together."""
    first, second = _session(tmp_path / "session", echoed={})
    assert "SD608" not in _codes(_replay_cli(str(first))[1])
    assert "SD608" not in _codes(_replay_cli(str(second))[1])


def test_terminal_report_says_which_files_and_in_what_order(tmp_path: Path) -> None:
    first, second = _session(tmp_path / "session", echoed={})
    result = CliRunner().invoke(
        app, ["replay", str(tmp_path / "session"), "--isolated", "--width", "200", "--no-color"]
    )
    assert result.exit_code == 1
    assert "2 captures in file-name order" in result.stdout
    assert f"SD608 echoed-empty-input  {second}:2 (interaction 2" in result.stdout


def test_mixed_providers_are_refused_in_one_line(tmp_path: Path) -> None:
    first, _ = _session(tmp_path / "session", echoed={})
    other = tmp_path / "session" / "0003-openai.jsonl"
    chunk = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"}, "finish_reason": None}],
    }  # noqa: E501
    done = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
    }  # noqa: E501
    with other.open("wb") as file:
        writer = EnvelopeWriter(file, start=0.0)
        writer.header("openai", "stream-doctor record (proxy to https://api.openai.com)")
        writer.write(
            request_record(
                0.0,
                "POST",
                "https://api.openai.com/v1/chat/completions",
                b'{"model": "gpt-4o", "stream": true, "messages": []}',
                [],
            )
        )  # noqa: E501
        for payload in (chunk, done):
            writer.write(event_record(0.1, None, json.dumps(payload).encode()))
        writer.write(event_record(0.2, None, b"[DONE]"))
    result = CliRunner().invoke(app, ["replay", str(tmp_path / "session"), "--isolated"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("stream-doctor: error: ")
    assert "one provider" in lines[0] and str(other) in lines[0]


def test_mixed_containers_are_refused_in_one_line(tmp_path: Path) -> None:
    first, _ = _session(tmp_path / "session", echoed={})
    raw = tmp_path / "session" / "0003-raw.sse"
    raw.write_bytes(b"".join(b"event: %s\ndata: %s\n\n" % (name.encode(), data) for name, data in _second_response()))
    result = CliRunner().invoke(app, ["replay", str(first), str(raw), "--isolated"])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "one format" in result.output


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["empty-folder"], "empty-folder: the folder holds no files\n"),
        (["0001-a.jsonl", "0001-a.jsonl"], "named twice"),
        (["0001-a.jsonl", "-"], "standard input"),
    ],
)
def test_what_cannot_be_a_session_is_one_line(tmp_path: Path, arguments: list[str], message: str) -> None:
    _session(tmp_path, echoed={})
    (tmp_path / "empty-folder").mkdir()
    paths = [a if a == "-" else str(tmp_path / a) for a in arguments]
    result = CliRunner().invoke(app, ["replay", *paths, "--isolated"])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and message in result.output, result.output


def test_the_library_takes_a_list_of_paths_and_gives_the_same_findings(tmp_path: Path) -> None:
    first, second = _session(tmp_path / "session", echoed={})
    _, cli = _replay_cli(str(first), str(second))
    report = stream_doctor.replay([first, second])
    assert [(f.code, f.location.path, f.location.line) for f in report.findings] == [
        (f["code"], f["location"]["path"], f["location"]["line"]) for f in cli["findings"]
    ]
    folder = stream_doctor.replay(str(tmp_path / "session"))
    assert [f.code for f in folder.findings] == [f.code for f in report.findings]
    with pytest.raises(RunError, match="x.jsonl: no such file"):
        stream_doctor.replay([first, tmp_path / "missing-folder" / "x.jsonl"])


def test_the_library_still_takes_a_list_of_decoded_events() -> None:
    events = [orjson.loads(data) for _, data in _second_response()]
    report = stream_doctor.replay(events, provider="anthropic")
    assert report.stream.capture.path == "<memory>"


def test_convert_writes_the_session_as_one_envelope_that_replays_alike(tmp_path: Path) -> None:
    first, second = _session(tmp_path / "session", echoed={})
    out = tmp_path / "joined.jsonl"
    result = CliRunner().invoke(app, ["convert", str(tmp_path / "session"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    _, together = _replay_cli(str(first), str(second))
    _, converted = _replay_cli(str(out))
    assert _codes(converted) == _codes(together)
    assert "SD608" in _codes(converted)
    assert b"sk-ant-api03" not in out.read_bytes()


def test_convert_refuses_a_later_file_that_starts_no_turn(tmp_path: Path) -> None:
    first, _ = _session(tmp_path / "session", echoed={})
    bare = tmp_path / "session" / "0003-bare.jsonl"
    bare.write_bytes(b"".join(orjson.dumps(event_record(0.1, n, d)) + b"\n" for n, d in _second_response()))
    result = CliRunner().invoke(app, ["convert", str(tmp_path / "session")])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "no request record" in result.output and str(bare) in result.output
    replayed = CliRunner().invoke(app, ["replay", str(tmp_path / "session"), "--isolated", "--format", "json"])
    assert len(orjson.loads(replayed.stdout)["turns"]) == 3  # replay keeps it as a turn of its own


def test_a_folder_leaves_out_hidden_files_and_subfolders_and_orders_by_name_unless_every_file_has_a_time(
    tmp_path: Path,
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / ".partial.jsonl").write_bytes(b"{}\n")
    (tmp_path / "b10.jsonl").write_bytes(b'{"sd": "header", "version": 1, "started": "2026-03-01T10:00:00Z"}\n')
    (tmp_path / "b9.jsonl").write_bytes(b'{"sd": "header", "version": 1}\n')  # no time: name order for all
    session = collect([str(tmp_path)])
    assert session.files == (str(tmp_path / "b9.jsonl"), str(tmp_path / "b10.jsonl"))
    assert session.order == "name" and session.folder == str(tmp_path)
    (tmp_path / "b9.jsonl").write_bytes(b'{"sd": "header", "version": 1, "started": "not a time"}\n')
    assert collect([str(tmp_path)]).order == "name"
    (tmp_path / "b9.jsonl").write_bytes(b'{"sd": "header", "version": 1, "started": "2026-03-01T11:00:00+01:00"}\n')
    assert collect([str(tmp_path)]).files == (str(tmp_path / "b9.jsonl"), str(tmp_path / "b10.jsonl"))  # 10:00 UTC


def test_a_header_line_full_of_header_markers_is_read_in_one_pass(tmp_path: Path) -> None:
    """The start time is read by decoding the header line, never by a pattern that could backtrack."""
    line = b'{"sd": "header", "version": 1, "note": "' + b'\\"sd\\": \\"header\\", ' * 4000 + b'"}\n'
    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_bytes(line)
    assert collect([str(tmp_path)]).order == "name"


CHECK = "; replay reads a folder's files as one conversation: `stream-doctor check {}` replays each capture under it on its own"


def test_a_folder_with_a_readme_names_it_and_suggests_check(tmp_path: Path) -> None:
    """Issue 36: a README among a folder's captures had given the whole "could not recognise" line."""
    folder = tmp_path / "captures"
    _session(folder, echoed={})
    (folder / "README.md").write_text("# What these captures are\n")
    result = CliRunner().invoke(app, ["replay", str(folder), "--isolated"])
    assert result.exit_code == 2
    assert result.output == (
        f"stream-doctor: error: {folder / 'README.md'}: not a capture (no capture format recognises it)"
        + CHECK.format(folder)
        + "\n"
    )
    assert CliRunner().invoke(app, ["check", str(folder), "--isolated"]).exit_code in (0, 1)  # what it suggests runs


def test_a_folder_of_folders_says_so_and_suggests_check(tmp_path: Path) -> None:
    (tmp_path / "top" / "other").mkdir(parents=True)
    _session(tmp_path / "top" / "session", echoed={})
    result = CliRunner().invoke(app, ["replay", str(tmp_path / "top"), "--isolated"])
    assert result.exit_code == 2
    top = tmp_path / "top"
    assert (
        result.output == f"stream-doctor: error: {top}: the folder holds no files, only 2 folders{CHECK.format(top)}\n"
    )


def test_a_readme_named_with_the_captures_is_the_full_reason(tmp_path: Path) -> None:
    """The near miss: files named one by one are not a folder; the README's line says why it is no capture."""
    first, second = _session(tmp_path / "session", echoed={})
    readme = tmp_path / "session" / "README.md"
    readme.write_text("# notes\n")
    result = CliRunner().invoke(app, ["replay", str(first), str(readme), "--isolated"])
    assert result.exit_code == 2
    assert "could not recognise the capture format (tried sse:" in result.output and "check" not in result.output
