"""The bare JSONL reader: a frame per non-blank line; a bad line is a frame error, not a crash."""

from __future__ import annotations

import pytest

from stream_doctor.capture.base import NOT_JSON, Pos
from stream_doctor.capture.jsonl import ENVELOPE_READER, JSONL_READER, read_jsonl

CHUNKS = (
    b'{"type":"response.created"}\n'
    b"\n"
    b'{"type":"response.function_call_arguments.delta","delta":"{\\"a\\""}\n'
    b'{"type":"response.completed"}\n'
)


def test_positions_skip_blank_lines() -> None:
    capture = read_jsonl(CHUNKS, "chunks.txt")
    assert [f.pos for f in capture.frames] == [
        Pos(1, 1, 0),
        Pos(2, 3, CHUNKS.index(b'{"type":"response.function')),
        Pos(3, 4, CHUNKS.index(b'{"type":"response.completed')),
    ]
    assert capture.frames[1].value["delta"] == '{"a"'
    assert capture.frames[2].data == b'{"type":"response.completed"}'
    assert capture.container == "jsonl"
    assert capture.ended_cleanly
    assert capture.problems == []


@pytest.mark.parametrize("line_end", [b"\r\n", b"\r"], ids=["crlf", "cr"])
def test_other_line_ends(line_end: bytes) -> None:
    data = CHUNKS.replace(b"\n", line_end)
    capture = read_jsonl(data, "chunks.txt")
    assert [f.pos.line for f in capture.frames] == [1, 3, 4]
    for frame in capture.frames:
        assert data[frame.pos.offset :].startswith(frame.data)


def test_bom_and_whitespace_only_lines() -> None:
    data = b'\xef\xbb\xbf{"a":1}\n   \n\t\n{"b":2}\n'
    capture = read_jsonl(data, "x")
    assert [(f.pos, f.value) for f in capture.frames] == [
        (Pos(1, 1, 3), {"a": 1}),
        (Pos(2, 4, data.index(b'{"b"')), {"b": 2}),
    ]


def test_bad_lines_are_frames_with_errors_and_the_rest_is_read() -> None:
    data = b'{"a":1}\n{"a":\n[DONE]\n{"caf\xe9":1}\n{"b":2}\n'
    capture = read_jsonl(data, "x")
    assert [f.value for f in capture.frames][0] == {"a": 1}
    assert [f.value for f in capture.frames][-1] == {"b": 2}
    bad = capture.frames[1:4]
    assert all(f.value is NOT_JSON for f in bad)
    assert [f.pos.line for f in bad] == [2, 3, 4]
    assert bad[0].error == "not JSON: unexpected end of data at column 6"
    assert bad[2].error == "not JSON: not valid UTF-8"
    assert capture.ended_cleanly  # every line was terminated


def test_lines_that_are_not_objects_are_still_frames() -> None:
    capture = read_jsonl(b'{"a":1}\n[1,2]\n"text"\n', "x")
    assert [f.value for f in capture.frames] == [{"a": 1}, [1, 2], "text"]


def test_cut_last_line_means_the_stream_was_cut() -> None:
    capture = read_jsonl(b'{"a":1}\n{"type":"content_blo', "x")
    assert capture.frames[-1].value is NOT_JSON
    assert not capture.ended_cleanly
    assert [(p.kind, p.pos) for p in capture.problems] == [("unterminated-event", Pos(2, 2, 8))]


def test_whole_last_line_without_newline_is_fine() -> None:
    capture = read_jsonl(b'{"a":1}\n{"b":2}', "x")
    assert [f.value for f in capture.frames] == [{"a": 1}, {"b": 2}]
    assert capture.ended_cleanly


def test_deep_nesting_is_a_frame_error_not_a_crash() -> None:
    deep = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    capture = read_jsonl(deep + b'\n{"ok":true}\n', "x")
    assert capture.frames[0].value is NOT_JSON
    assert capture.frames[0].error is not None
    assert "depth" in capture.frames[0].error
    assert capture.frames[1].value == {"ok": True}


def test_a_50_mb_line() -> None:
    big = b'{"arguments":"' + b"y" * 50_000_000 + b'"}'
    capture = read_jsonl(big + b"\n" + big[:-2] + b"\n{}\n", "x")
    assert len(capture.frames) == 3
    assert len(capture.frames[0].value["arguments"]) == 50_000_000
    assert capture.frames[1].value is NOT_JSON  # the string never closes
    assert capture.frames[1].error is not None
    assert capture.frames[2].pos == Pos(3, 3, (len(big) + 1) + (len(big) - 2 + 1))


def test_binary_garbage_does_not_crash() -> None:
    capture = read_jsonl(bytes(range(256)) * 16, "x")
    assert all(f.value is NOT_JSON for f in capture.frames)


def test_sniff_jsonl_and_envelope() -> None:
    assert JSONL_READER.sniff(CHUNKS) == 80
    assert ENVELOPE_READER.sniff(CHUNKS) == 0
    envelope = b'{"sd":"header","version":1}\n{"sd":"event","data":{}}\n'
    assert ENVELOPE_READER.sniff(envelope) == 100
    assert JSONL_READER.sniff(envelope) == 80  # the envelope still wins on score
    assert JSONL_READER.sniff(b"\n\n" + CHUNKS) == 80
    assert JSONL_READER.sniff(b"[{}]\n") == 0
    assert JSONL_READER.sniff(b"data: {}\n\n") == 0
    assert JSONL_READER.reject_reason(b"data: {}\n\n") == "line 1 is not a JSON object"
    assert JSONL_READER.reject_reason(b"\n[1]\n") == "starts with '[' (a JSON array, not one value per line)"


def test_sniff_a_first_line_cut_by_the_head() -> None:
    head = (b'{"sd":"event","data":{"text":"' + b"z" * 70_000)[: 64 * 1024]
    assert ENVELOPE_READER.sniff(head) == 100
    assert JSONL_READER.sniff(head) == 80
    bare = (b'{"type":"x","text":"' + b"z" * 70_000)[: 64 * 1024]
    assert ENVELOPE_READER.sniff(bare) == 0
    assert JSONL_READER.sniff(bare) == 80
