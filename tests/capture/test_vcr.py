"""VCR cassettes: vcrpy / pytest-recording, pydantic-ai's, go-vcr and Ruby VCR layouts; safe loading; positions."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest
import yaml

from stream_doctor.capture import load
from stream_doctor.capture.base import CaptureError
from stream_doctor.capture.vcr import READER
from tests.conftest import fixture_files

SSE = (
    'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","model":"claude"}}\n\n'
    'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)
URL = "https://api.anthropic.com/v1/messages"
BODY = {"model": "claude", "stream": True, "messages": [{"role": "user", "content": "hi"}]}


def vcrpy(response: object, headers: dict | None = None, body: object = None) -> dict:
    return {
        "interactions": [
            {
                "request": {
                    "body": json.dumps(BODY) if body is None else body,
                    "headers": {"x-api-key": ["sk-ant-secret"], "content-type": ["application/json"]},
                    "method": "POST",
                    "uri": URL,
                },
                "response": {
                    "body": response,
                    "headers": headers or {"Content-Type": ["text/event-stream; charset=utf-8"]},
                    "status": {"code": 200, "message": "OK"},
                },
            }
        ],
        "version": 1,
    }


def write(tmp_path: Path, text: str | bytes, name: str = "cassette.yaml") -> str:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return str(path)


def test_vcrpy_cassette_becomes_a_request_then_the_stream(tmp_path: Path) -> None:
    capture = load(write(tmp_path, yaml.safe_dump(vcrpy({"string": SSE}))))
    assert capture.container == "vcr"
    request, start, stop = capture.frames
    assert request.kind == "request" and request.interaction == 1 and request.pos.number == 0
    assert request.value["body"] == BODY and request.value["url"] == URL
    assert request.value["headers"]["x-api-key"] == "[redacted]"
    assert [start.event, stop.event] == ["message_start", "message_stop"]
    assert [start.pos.number, stop.pos.number] == [1, 2] and start.interaction == stop.interaction == 1
    assert capture.exchanges[0].body_container == "sse" and capture.exchanges[0].status == 200


def test_double_quoted_body_frames_point_at_their_own_lines(tmp_path: Path) -> None:
    text = yaml.safe_dump(vcrpy({"string": SSE}), width=60)
    capture = load(write(tmp_path, text))
    lines = text.splitlines()
    for frame in capture.frames[1:]:
        assert "event: " + frame.event in lines[frame.pos.line - 1], (frame.event, lines[frame.pos.line - 1])


def test_literal_block_body_lines_are_the_file_lines(tmp_path: Path) -> None:
    class Literal(yaml.SafeDumper):
        pass

    Literal.add_representer(
        str, lambda d, s: d.represent_scalar("tag:yaml.org,2002:str", s, style="|" if "\n" in s else None)
    )
    text = yaml.dump(vcrpy({"string": SSE}), Dumper=Literal)
    data = text.encode()
    capture = load(write(tmp_path, text))
    for frame in capture.frames[1:]:
        assert data[frame.pos.offset :].startswith(f"event: {frame.event}".encode())
        assert text.splitlines()[frame.pos.line - 1].strip() == f"event: {frame.event}"


def test_binary_gzip_body_is_decompressed(tmp_path: Path) -> None:
    headers = {"Content-Type": ["text/event-stream"], "Content-Encoding": ["gzip"]}
    text = yaml.safe_dump(vcrpy({"string": gzip.compress(SSE.encode())}, headers))
    assert "!!binary" in text
    capture = load(write(tmp_path, text))
    assert [f.event for f in capture.frames[1:]] == ["message_start", "message_stop"]
    assert capture.frames[1].pos.line == capture.frames[2].pos.line  # base64 has no lines of its own


def test_ruby_vcr_base64_body_and_string_request_body(tmp_path: Path) -> None:
    document = {
        "http_interactions": [
            {
                "request": {"method": "post", "uri": URL, "body": {"encoding": "UTF-8", "string": json.dumps(BODY)}},
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"Content-Type": ["text/event-stream"]},
                    "body": {"encoding": "ASCII-8BIT", "base64_string": base64.b64encode(SSE.encode()).decode()},
                },
            }
        ],
        "recorded_with": "VCR 6.3.1",
    }
    capture = load(write(tmp_path, "---\n" + yaml.safe_dump(document)))
    assert capture.frames[0].value["body"] == BODY
    assert len(capture.frames) == 3


def test_go_vcr_cassette(tmp_path: Path) -> None:
    document = {
        "version": 2,
        "interactions": [
            {
                "id": 0,
                "request": {
                    "body": json.dumps(BODY),
                    "headers": {"Authorization": ["Bearer x"]},
                    "url": URL,
                    "method": "POST",
                },
                "response": {
                    "body": SSE,
                    "headers": {"Content-Type": ["text/event-stream"]},
                    "status": "200 OK",
                    "code": 200,
                },
            }
        ],
    }
    capture = load(write(tmp_path, "---\n" + yaml.safe_dump(document, sort_keys=False)))
    assert capture.container == "vcr"
    assert capture.frames[0].value["headers"] == {"authorization": "[redacted]"}
    assert capture.exchanges[0].status == 200 and len(capture.frames) == 3


def test_pydantic_parsed_body_keeps_positions_of_its_parts(tmp_path: Path) -> None:
    document = vcrpy({"string": SSE})
    request = document["interactions"][0]["request"]
    del request["body"]
    request["parsed_body"] = BODY
    text = yaml.safe_dump(document)
    capture = load(write(tmp_path, text))
    assert capture.frames[0].value["body"] == BODY
    place = capture.exchanges[0].request_places["messages[0]"]
    assert "content: hi" in text.splitlines()[place.line - 1]


def test_python2_string_tags_are_read_as_strings_and_nothing_else_is_built(tmp_path: Path) -> None:
    text = yaml.safe_dump(vcrpy({"string": SSE})).replace("method: POST", "method: !!python/unicode 'POST'")
    assert load(write(tmp_path, text)).frames[0].value["method"] == "POST"
    hostile = yaml.safe_dump(vcrpy({"string": SSE})).replace(
        "method: POST", "method: !!python/object/apply:os.system ['true']"
    )
    with pytest.raises(CaptureError, match="not a readable cassette"):
        load(write(tmp_path, hostile, "hostile.yaml"))


def test_interactions_that_are_not_llm_calls_are_skipped_and_counted(tmp_path: Path) -> None:
    document = vcrpy({"string": SSE})
    token = {
        "request": {
            "body": "grant_type=client_credentials",
            "headers": {},
            "method": "GET",
            "uri": "https://oauth2.example.com/token",
        },
        "response": {
            "body": {"string": '{"access_token": "ya29.secret"}'},
            "headers": {},
            "status": {"code": 200, "message": "OK"},
        },
    }
    document["interactions"].insert(0, token)
    capture = load(write(tmp_path, yaml.safe_dump(document)))
    assert [e.skipped is not None for e in capture.exchanges] == [True, False]
    assert {f.interaction for f in capture.frames} == {2}


def test_a_rejected_request_has_no_stream(tmp_path: Path) -> None:
    error = json.dumps({"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}})
    capture = load(write(tmp_path, yaml.safe_dump(vcrpy({"string": error}, {"Content-Type": ["application/json"]}))))
    assert [f.kind for f in capture.frames] == ["request"]
    assert capture.exchanges[0].body_container is None


def test_sniff_and_errors(tmp_path: Path) -> None:
    assert READER.sniff(b"interactions:\n- request:\n") == 95
    assert READER.sniff(b"---\nversion: 2\ninteractions:\n    - id: 0\n") == 95
    assert READER.sniff(b'{"interactions": []}') == 95
    # opencode's recorder: a version and a flat metadata object before the interactions
    assert (
        READER.sniff(b'{\n  "version": 1,\n  "metadata": {"name": "x", "tags": ["tool"]},\n  "interactions": [') == 95
    )
    assert READER.sniff(b'{"version":1,"interactions":[') == 95
    assert READER.sniff(b'{"version": 1, "entries": []}') == 0  # near miss: no interactions after the version
    assert READER.sniff(b'{"version": 1, "metadata": {"a": {"b": 1}}, "interactions": []}') == 95
    assert READER.sniff(b'{"metadata": {"a": {"b": {"c": 1}}}, "interactions": []}') == 0  # deeper is not sniffed
    assert READER.sniff(b"event: ping\n") == 0
    with pytest.raises(CaptureError) as error:
        load(write(tmp_path, "interactions:\n- request: [unclosed\n"))
    assert error.value.line is not None
    with pytest.raises(CaptureError, match="is not a list"):
        load(write(tmp_path, "interactions: 3\n", "three.yaml"))


def test_aliases_that_expand_without_bound_are_refused(tmp_path: Path) -> None:
    anchors = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    anchors += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 9)]
    text = "interactions:\n- request:\n    method: POST\n    uri: https://x.example/v1/messages\n    laughs:\n"
    text += "".join(f"      {line}\n" for line in anchors) + "    body: *a8\n  response: {}\n"
    with pytest.raises(CaptureError, match="aliases expand"):
        load(write(tmp_path, text))


def test_vcrpy_python_tags_are_read_as_plain_data(tmp_path: Path) -> None:
    # What vcrpy's default serializer (yaml.dump with the unsafe Dumper) writes for bytes, tuples and
    # header containers; each is read as the data it holds, nothing is imported or called.
    from collections import OrderedDict

    document = vcrpy({"string": SSE.encode()})
    interaction = document["interactions"][0]
    interaction["request"]["headers"] = OrderedDict([("content-type", ("application/json",)), ("x-api-key", "k")])
    interaction["response"]["headers"] = OrderedDict([("Content-Type", ("text/event-stream",))])
    text = yaml.dump(document, Dumper=yaml.Dumper)
    assert "!!python/object/apply:collections.OrderedDict" in text and "!!python/tuple" in text
    assert "!!binary" in text
    capture = load(write(tmp_path, text))
    request, start, stop = capture.frames
    assert request.value["headers"] == {"content-type": "application/json", "x-api-key": "[redacted]"}
    assert [start.event, stop.event] == ["message_start", "message_stop"]


def test_multidict_istr_header_names_are_read_as_text(tmp_path: Path) -> None:
    # aiohttp's header names are multidict's istr (a str subclass): vcrpy's dumper writes each as a complex key
    # ``? !!python/object/apply:multidict._multidict.istr [name]``; the name is read as text, nothing is built
    multidict = pytest.importorskip("multidict")
    document = vcrpy({"string": SSE})
    interaction = document["interactions"][0]
    interaction["request"]["headers"] = {
        multidict.istr("Content-Type"): ["application/json"],
        multidict.istr("X-Api-Key"): ["k"],
    }
    interaction["response"]["headers"] = {multidict.istr("Content-Type"): ["text/event-stream"]}
    text = yaml.dump(document, Dumper=yaml.Dumper)
    assert "? !!python/object/apply:multidict._multidict.istr\n" in text
    capture = load(write(tmp_path, text))
    request, start, stop = capture.frames
    assert request.value["headers"] == {"content-type": "application/json", "x-api-key": "[redacted]"}
    assert [start.event, stop.event] == ["message_start", "message_stop"]


@pytest.mark.parametrize(
    "tag",
    [
        "!!python/object/apply:multidict._multidict.istr [[Content-Type]]",  # not one plain name
        "!!python/object/apply:multidict._multidict.istr []",
        "!!python/object/apply:multidict._multidict.istr [!!python/object/apply:os.system [true]]",
        "!!python/object/apply:multidict._multidict.CIMultiDictProxy.istr [Content-Type]",
    ],
)
def test_an_istr_tag_that_holds_anything_but_one_name_is_refused(tmp_path: Path, tag: str) -> None:
    text = yaml.safe_dump(vcrpy({"string": SSE})).replace("method: POST", f"method: {tag}")
    with pytest.raises(CaptureError, match="not a readable cassette: unknown YAML tag"):
        load(write(tmp_path, text))


def test_an_unknown_python_tag_is_an_error_naming_its_line(tmp_path: Path) -> None:
    text = yaml.safe_dump(vcrpy({"string": SSE})).replace(
        "method: POST", "method: !!python/object/apply:subprocess.check_output [[touch, pwned]]"
    )
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "subprocess" in row)
    with pytest.raises(CaptureError) as error:
        load(write(tmp_path, text))
    assert error.value.message == (
        "not a readable cassette: unknown YAML tag '!!python/object/apply:subprocess.check_output' "
        "(cassettes are read as plain data only)"
    )
    assert error.value.line == line
    assert not (tmp_path / "pwned").exists()


def test_langchain_standard_test_cassette(tmp_path: Path) -> None:
    # langchain-tests' serializer: yaml.safe_dump({"requests": [...], "responses": [...]}), gzip-compressed.
    request = {"method": "POST", "uri": URL, "body": json.dumps(BODY), "headers": {"x-api-key": ["sk-ant-secret"]}}
    response = {
        "status": {"code": 200, "message": "OK"},
        "headers": {"Content-Type": ["text/event-stream"]},
        "body": {"string": SSE},
    }
    text = yaml.safe_dump({"requests": [request, dict(request)], "responses": [response, dict(response)]})
    assert READER.sniff(text.encode()) > 0
    capture = load(write(tmp_path, gzip.compress(text.encode()), "test_stream.yaml.gz"))
    assert (capture.container, capture.compressed) == ("vcr", "gzip")
    assert [e.number for e in capture.exchanges] == [1, 2]
    requests = [f for f in capture.frames if f.kind == "request"]
    assert [f.value["body"] for f in requests] == [BODY, BODY]
    assert requests[0].value["headers"]["x-api-key"] == "[redacted]"
    second = [n for n, row in enumerate(text.splitlines(), 1) if row.startswith("- body:")][1]
    assert requests[1].pos.line == second
    assert [f.event for f in capture.frames if f.kind == "event"] == ["message_start", "message_stop"] * 2


def test_nesting_is_refused_before_the_composer_sees_it(tmp_path: Path) -> None:
    depth = 5000  # libyaml's composer recursed and crashed the process at 50,000
    with pytest.raises(CaptureError, match="nests deeper than 256 levels") as error:
        load(write(tmp_path, "interactions:\n- request: " + "[" * depth + "]" * depth + "\n"))
    assert error.value.line == 2
    nested = "interactions:\n- request: " + "[" * 200 + "]" * 200 + "\n"  # deep but sane: read
    assert load(write(tmp_path, nested, "sane.yaml")).exchanges[0].skipped is not None


def test_one_long_aliased_string_is_bounded_in_bytes(tmp_path: Path) -> None:
    from stream_doctor.capture import limits

    long = "x" * 100_000
    rows = "".join("      - *a\n" for _ in range(100))
    text = f"interactions:\n- request:\n    method: POST\n    uri: {URL}\n    parsed_body:\n      model: &a {long}\n"
    text += f"      messages:\n{rows}  response: {{}}\n"
    path = write(tmp_path, text)
    with pytest.raises(CaptureError, match="aliases expand it to more than") as error:
        load(path, limits=limits.Limits(max_bytes=5_000_000))
    assert error.value.line is not None
    assert load(path).exchanges  # 10 MB once expanded: within the default room


def _whole(data: bytes) -> tuple[object, ...]:
    from stream_doctor.capture.http_frames import Exchanges
    from stream_doctor.capture.vcr import _read_whole

    collected = Exchanges("x")
    for _ in _read_whole(data, collected):
        pass
    return _summary(collected.capture("vcr", len(data)))


def _summary(capture) -> tuple[object, ...]:  # type: ignore[no-untyped-def]
    from dataclasses import astuple

    return (
        [(f.pos, f.data, repr(f.value), f.kind, f.interaction) for f in capture.frames],
        [(p.kind, p.message, p.pos, p.interaction) for p in capture.problems],
        [repr(astuple(e)) for e in capture.exchanges],
    )


FIXTURE_CASSETTES = fixture_files("conversations", suffixes=(".yaml",))


@pytest.mark.parametrize("path", FIXTURE_CASSETTES, ids=lambda p: p.name)
def test_each_interaction_loaded_alone_gives_what_the_whole_document_gives(path: Path) -> None:
    from stream_doctor.capture.vcr import READER
    from stream_doctor.capture.yaml_safe import prescan

    data = path.read_bytes()
    if path.name != "gemini_thought_signature_dropped.yaml":  # its headers are an alias to the first interaction's
        assert prescan(data, split=True)  # the usual shape is cut into its interactions
    assert _summary(READER.read(data, "x")) == _whole(data)


def test_an_alias_within_one_interaction_is_loaded_alone() -> None:
    from stream_doctor.capture.vcr import READER
    from stream_doctor.capture.yaml_safe import prescan

    data = TRICKY.replace(b"    method: POST\n", b"    method: &m POST\n    again: *m\n")
    assert prescan(data, split=True) is not None
    assert _summary(READER.read(data, "x")) == _whole(data)


TRICKY = b"""interactions:
- request:
    body: "a quoted body whose next line
