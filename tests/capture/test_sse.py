"""The SSE reader: WHATWG EventSource parsing, exact positions, and never a crash on bad bytes."""

from __future__ import annotations

import orjson
import pytest

from stream_doctor.capture.base import NOT_JSON, Capture, Frame, Pos
from stream_doctor.capture.problem_facts import CutBeforeData
from stream_doctor.capture.sse import READER, read_sse
from tests.conftest import CORPUS, NO_CORPUS

ANTHROPIC = (
    b"event: message_start\n"
    b'data: {"type":"message_start","message":{"id":"msg_1"}}\n'
    b"\n"
    b"event: content_block_delta\n"
    b'data: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"input_json_delta","partial_json":"{\\"a\\": 1"}}\n'
    b"\n"
    b"event: message_stop\n"
    b'data: {"type":"message_stop"}\n'
    b"\n"
)


def read(data: bytes) -> Capture:
    return READER.read(data, "capture.sse")


def both(data: bytes) -> Capture:
    """Read with the fast path and the line-by-line parser; they must agree on everything."""
    fast = read_sse(data, "capture.sse")
    slow = read_sse(data, "capture.sse", fast=False)
    assert summary(fast) == summary(slow)
    return fast


def summary(capture: Capture) -> object:
    frames = [(f.pos, f.data, repr(f.value), f.error, f.event, f.sse_id, f.kind) for f in capture.frames]
    return frames, capture.problems, capture.comments, capture.ended_cleanly


def kinds(capture: Capture) -> list[str]:
    return [problem.kind for problem in capture.problems]


def test_positions_number_line_and_offset() -> None:
    capture = both(ANTHROPIC)
    assert [f.pos for f in capture.frames] == [
        Pos(1, 1, 0),
        Pos(2, 4, ANTHROPIC.index(b"event: content_block_delta")),
        Pos(3, 7, ANTHROPIC.index(b"event: message_stop")),
    ]
    assert [f.event for f in capture.frames] == [
        "message_start",
        "content_block_delta",
        "message_stop",
    ]
    assert capture.frames[1].value["delta"]["partial_json"] == '{"a": 1'
    assert capture.frames[2].data == b'{"type":"message_stop"}'
    assert capture.ended_cleanly
    assert capture.problems == []
    assert (capture.container, capture.path, capture.size) == ("sse", "capture.sse", len(ANTHROPIC))


@pytest.mark.parametrize("line_end", [b"\r\n", b"\r"], ids=["crlf", "cr"])
def test_other_line_ends_give_the_same_frames_at_their_own_offsets(line_end: bytes) -> None:
    data = ANTHROPIC.replace(b"\n", line_end)
    capture = both(data)
    lf = read(ANTHROPIC)
    assert [(f.data, f.event, f.pos.line) for f in capture.frames] == [(f.data, f.event, f.pos.line) for f in lf.frames]
    for frame in capture.frames:
        assert data[frame.pos.offset :].startswith(b"event: " + str(frame.event).encode())


def test_mixed_line_ends_in_one_stream() -> None:
    data = b"event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\rdata: 3\n\n"
    capture = both(data)
    assert [(f.event, f.value, f.pos.line, f.pos.offset) for f in capture.frames] == [
        ("a", 1, 1, 0),
        ("b", 2, 4, data.index(b"event: b")),
        (None, 3, 7, data.index(b"data: 3")),
    ]


def test_leading_bom_is_skipped_and_offsets_stay_in_file_bytes() -> None:
    capture = both(b"\xef\xbb\xbf" + ANTHROPIC)
    assert capture.frames[0].pos == Pos(1, 1, 3)
    assert capture.frames[0].event == "message_start"
    assert capture.frames[1].pos.offset == ANTHROPIC.index(b"event: content_block_delta") + 3


def test_comments_are_counted_and_not_where_an_event_starts() -> None:
    data = b"".join(
        [
            b": OPENROUTER PROCESSING\n",
            b"\n",
            b": OPENROUTER PROCESSING\n",
            b"data: {}\n",
            b"\n",
            b"data: 1\n",
            b": in the middle\n",
            b"data: 2\n",
            b"\n",
        ]
    )
    capture = both(data)
    assert capture.comments == 3
    assert [(f.pos.line, f.data) for f in capture.frames] == [(4, b"{}"), (6, b"1\n2")]
    assert capture.frames[0].pos.offset == data.index(b"data: {}")


