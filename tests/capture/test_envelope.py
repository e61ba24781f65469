"""The capture envelope: records to frames, bad records kept as errors, schema and code agree."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from jsonschema import Draft202012Validator

from stream_doctor.capture.base import NOT_JSON, CaptureError, Pos
from stream_doctor.capture.envelope import SCHEMA_ID, check_record
from stream_doctor.capture.jsonl import read_envelope

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_PATH = ROOT / "stream_doctor" / "schemas" / "capture-envelope-v1.schema.json"
DOCS = ROOT / "docs" / "envelope.md"


def lines(*records: Any) -> bytes:
    return b"".join(orjson.dumps(record) + b"\n" for record in records)


HEADER = {"sd": "header", "version": 1, "provider": "anthropic", "source": "curl -N", "note": "n"}
EVENT = {
    "sd": "event",
    "t": 0.012,
    "event": "content_block_delta",
    "data": {"type": "content_block_delta", "index": 1, "delta": {"partial_json": "{"}},
}
DONE = {"sd": "event", "t": 2, "raw": "[DONE]"}
REQUEST = {"sd": "request", "t": 0, "method": "POST", "url": "https://x", "body": {"stream": True}}
EXECUTE = {"sd": "execute", "t": 1.5, "call_id": "toolu_01", "name": "bash", "input": {"cmd": "ls"}}


def test_records_become_frames_and_the_header_does_not() -> None:
    data = lines(HEADER, REQUEST, EVENT, DONE, EXECUTE)
    capture = read_envelope(data, "run.jsonl")
    assert capture.header == HEADER
    assert capture.container == "envelope"
    assert [(f.pos.number, f.pos.line, f.kind) for f in capture.frames] == [
        (1, 2, "request"),
        (2, 3, "event"),
        (3, 4, "event"),
        (4, 5, "execute"),
    ]
    assert capture.frames[0].pos.offset == len(orjson.dumps(HEADER)) + 1
    request, event, done, execute = capture.frames
    assert request.value == REQUEST
    assert request.t == 0
    assert event.value == EVENT["data"]
    assert event.event == "content_block_delta"
    assert event.t == 0.012
    assert event.data == orjson.dumps(EVENT)  # the record as read: its line
    assert done.value is NOT_JSON
    assert (done.data, done.error, done.t) == (b"[DONE]", "not JSON", 2)
    assert execute.value == EXECUTE
    assert execute.t == 1.5
    assert capture.problems == []
    assert capture.ended_cleanly


def test_each_request_url_is_redacted_whether_it_repeats_the_last_or_not() -> None:
    # the reader keeps the last URL's redaction (a session's requests go to one URL): a repeated URL
    # gives the same redaction and line, a URL after it (another key, none) is redacted on its own
    keyed = "https://g.example/v1/m:streamGenerateContent?alt=sse&key=AIzaSyFIRST"
    urls = [keyed, keyed, keyed.replace("FIRST", "OTHER"), "https://x", keyed]
    data = lines(*({**REQUEST, "url": url} for url in urls))
    frames = read_envelope(data, "run.jsonl").frames
    redacted = "https://g.example/v1/m:streamGenerateContent?alt=sse&key=[redacted]"
    assert [f.value["url"] for f in frames] == [redacted, redacted, redacted, "https://x", redacted]
    assert all(b"AIzaSy" not in f.data for f in frames)
    assert frames[3].data == orjson.dumps({**REQUEST, "url": "https://x"})  # nothing to redact: the line as read


def test_header_is_optional() -> None:
    capture = read_envelope(lines(EVENT), "x")
    assert capture.header is None
    assert capture.frames[0].pos == Pos(1, 1, 0)


def test_unsupported_version_is_an_error_naming_the_line() -> None:
    with pytest.raises(CaptureError) as caught:
        read_envelope(b"\n" + lines({"sd": "header", "version": 2}, EVENT), "x")
    assert caught.value.line == 2
    assert "version 2" in caught.value.message


def test_a_header_anywhere_else_is_a_bad_record() -> None:
    capture = read_envelope(lines(EVENT, HEADER), "x")
    assert capture.header is None
    assert capture.frames[1].value is NOT_JSON
    assert capture.frames[1].error == "envelope: a header record must be the first line"


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"type": "message_start"}, 'envelope: no "sd" key saying what the record is'),
        ({"sd": "evnt", "data": {}}, "envelope: unknown record type"),
        ({"sd": "event", "t": 1}, 'envelope: event record: no "data"'),
        ({"sd": "event", "data": {}, "raw": "x"}, "envelope: event record: has both"),
        ({"sd": "event", "t": -1, "data": {}}, 'envelope: event record: "t" must be'),
        ({"sd": "execute", "call_id": "a", "name": "bash"}, 'envelope: execute record: no "input"'),
        ({"sd": "request", "body": "text"}, 'envelope: request record: "body" must be an object'),
        ({"sd": "header"}, 'envelope: header record: no "version"'),
        ([1, 2], "envelope: not a JSON object"),
    ],
)
def test_bad_records_are_kept_as_frame_errors(record: Any, message: str) -> None:
    capture = read_envelope(lines(record, EVENT), "x")
    bad = capture.frames[0]
    assert bad.value is NOT_JSON
    assert bad.kind == "event"  # so the replay reports it as a malformed frame
    assert bad.error is not None
    assert bad.error.startswith(message)
    assert bad.pos == Pos(1, 1, 0)
    assert capture.frames[1].value == EVENT["data"]


def test_lines_that_are_not_json() -> None:
    capture = read_envelope(lines(HEADER) + b'{"sd":"event","data":\n' + lines(EVENT), "x")
    assert capture.frames[0].value is NOT_JSON
    assert capture.frames[0].error is not None
    assert capture.frames[0].error.startswith("not JSON: ")
    assert capture.frames[1].pos.line == 3


def test_cut_last_line() -> None:
    capture = read_envelope(lines(HEADER, EVENT) + b'{"sd":"event","data":{"ty', "x")
    assert not capture.ended_cleanly
    assert [p.kind for p in capture.problems] == ["unterminated-event"]


# Records on which the hand validator and the JSON Schema must agree.
GOOD: list[Any] = [
    HEADER,
    {"sd": "header", "version": 1},
    {"sd": "header", "version": 7},  # well-formed; whether it is supported is the reader's call
    {"sd": "header", "version": 1.0},
    {"sd": "header", "version": 1, "provider": None, "extra": [1]},
    EVENT,
    DONE,
    {"sd": "event", "data": None},
    {"sd": "event", "data": "text"},
    {"sd": "event", "t": None, "event": None, "data": {}},
    {"sd": "event", "t": 0, "data": []},
    REQUEST,
    {"sd": "request", "body": {}},
    EXECUTE,
    {"sd": "execute", "input": "not an object, but what the app passed"},
    {"sd": "execute", "input": None, "call_id": None, "name": None},
]
BAD: list[Any] = [
    [],
    "event",
    None,
    {},
    {"type": "message_start"},
    {"sd": 1},
    {"sd": None, "data": {}},
    {"sd": "evnt", "data": {}},
    {"sd": "result", "output": "x"},
    {"sd": "header"},
    {"sd": "header", "version": "1"},
    {"sd": "header", "version": 1.5},
    {"sd": "header", "version": True},
    {"sd": "header", "version": 1, "provider": 3},
    {"sd": "header", "version": 1, "note": ["a"]},
    {"sd": "event"},
    {"sd": "event", "t": 1},
    {"sd": "event", "data": {}, "raw": "x"},
    {"sd": "event", "raw": 5},
    {"sd": "event", "raw": None},
    {"sd": "event", "t": -0.5, "data": {}},
    {"sd": "event", "t": "0.5", "data": {}},
    {"sd": "event", "t": True, "data": {}},
    {"sd": "event", "event": 5, "data": {}},
    {"sd": "request"},
    {"sd": "request", "body": []},
    {"sd": "request", "body": {}, "url": 1},
    {"sd": "request", "body": {}, "method": False},
    {"sd": "request", "body": {}, "t": -1},
    {"sd": "execute"},
    {"sd": "execute", "input": {}, "call_id": 12},
    {"sd": "execute", "input": {}, "name": {}},
    {"sd": "execute", "input": {}, "t": "soon"},
]


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] == SCHEMA_ID
    return Draft202012Validator(schema)


@pytest.mark.parametrize("record", GOOD, ids=lambda r: json.dumps(r)[:60])
def test_schema_and_validator_accept_the_same_records(validator: Draft202012Validator, record: Any) -> None:
    assert check_record(record) is None
    assert validator.is_valid(record), list(validator.iter_errors(record))


@pytest.mark.parametrize("record", BAD, ids=lambda r: json.dumps(r)[:60])
def test_schema_and_validator_reject_the_same_records(validator: Draft202012Validator, record: Any) -> None:
    assert check_record(record) is not None
    assert not validator.is_valid(record)


def test_every_example_in_the_docs_is_a_valid_record(validator: Draft202012Validator) -> None:
    blocks = re.findall(r"```json\n(.*?)```", DOCS.read_text(), re.DOTALL)
    records = [json.loads(line) for block in blocks for line in block.splitlines() if line.strip()]
    assert {record["sd"] for record in records} == {"header", "event", "request", "execute"}
    for record in records:
        assert check_record(record) is None, record
        assert validator.is_valid(record), record
    capture = read_envelope(lines(*records), "docs.jsonl")
    assert capture.header is not None
    assert all(f.error in (None, "not JSON") for f in capture.frames)


def test_replay_does_not_import_jsonschema() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from stream_doctor.capture import load; "
        "from stream_doctor.capture.jsonl import read_envelope; "
        'read_envelope(b\'{"sd":"event","data":{}}\\n\', \'x\'); '
        "print('jsonschema' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert result.stdout.strip() == "False"