- looks like an item, and a [flow] {thing}"
    method: POST
    uri: https://api.anthropic.com/v1/messages
  response:
    body:
      string: 'event: message_stop

        data: {"type":"message_stop"}

'
    status: {code: 200, message: OK}
-   request: {method: GET, uri: "https://example.com/"}
    response: {status: {code: 200}}
version: 1
"""


def test_item_boundaries_come_from_the_yaml_events_not_the_dashes() -> None:
    from stream_doctor.capture.vcr import READER
    from stream_doctor.capture.yaml_safe import prescan

    spans = prescan(TRICKY, split=True)
    assert spans is not None and [line for line, _, _ in spans] == [1, 14]
    assert _summary(READER.read(TRICKY, "x")) == _whole(TRICKY)
    capture = READER.read(TRICKY, "x")
    assert [e.method for e in capture.exchanges] == ["POST", "GET"]


@pytest.mark.parametrize(
    "data",
    [
        TRICKY.replace(
            b"uri: https://api.anthropic.com/v1/messages", b"uri: &u https://api.anthropic.com/v1/messages"
        ).replace(b'uri: "https://example.com/"', b"uri: *u"),  # an alias across items
        b"%YAML 1.1\n---\n" + TRICKY,  # a directive
        TRICKY.replace(b"\n", b"\r\n"),  # line ends libyaml counts differently
        json.dumps({"interactions": [{"request": {"method": "GET", "uri": "https://example.com/"}}]}).encode(),
        b"interactions:\n-\n  request: {method: GET, uri: 'https://example.com/'}\n",  # the item on the line after its dash
    ],
    ids=["alias", "directive", "crlf", "flow", "dash-alone"],
)
def test_shapes_the_splitter_cannot_prove_are_loaded_whole(data: bytes) -> None:
    from stream_doctor.capture.vcr import READER
    from stream_doctor.capture.yaml_safe import prescan

    assert prescan(data, split=True) is None
    assert _summary(READER.read(data, "x")) == _whole(data)


def test_ruby_vcr_binary_bodies_are_read_and_other_ruby_tags_refused(tmp_path: Path) -> None:
    """Psych writes every body that is not UTF-8 text as ``!binary`` (base64): the common form of Ruby's
    cassettes. A Ruby object tag builds nothing: a one-line refusal naming the tag."""

    capture = load("fixtures/conversations/anthropic_ruby_vcr_binary.yaml")
    assert [f.value.get("type") for f in capture.frames if f.kind == "event"][:2] == [
        "message_start",
        "content_block_start",
    ]
    ruby = tmp_path / "ruby.yml"
    ruby.write_text(
        Path("fixtures/conversations/anthropic_ruby_vcr_binary.yaml")
        .read_text()
        .replace("string: !binary |-", "string: !ruby/object:Net::HTTPOK |-", 1)
    )
    with pytest.raises(CaptureError) as raised:
        load(str(ruby))
    assert "!ruby/object:Net::HTTPOK" in raised.value.message


def _long_binary_cassette(prefix: bytes = b"") -> bytes:
    """A vcrpy cassette whose response body is a ``!!binary`` block of 1.5 MiB (over ``ELIDE_AT``)."""
    text = base64.encodebytes(b'event: ping\ndata: {"type": "ping"}\n\n' * 30_000).replace(b"\n", b"\n        ")
    return (
        b"interactions:\n- request:\n    body: null\n    headers: {}\n    method: POST\n"
        b"    uri: https://api.anthropic.com/v1/messages\n  response:\n    body:\n"
        + prefix
        + b"      string: !!binary |\n        "
        + text.rstrip(b" ")
        + b"    headers:\n      Content-Type:\n      - text/event-stream\n    status:\n      code: 200\n"
    )


@pytest.mark.parametrize("margin", [0, 1])
def test_a_long_binary_block_is_measured_on_the_bytes_to_the_byte(margin: int) -> None:
    # the cap at which libyaml's own reading of the block refuses it, and one byte under: the same answer
    from stream_doctor.capture.limits import CURRENT, LimitExceeded, Limits
    from stream_doctor.capture.yaml_safe import _binary_blocks, prescan

    data = _long_binary_cassette()
    (block,) = _binary_blocks(data)
    assert block.line == 8 and block.decoded == 30_000 * 36
    token = CURRENT.set(Limits(max_bytes=len(data) + block.decoded - margin))
    try:
        if margin:
            with pytest.raises(LimitExceeded) as refused:
                prescan(data, split=True)
            assert refused.value.line == 9
        else:
            assert prescan(data, split=True) == [(1, 14, len(data))]
    finally:
        CURRENT.reset(token)
    assert len(load_bytes(data).frames) > 30_000


def test_a_binary_header_inside_another_scalar_is_not_taken_for_a_block() -> None:
    # the bytes show a block header that is only text of a literal block above it: the events do not
    # confirm it, and the document is read as it is (the same as without the look at the bytes)
    from stream_doctor.capture import yaml_safe

    data = _long_binary_cassette().replace(
        b"      string: !!binary |\n", b"      note: |1\n       string: !!binary |\n", 1
    )
    assert yaml_safe._binary_blocks(data)  # the bytes are fooled
    assert yaml_safe.prescan(data, split=True) == yaml_safe._prescan(data, True, [])
    assert yaml.safe_load(data)["interactions"][0]["response"]["body"]["note"].startswith("string: !!binary |\n ")


def load_bytes(data: bytes):  # type: ignore[no-untyped-def]
    return load("x.yaml", data=data)


@pytest.mark.parametrize(
    ("edit", "tag"),
    [
        (("    headers:\n", "    headers: !ruby/hash:ActiveSupport::HashWithIndifferentAccess\n"), "!ruby/hash:"),
        (("message: OK", "message: !ruby/sym ok"), "!ruby/sym"),
        (("code: 200", "code: !ruby/range 200..299"), "!ruby/range"),
        (("string: !binary |-", "string: !ruby/string:Faraday::Utils::Headers |-"), "!ruby/string:"),
    ],
)
def test_every_other_ruby_tag_is_a_one_line_refusal_naming_it(tmp_path: Path, edit: tuple[str, str], tag: str) -> None:
    """Psych writes a Ruby object (a hash subclass, a symbol, a range, a string subclass) under its own tag;
    nothing is built from it, and the refusal names the tag and the line."""
    ruby = tmp_path / "ruby.yml"
    text = Path("fixtures/conversations/anthropic_ruby_vcr_binary.yaml").read_text()
    assert edit[0] in text
    ruby.write_text(text.replace(edit[0], edit[1], 1))
    with pytest.raises(CaptureError) as raised:
        load(str(ruby))
    assert tag in raised.value.message and "\n" not in raised.value.message
    lines = text.splitlines()
    assert raised.value.line == 1 + next(n for n, line in enumerate(lines) if edit[0].strip() in line)


def test_opencode_recording_base64_body(tmp_path: Path) -> None:
    """opencode's recorder keeps a body that is not text as base64 beside ``"bodyEncoding": "base64"``."""
    document = {
        "version": 1,
        "metadata": {"name": "anthropic/streams", "recordedAt": "2026-05-03T20:01:18.342Z", "tags": ["tool"]},
        "interactions": [
            {
                "request": {"method": "POST", "url": URL, "headers": {"x-api-key": "k"}, "body": json.dumps(BODY)},
                "response": {
                    "status": 200,
                    "headers": {"content-type": "text/event-stream"},
                    "body": base64.b64encode(SSE.encode()).decode(),
                    "bodyEncoding": "base64",
                },
            }
        ],
    }
    capture = load(write(tmp_path, json.dumps(document, indent=2)))
    request, start, stop = capture.frames
    assert request.value["headers"] == {"x-api-key": "[redacted]"}
    assert [start.event, stop.event] == ["message_start", "message_stop"]
    # the same text without "bodyEncoding" is the body itself, not base64
    del document["interactions"][0]["response"]["bodyEncoding"]
    document["interactions"][0]["response"]["body"] = SSE
    assert len(load(write(tmp_path, json.dumps(document), "text.json")).frames) == 3
    document["interactions"][0]["response"].update(body="not base64 at all!", bodyEncoding="base64")
    with pytest.raises(CaptureError, match='marked "bodyEncoding": "base64" is not base64'):
        load(write(tmp_path, json.dumps(document), "bad.json"))