def test_several_data_lines_are_joined_with_newlines() -> None:
    capture = both(b'data: {"a":\ndata: \ndata: 1}\n\n')
    assert capture.frames[0].data == b'{"a":\n\n1}'
    assert capture.frames[0].value == {"a": 1}


@pytest.mark.parametrize(
    ("line", "data"),
    [
        (b"data:x", b"x"),
        (b"data: x", b"x"),
        (b"data:  x", b" x"),  # only one space is removed
        (b"data: ", b""),
        (b"data:", b""),
        (b"data", b""),  # no colon: the whole line is the field name
        (b"data: a: b", b"a: b"),
    ],
)
def test_one_optional_space_after_the_colon(line: bytes, data: bytes) -> None:
    capture = both(line + b"\n\n")
    assert [f.data for f in capture.frames] == [data]


def test_event_field_without_space_or_colon() -> None:
    capture = both(b"event:ping\ndata: 1\n\nevent\ndata: 2\n\n")
    assert [f.event for f in capture.frames] == ["ping", ""]


def test_id_and_retry_fields() -> None:
    capture = both(b"id: 7\nretry: 3000\ndata: 1\n\nid: a\x00b\ndata: 2\n\ndata: 3\n\n")
    assert [f.sse_id for f in capture.frames] == ["7", None, None]  # an id with NUL is ignored
    assert capture.problems == []


def test_unknown_fields_are_reported_once_each_at_their_first_position() -> None:
    data = b"data: 1\n\nfoo: x\ndata: 2\n\nfoo: y\nbar\ndata: 3\n\n"
    capture = both(data)
    assert [f.value for f in capture.frames] == [1, 2, 3]
    unknown = [p for p in capture.problems if p.kind == "unknown-sse-field"]
    assert [(p.pos, "'foo'" in p.message or "'bar'" in p.message) for p in unknown] == [
        (Pos(2, 3, data.index(b"foo: x")), True),
        (Pos(3, 7, data.index(b"bar")), True),
    ]
    # the event starts at its first field line, even an unknown one
    assert capture.frames[1].pos == Pos(2, 3, data.index(b"foo: x"))


def test_past_the_first_ten_unknown_field_names_the_rest_are_one_problem_with_counts() -> None:
    # issue 31: 500,000 distinct names in 4.4 MB were 500,002 findings (325 MB)
    names = [b"f%d" % number for number in range(2000)]
    data = b"data: 1\n\n" + b"".join(name + b": x\n" for name in names) + b"f12: again\ndata: 2\n\n"
    capture = both(data)
    assert [f.value for f in capture.frames] == [1, 2]
    unknown = [p for p in capture.problems if p.kind == "unknown-sse-field"]
    assert len(unknown) == 11
    assert [f"'f{n}'" in p.message for n, p in enumerate(unknown[:10])] == [True] * 10
    assert unknown[0].pos == Pos(2, 3, data.index(b"f0:"))
    more = unknown[10]
    assert more.pos == Pos(2, 13, data.index(b"f10:"))  # where the first name past the ten is
    assert more.message.startswith("1,991 more lines of unknown SSE fields, more than 1,000 other names")
    assert "'f10' (1), 'f11' (1), 'f12' (2), 'f13' (1), 'f14' (1), …" in more.message


def test_ten_unknown_field_names_are_each_reported_and_nothing_more() -> None:
    # the near miss: ten names, each on two lines, are ten problems and no summary
    data = b"".join(b"f%d: x\n" % (number % 10) for number in range(20)) + b"data: 1\n\n"
    assert READER.sniff(b"data: 1\n\n" + data) > 0
    capture = both(b"data: 1\n\n" + data)
    assert kinds(capture) == ["unknown-sse-field"] * 10


