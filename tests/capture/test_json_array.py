"""The JSON array reader: one frame per element at its own position, and cut arrays still read."""

from __future__ import annotations

import orjson
import pytest

from stream_doctor.capture.base import NOT_JSON, CaptureError, Pos
from stream_doctor.capture.json_array import READER, read_json_array

PRETTY = b"""[
  {
    "candidates": [{"content": {"parts": [{"text": "a [tricky], {string}"}]}}]
  },
  {
    "candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": {}}}]}}]
  }
]
"""

# Gemini's streamGenerateContent without alt=sse separates elements with "\n,\r\n".
GEMINI = b'[{"candidates": [{"index": 0}]}\n,\r\n{"candidates": [{"index": 1}]}\n,\r\n{"usageMetadata": {}}\n]'


def test_pretty_printed_elements_with_their_positions() -> None:
    capture = read_json_array(PRETTY, "gemini.json")
    assert [f.pos for f in capture.frames] == [
        Pos(1, 2, 4),
        Pos(2, 5, PRETTY.index(b"  {\n", 10) + 2),
    ]
    assert capture.frames[0].value["candidates"][0]["content"]["parts"][0]["text"] == ("a [tricky], {string}")
    assert capture.frames[1].data.startswith(b"{") and capture.frames[1].data.endswith(b"}")
    assert capture.container == "json"
    assert capture.ended_cleanly
    assert capture.problems == []


def test_compact_array_and_gemini_separators() -> None:
    capture = read_json_array(GEMINI, "x")
    assert [f.pos.line for f in capture.frames] == [1, 3, 5]
    for frame in capture.frames:
        assert GEMINI[frame.pos.offset :].startswith(frame.data)
    assert capture.frames[2].value == {"usageMetadata": {}}


def test_strings_with_escapes_brackets_and_commas() -> None:
    elements = [
        {"s": 'quote " and backslash \\ and ] } , ['},
        "top-level string, with [brackets]",
        {"s": "\\"},
        [1, [2, [3]]],
        12.5,
        None,
        {"s": "snow \u2603 and \n newline"},
    ]
    data = orjson.dumps(elements, option=orjson.OPT_INDENT_2)
    capture = read_json_array(data, "x")
    assert [f.value for f in capture.frames] == elements


def test_cut_inside_an_element_keeps_the_whole_ones() -> None:
    data = GEMINI[: GEMINI.index(b'{"usageMetadata"') + 8]
    capture = read_json_array(data, "x")
    assert [f.value for f in capture.frames] == [
        {"candidates": [{"index": 0}]},
        {"candidates": [{"index": 1}]},
    ]
    assert not capture.ended_cleanly
    [problem] = capture.problems
    assert problem.kind == "truncated-array"
    assert problem.pos == Pos(3, 5, GEMINI.index(b'{"usageMetadata"'))
    assert "2 whole elements" in problem.message


def test_cut_inside_a_string() -> None:
    capture = read_json_array(b'[{"a": 1}, {"text": "never clo', "x")
    assert [f.value for f in capture.frames] == [{"a": 1}]
    assert [p.kind for p in capture.problems] == ["truncated-array"]


def test_only_the_closing_bracket_missing() -> None:
    capture = read_json_array(GEMINI[:-2], "x")
    assert len(capture.frames) == 3
    assert not capture.ended_cleanly
    assert "closing ']' is missing" in capture.problems[0].message


def test_bare_open_bracket() -> None:
    capture = read_json_array(b"[\n", "x")
    assert capture.frames == []
    assert [p.kind for p in capture.problems] == ["truncated-array"]


def test_empty_array() -> None:
    capture = read_json_array(b" [ ] \n", "x")
    assert capture.frames == []
    assert capture.ended_cleanly
    assert capture.problems == []


def test_bad_elements_are_frame_errors() -> None:
    capture = read_json_array(b'[1, nope, {"a": }, 2,]', "x")
    values = [f.value for f in capture.frames]
    assert values[0] == 1 and values[3] == 2
    assert values[1] is NOT_JSON and values[2] is NOT_JSON and values[4] is NOT_JSON
    assert capture.frames[4].error == "not JSON: empty element"


def test_data_after_the_array_is_reported() -> None:
    capture = read_json_array(b"[1]\n[2]\n", "x")
    assert [f.value for f in capture.frames] == [1]
    assert [(p.kind, p.pos) for p in capture.problems] == [("data-after-array", Pos(2, 2, 4))]


@pytest.mark.parametrize("data", [b'{"a": 1}', b"data: {}\n\n", b"\xef\xbb\xbf  42"])
def test_not_an_array_is_a_capture_error(data: bytes) -> None:
    with pytest.raises(CaptureError, match="not a JSON array"):
        read_json_array(data, "x")


def test_whitespace_only_is_a_capture_error() -> None:
    with pytest.raises(CaptureError, match="no JSON value"):
        read_json_array(b" \n\t", "x")


def test_bom_is_skipped() -> None:
    capture = read_json_array(b"\xef\xbb\xbf[{}]", "x")
    assert capture.frames[0].pos == Pos(1, 1, 4)


def test_deep_nesting_is_a_frame_error_not_a_crash() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    capture = read_json_array(b"[" + deep + b", 1]", "x")
    assert capture.frames[0].value is NOT_JSON
    assert capture.frames[0].error is not None
    assert "depth" in capture.frames[0].error
    assert capture.frames[1].value == 1
    assert capture.ended_cleanly


def test_large_strings_are_skipped_quickly() -> None:
    big = "x" * 20_000_000 + '\\"]'
    capture = read_json_array(orjson.dumps([{"text": big}, {"n": 2}]), "x")
    assert capture.frames[0].value["text"] == big
    assert capture.frames[1].value == {"n": 2}


def test_sniff() -> None:
    assert READER.sniff(PRETTY) > 0
    assert READER.sniff(b"\xef\xbb\xbf\n  [") > 0
    assert READER.sniff(b'{"a":1}\n') == 0
    assert READER.reject_reason(b'{"a":1}\n') == "does not start with '['"


def test_elements_across_mib_pieces_keep_their_values_and_places(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from stream_doctor.capture import Streamed, open_capture

    elements = [
        {"text": 'a "quoted" [bracket], {brace} \\ ' * (i % 7), "pad": "x" * (i * 37 % 5000), "n": i}
        for i in range(1200)
    ]
    data = orjson.dumps(elements, option=orjson.OPT_INDENT_2).replace(b"\n", b"\r\n")
    assert len(data) > 3 << 20  # several 1 MiB pieces, elements cut anywhere
    path = tmp_path / "big.json"
    path.write_bytes(data)
    opened = open_capture(str(path))
    assert isinstance(opened, Streamed)
    frames = list(opened.frames())
    assert [f.value for f in frames] == elements
    for frame in frames:
        assert data[frame.pos.offset :].startswith(frame.data)
        assert frame.pos.line == data.count(b"\n", 0, frame.pos.offset) + 1
    assert opened.capture.ended_cleanly and opened.capture.problems == []