@pytest.mark.parametrize("char", ["\x7f", "\x80", "\x93", "\x9f", "\ufffe", "\uffff"])
def test_a_json_cassette_holds_what_json_allows_raw_that_yaml_refuses(tmp_path: Path, char: str) -> None:
    # RFC 8259 asks only C0 to be escaped: Ruby's JSON.generate and vcrpy's json serializer write DEL, C1
    # and U+FFFE/U+FFFF raw, which YAML's reader refuses; the cassette reads as json.loads reads it
    sse = SSE.replace('"model":"claude"', f'"model":"claude{char}"')
    text = json.dumps(
        vcrpy({"string": sse}, body=json.dumps({**BODY, "metadata": {"user_id": char}})), ensure_ascii=False
    )
    assert char.encode() in text.encode()
    capture = load(write(tmp_path, text, "cassette.json"))
    request, start, stop = capture.frames
    assert request.value["body"]["metadata"] == {"user_id": char}
    assert start.value["message"]["model"] == f"claude{char}"
    assert [start.event, stop.event] == ["message_start", "message_stop"]


def test_the_same_characters_raw_in_a_yaml_cassette_are_still_refused(tmp_path: Path) -> None:
    # near miss: YAML has no raw C1 (a YAML writer escapes it); a YAML cassette holding one is no YAML
    text = yaml.safe_dump(vcrpy({"string": SSE})).replace("claude", "claude\x93", 1)
    with pytest.raises(CaptureError, match="unacceptable character"):
        load(write(tmp_path, text))