def test_blank_and_comment_lines_are_counted_not_kept() -> None:
    # issue 31: a run of blank lines cost 4.2 s per MiB (a call a block), comments a list entry each
    event = b'event: ping\ndata: {"type": "ping"}\n\n'
    for quiet in (b"\n" * 5000, b": keep-alive\n" * 3000, b": ping\n\n" * 3000, b"\r\n" * 100 + b":\r\n" * 100):
        data = event + quiet + event
        capture = both(data)
        assert [f.pos for f in capture.frames] == [Pos(1, 1, 0), Pos(2, 4 + quiet.count(b"\n"), len(event + quiet))]
        assert capture.comments == quiet.count(b":")
        assert capture.problems == []


def test_event_without_data_is_not_dispatched_but_noted() -> None:
    data = b"event: ping\n\ndata: 1\n\n"
    capture = both(data)
    assert [f.value for f in capture.frames] == [1]
    assert capture.frames[0].event is None  # the dropped block's name does not leak
    assert kinds(capture) == ["event-without-data"]
    assert capture.problems[0].pos == Pos(1, 1, 0)
    assert "ping" in capture.problems[0].message


def test_an_event_whose_data_never_arrived_is_a_cut_not_a_framing_problem() -> None:
    # the recording stopped after the event line: the block is open, not an event without data
    capture = both(b"data: 1\n\nevent: message_stop\n")
    assert [f.value for f in capture.frames] == [1]
    assert kinds(capture) == ["unterminated-event"]
    assert capture.problems[0].pos == Pos(2, 3, 9)
    assert capture.problems[0].facts == CutBeforeData(3, mid_line=False, comment=False)
    assert not capture.ended_cleanly


@pytest.mark.parametrize(
    "tail",
    [b"e", b"ev", b"event", b"event:", b"event: message_st", b"da", b"dat", b"i", b"id: 4", b"retry: 10", b"x"],
)
def test_a_cut_line_that_is_not_data_is_the_cut_never_a_field(tail: bytes) -> None:
    # `head -c N capture.sse` stops wherever it stops: the start of a line is not an unknown field
    capture = both(ANTHROPIC + tail)
    assert [f.pos.number for f in capture.frames] == [1, 2, 3]
    assert kinds(capture) == ["unterminated-event"]
    assert capture.problems[0].pos == Pos(4, 10, len(ANTHROPIC))
    assert capture.problems[0].facts == CutBeforeData(10, True, False, tail.decode(), len(tail))
    assert not capture.ended_cleanly


def test_a_cut_line_after_the_event_line_loses_the_event() -> None:
    capture = both(ANTHROPIC + b"event: message_stop\nda")
    assert len(capture.frames) == 3
    assert [(p.kind, p.pos, p.facts) for p in capture.problems] == [
        ("unterminated-event", Pos(4, 10, len(ANTHROPIC)), CutBeforeData(11, True, False, "da", 2))
    ]


def test_a_cut_comment_between_events_is_a_cut_with_no_event_open() -> None:
    capture = both(ANTHROPIC + b": keep-al")
    assert [(p.kind, p.facts) for p in capture.problems] == [
        ("unterminated-event", CutBeforeData(10, True, True, ": keep-al", 9))
    ]
    assert capture.comments == 0 and not capture.ended_cleanly


def test_a_capture_that_ends_between_events_is_not_cut() -> None:
    # a whole comment line or a final blank line: the capture ends between events, cleanly
    for tail in (b": bye\n", b"\n", b": bye\r\n"):
        capture = both(ANTHROPIC + tail)
        assert capture.ended_cleanly and capture.problems == [], tail


def test_a_character_cut_in_two_is_the_cut_not_bytes_that_are_not_utf8() -> None:
    cut = 'data: {"text":"caf\u00e9'.encode()[:-1]
    capture = both(ANTHROPIC + cut)
    assert kinds(capture) == ["unterminated-event"]
    assert capture.frames[-1].value is NOT_JSON
    bad = both(ANTHROPIC + b'data: {"text":"caf\xff"}')  # a byte no UTF-8 has, then the cut
    assert kinds(bad) == ["unterminated-event", "not-utf8"]


@pytest.mark.parametrize("tail", [b"", b"\n"], ids=["mid-line", "no-blank-line"])
def test_unterminated_last_event_is_dispatched_and_reported(tail: bytes) -> None:
    data = ANTHROPIC + b'event: content_block_delta\ndata: {"type":"content_block_delta"' + tail
    capture = both(data)
    last = capture.frames[-1]
    assert last.pos == Pos(4, 10, len(ANTHROPIC))
    assert last.value is NOT_JSON
    assert last.error == "not JSON: unexpected end of data at column 30"
    assert not capture.ended_cleanly
    assert kinds(capture) == ["unterminated-event"]
    assert capture.problems[0].pos == last.pos
    assert "stream was cut" in capture.problems[0].message


def test_a_whole_last_event_without_blank_line_still_counts_as_cut() -> None:
    capture = both(b"data: 1\n\ndata: 2\n")
    assert [f.value for f in capture.frames] == [1, 2]
    assert not capture.ended_cleanly


def test_trailing_blank_lines_and_comments_end_cleanly() -> None:
    capture = both(ANTHROPIC + b"\n\n: bye\n")
    assert capture.ended_cleanly
    assert capture.problems == []


def test_done_and_other_non_json_payloads() -> None:
    capture = both(b'data: {"a":1}\n\ndata: [DONE]\n\ndata: :ping\n\ndata:\n\n')
    assert [f.value for f in capture.frames][0] == {"a": 1}
    assert all(f.value is NOT_JSON for f in capture.frames[1:])
    assert [f.data for f in capture.frames[1:]] == [b"[DONE]", b":ping", b""]
    assert capture.frames[1].error is not None
    assert capture.frames[1].error.startswith("not JSON: ")
    assert capture.frames[3].error == "not JSON: empty"


def test_invalid_utf8_in_data_is_a_frame_error_and_a_problem() -> None:
    data = b'data: {"a":1}\n\ndata: {"text":"caf\xe9"}\n\ndata: 3\n\n'
    capture = both(data)
    frame = capture.frames[1]
    assert frame.value is NOT_JSON
    assert frame.data == b'{"text":"caf\xe9"}'
    assert frame.error == "not JSON: not valid UTF-8"
    assert [(p.kind, p.pos) for p in capture.problems] == [("not-utf8", frame.pos)]
    assert capture.frames[2].value == 3


def test_invalid_utf8_in_event_name_is_replaced() -> None:
    capture = both(b"event: bad\xff\ndata: 1\n\n")
    assert capture.frames[0].event == "bad\ufffd"
    assert capture.frames[0].value == 1
    assert kinds(capture) == ["not-utf8"]


def test_deep_nesting_is_a_frame_error_not_a_crash() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    capture = both(b"data: " + deep + b"\n\ndata: 1\n\n")
    assert capture.frames[0].value is NOT_JSON
    assert capture.frames[0].error is not None
    assert "depth" in capture.frames[0].error
    assert capture.frames[1].value == 1


def test_a_50_mb_data_line() -> None:
    payload = b'{"partial_json":"' + b"x" * 50_000_000 + b'"}'
    capture = read(b"event: big\ndata: " + payload + b"\n\ndata: 1\n\n")
    assert len(capture.frames[0].value["partial_json"]) == 50_000_000
    assert capture.frames[1].pos.offset == len(b"event: big\ndata: ") + len(payload) + 2
    cut = read(b"data: " + payload[:-10])
    assert cut.frames[0].value is NOT_JSON
    assert not cut.ended_cleanly


def test_binary_garbage_does_not_crash() -> None:
    garbage = bytes(range(256)) * 64
    capture = both(garbage)
    assert isinstance(capture.frames, list)
    assert all(isinstance(f, Frame) for f in capture.frames)


def test_empty_input_has_no_frames() -> None:
    capture = both(b"")
    assert capture.frames == []
    assert capture.ended_cleanly


@pytest.mark.parametrize(
    "data",
    [
        ANTHROPIC,
        b"data: 1\n\n\n\n\ndata: 2\n\n",
        b"event: a\nid: 1\ndata: 1\n\nid: 2\nevent: b\ndata: 2\n\n",
        b": c\n\nevent: x\ndata: 1\ndata: 2\n\nevent: y\n\nevent: z\nevent: w\ndata: 3\n\n",
        b"data: 1\n\nretry: 5\n\ndata:2\n\ndata\n\nevent:\ndata: 3\n\ndata: 4",
        b"\xef\xbb\xbfevent: a\ndata: 1\n\nunknown: 1\nevent: b\ndata: [DONE]\n\nevent: c\n",
    ],
)
def test_fast_path_and_line_parser_agree(data: bytes) -> None:
    both(data)
    both(data.replace(b"\n", b"\r\n"))


def test_sniff() -> None:
    assert READER.sniff(ANTHROPIC) > 0
    assert READER.sniff(b": keep-alive\n\ndata: 1\n\n") > 0
    assert READER.sniff(b"\xef\xbb\xbfdata: 1\n\n") > 0
    assert READER.sniff(b'{"type":"message_start"}\n') == 0
    assert READER.sniff(b"[{}]") == 0
    assert READER.sniff(b"hello world\n") == 0
    assert "line 1" in READER.reject_reason(b"hello world\n")


def test_frames_match_a_reference_line_split() -> None:
    """A synthetic stream of tool-argument fragments decodes to exactly what was written."""
    fragments = ['{"path": "/tmp/x', '", "content": "', "a" * 30, '\\n"}']
    data = b"".join(
        b"event: content_block_delta\ndata: "
        + orjson.dumps({"type": "content_block_delta", "delta": {"partial_json": fragment}})
        + b"\n\n"
        for fragment in fragments
    )
    capture = read(data)
    assert [f.value["delta"]["partial_json"] for f in capture.frames] == fragments
    assert [f.pos.line for f in capture.frames] == [1, 4, 7, 10]


@pytest.mark.skipif(not CORPUS.is_dir(), reason=NO_CORPUS)
def test_real_captures_from_the_corpus() -> None:
    files = [
        CORPUS / "anthropic-sdk-python/tests/fixtures/fable-fallback/stream-a-toolrefusal.sse",
        CORPUS / "anthropic-sdk-python/tests/lib/streaming/fixtures/tool_use_response.txt",
        *sorted((CORPUS / "openai-python/.inline-snapshot/external").glob("*.bin")),
    ]
    for path in files:
        if not path.exists():
            continue
        capture = READER.read(path.read_bytes(), str(path))
        assert capture.frames, path
        # Some SDK fixtures were saved without the final blank line: reported, as for any cut.
        assert {p.kind for p in capture.problems} <= {"unterminated-event"}, path
        for frame in capture.frames:
            assert frame.value is not NOT_JSON or frame.data == b"[DONE]", (path, frame.pos)


def test_data_lines_without_blank_lines_are_read_one_a_line_and_reported() -> None:
    """Chunks written with no blank line between them (openai-php's fixtures, some relays): by the SSE rules
    one event whose joined data does not parse; line-based clients read one event a line, and so do we."""
    data = b'data: {"a":1}\ndata: {"b":2}\ndata: [DONE]\n\n'
    capture = both(data)
    assert [(f.pos.line, f.data) for f in capture.frames] == [(1, b'{"a":1}'), (2, b'{"b":2}'), (3, b"[DONE]")]
    assert [p.kind for p in capture.problems] == ["data-lines-not-separated"]
    # each frame says it is a line of one event, which the client profiles read as the libraries do
    assert [f.joined for f in capture.frames] == [(1, 3), (2, 3), (3, 3)]
    assert both(b'data: {"a":1}\n\ndata: {"b":2}\n\n').frames[0].joined is None  # the near miss: two events


def test_one_json_document_across_data_lines_stays_one_event() -> None:
    """The near miss: data lines that only together are JSON are one event, as the spec says."""
    data = b'data: {"a":\ndata: 1}\n\n'
    capture = both(data)
    assert [f.data for f in capture.frames] == [b'{"a":\n1}']
    assert capture.frames[0].value == {"a": 1} and capture.frames[0].joined is None
    assert not capture.problems


def test_a_first_line_with_a_space_before_its_field_name_is_an_ignored_field() -> None:
    """` data: {…}` is a field named " data" by the EventSource rules (one OpenRouter recording starts so):
    ignored and reported, and every following event reads; the capture is SSE, not unreadable."""
    data = b' data: {"a":1}\n\ndata: {"b":2}\n\n'
    assert READER.sniff(data) > 0
    capture = both(data)
    assert [f.data for f in capture.frames] == [b'{"b":2}']
    assert [p.kind for p in capture.problems] == ["unknown-sse-field"]


def test_any_few_unknown_lines_before_the_first_field_are_ignored_fields() -> None:
    """Whatever the first lines hold (` hello: 1`, a stray ``hello``), by the EventSource rules each is a
    field of an unknown name, ignored: the body is SSE, sniffed lower than a clean one, and each stray
    line reported; JSON, markup, or more lines than a few before any field still say another format."""
    for stray in (b" hello: 1", b"hello", b"\xef\xbb\xbf\xef\xbb\xbfdata: x", b"HTTP/1.1 200 OK\nx: y"):
        data = stray + b'\n\ndata: {"b":2}\n\n'
        assert 0 < READER.sniff(data) < READER.sniff(b'data: {"b":2}\n\n'), stray
        capture = both(data)
        assert [f.data for f in capture.frames] == [b'{"b":2}']
        assert set(kinds(capture)) == {"unknown-sse-field"}
    for other in (b'{"a": 1}\ndata: x\n\n', b"<html>\ndata: x\n\n", b"a\nb\nc\nd\ne\ndata: x\n\n"):
        assert READER.sniff(other) == 0, other


def test_unknown_lines_before_the_first_field_are_ignored_fields_with_cr_line_ends() -> None:
    """A lone CR ends an event stream's line: unknown fields before the first known one, written with CR
    line ends, are ignored fields as they are with LF (the differential tests' generated framings found a
    capture refused as no format at all); JSON written with CR line ends is still another format."""
    for eol in (b"\r", b"\r\n", b"\n"):
        data = b"x-flag" + eol + b"x-served-by: edge" + eol + b'data: {"b":2}' + eol + eol
        assert 0 < READER.sniff(data) < READER.sniff(b'data: {"b":2}\n\n'), eol
        capture = both(data)
        assert [f.data for f in capture.frames] == [b'{"b":2}']
        assert set(kinds(capture)) == {"unknown-sse-field"}
    assert READER.sniff(b'{"a": 1}\rdata: x\r\r') == 0


def test_text_that_is_not_sse_is_still_refused() -> None:
    assert READER.sniff(b"hello world\nsecond line\n") == 0


def test_a_cut_after_data_lines_without_blank_lines_reads_each_whole_line() -> None:
    # the data lines before the cut are read one a line (d96ba03); the cut start of the next is not one
    lines = b'data: {"a":1}\ndata: {"b":2}\n'
    for tail in (b"data", b"dat", b"e"):
        capture = both(lines + tail)
        assert [f.value for f in capture.frames] == [{"a": 1}, {"b": 2}]
        assert kinds(capture) == ["data-lines-not-separated", "unterminated-event"]


def test_a_last_block_of_unknown_fields_alone_is_no_cut() -> None:
    # a JSON error body written without data: prefixes: every line an unknown field, no event begun
    capture = both(ANTHROPIC + b'{\n  "error": {\n    "code": 499\n  }\n}\n')
    assert capture.ended_cleanly
    # read as google-genai reads it (the lines joined until the braces balance), and reported once
    assert kinds(capture) == ["unprefixed-json"]
    assert capture.frames[-1].value == {"error": {"code": 499}}


def test_unprefixed_lines_that_are_not_one_json_object_stay_unknown_fields() -> None:
    capture = both(ANTHROPIC + b"{\n  upstream reset\n}\n")
    assert capture.ended_cleanly
    assert kinds(capture) == ["unknown-sse-field"] * 3
    assert len(capture.frames) == len(both(ANTHROPIC).frames)
