"""``load``: files and stdin, gzip, format sniffing, forcing a container, one-line errors."""

from __future__ import annotations

import gzip
import io
import sys
from pathlib import Path

import orjson
import pytest

import stream_doctor.util.opener as opener_module
from stream_doctor.capture import CONTAINERS, READERS, load
from stream_doctor.capture.base import CaptureError

SSE = b'event: message_start\ndata: {"type":"message_start"}\n\n'
JSONL = b'{"type":"message_start"}\n{"type":"message_stop"}\n'
ENVELOPE = b'{"sd":"header","version":1}\n{"sd":"event","data":{"type":"message_start"}}\n'
ARRAY = b'[{"candidates": []},\n {"candidates": []}]\n'


def write(tmp_path: Path, data: bytes, name: str = "capture") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def error_of(path: str, container: str | None = None) -> CaptureError:
    with pytest.raises(CaptureError) as caught:
        load(path, container)
    assert "\n" not in caught.value.message
    return caught.value


def test_registry() -> None:
    assert CONTAINERS == ("sse", "jsonl", "envelope", "json", "eventstream", "prefixed", "har", "vcr", "recording")
    for name, reader in READERS.items():
        assert reader.name == name
        assert reader.title


@pytest.mark.parametrize(
    ("data", "container", "frames"),
    [(SSE, "sse", 1), (JSONL, "jsonl", 2), (ENVELOPE, "envelope", 1), (ARRAY, "json", 2)],
)
def test_formats_are_recognised(tmp_path: Path, data: bytes, container: str, frames: int) -> None:
    path = write(tmp_path, data)
    capture = load(path)
    assert capture.container == container
    assert len(capture.frames) == frames
    assert capture.path == path
    assert capture.size == len(data)
    assert capture.compressed is None


def test_sse_with_leading_keepalives_and_bom(tmp_path: Path) -> None:
    capture = load(write(tmp_path, b"\xef\xbb\xbf: OPENROUTER PROCESSING\n\n" + SSE))
    assert capture.container == "sse"
    assert capture.comments == 1


def test_gzip(tmp_path: Path) -> None:
    capture = load(write(tmp_path, gzip.compress(SSE), "capture.sse.gz"))
    assert capture.compressed == "gzip"
    assert capture.container == "sse"
    assert capture.frames[0].pos.offset == 0  # offsets are in the decompressed bytes
    assert capture.size == len(SSE)


def test_gzip_is_sniffed_by_content_not_name(tmp_path: Path) -> None:
    capture = load(write(tmp_path, gzip.compress(ENVELOPE), "capture.sse"))
    assert (capture.container, capture.compressed) == ("envelope", "gzip")


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(gzip.compress(JSONL))))
    capture = load("-")
    assert capture.path == "<stdin>"
    assert capture.container == "jsonl"
    assert capture.compressed == "gzip"
    assert len(capture.frames) == 2


def test_forced_container(tmp_path: Path) -> None:
    path = write(tmp_path, JSONL)
    capture = load(path, "envelope")
    assert capture.container == "envelope"
    assert all(f.error is not None and f.error.startswith("envelope: ") for f in capture.frames)


def test_forced_container_reads_what_sniffing_would_not(tmp_path: Path) -> None:
    capture = load(write(tmp_path, b"hello\nworld\n"), "jsonl")
    assert len(capture.frames) == 2
    assert capture.frames[0].error is not None


def test_unknown_container_lists_the_valid_names(tmp_path: Path) -> None:
    error = error_of(write(tmp_path, SSE), "ndjson")
    assert error.message == (
        "unknown container 'ndjson' (choose from sse, jsonl, envelope, json, eventstream, prefixed, har, vcr, recording)"
    )


def test_unrecognised_format_says_what_was_tried(tmp_path: Path) -> None:
    error = error_of(write(tmp_path, b"hello world\nsecond line\n"))
    assert error.message == (
        "could not recognise the capture format (tried sse: line 1 starts with 'hello world', "
        "not an 'event:'/'data:' field; jsonl, envelope: line 1 is not a JSON object; "
        "json: does not start with '['; eventstream: no event stream prelude (its CRC32 does not check out); "
        "prefixed: line 1 does not start with a one-character type id and ':'; "
        'har: does not start with {"log": (not a HAR file); '
        "vcr: no top-level 'interactions:' (not a VCR cassette); "
        'recording: neither {"request": …, "response": …}, {"Entries": […]}, {"method": …, "response": …} lines, '
        '{"status", "headers", "body"}, an httprr trace, a ReqLLM transcript, a nock array of {"scope": …} nor '
        'Mastra\'s {"meta": …, "recordings": […]}); '
        "force one with --container"
    )


def test_binary_garbage_is_one_short_line_without_its_bytes(tmp_path: Path) -> None:
    """Issue 36: each text reader's reason quoted the first line's bytes, 900 characters of them."""
    error = error_of(write(tmp_path, bytes(range(256)) * 100))
    assert error.message == (
        "could not recognise the capture format: the file is binary (a NUL byte at offset 0), and not AWS's "
        "event stream, the one binary format: no event stream prelude (its CRC32 does not check out); "
        "force one with --container"
    )
    latin1 = error_of(write(tmp_path, "café au lait\n".encode("latin-1")))
    assert latin1.message.startswith(
        "could not recognise the capture format: the file is not UTF-8 text (byte 0xe9 at offset 3), and not AWS's"
    )


def test_text_cut_inside_a_character_at_the_end_of_the_head_is_still_text(tmp_path: Path) -> None:
    """The near miss: the sniffed head ends inside a UTF-8 character; that is text, said reader by reader."""
    from stream_doctor.capture import HEAD_SIZE

    error = error_of(write(tmp_path, b"x" * (HEAD_SIZE - 1) + "é".encode() * 10))
    assert error.message.startswith("could not recognise the capture format (tried sse: ")


def test_blank_file_is_not_recognised(tmp_path: Path) -> None:
    error = error_of(write(tmp_path, b"\n\n  \n"))
    assert "sse: no 'event:'/'data:' field lines" in error.message


def test_missing_file() -> None:
    assert error_of("/nonexistent/capture.sse").message == "no such file"


def test_directory(tmp_path: Path) -> None:
    assert error_of(str(tmp_path)).message == "is a directory, not a capture file"


def test_permission_denied(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Tests may run as root, where chmod 000 does not stop a read: make the one opener's open() refuse instead.
    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(opener_module, "open", refuse, raising=False)
    assert error_of(write(tmp_path, SSE)).message == "permission denied"


def test_empty_file(tmp_path: Path) -> None:
    assert error_of(write(tmp_path, b"")).message == "the capture is empty"


def test_empty_gzip(tmp_path: Path) -> None:
    error = error_of(write(tmp_path, gzip.compress(b"")))
    assert error.message == "the capture is empty (once decompressed)"


def test_corrupt_gzip(tmp_path: Path) -> None:
    error = error_of(write(tmp_path, b"\x1f\x8b" + b"\x00" * 40))
    assert error.message.startswith("corrupt gzip data: ")


def test_cut_gzip(tmp_path: Path) -> None:
    data = gzip.compress(SSE * 100)
    error = error_of(write(tmp_path, data[: len(data) // 2]))
    assert "gzip data is cut off" in error.message


def test_envelope_version_error_carries_the_line(tmp_path: Path) -> None:
    error = error_of(write(tmp_path, b'{"sd":"header","version":9}\n'))
    assert error.line == 1


def test_json_array_that_is_not_an_array_when_forced(tmp_path: Path) -> None:
    error = error_of(write(tmp_path, JSONL), "json")
    assert error.message.startswith("not a JSON array")


def test_a_first_line_longer_than_the_sniffing_head(tmp_path: Path) -> None:
    record = {"sd": "event", "data": {"text": "x" * 100_000}}
    capture = load(write(tmp_path, orjson.dumps(record) + b"\n"))
    assert capture.container == "envelope"
    bare = load(write(tmp_path, orjson.dumps(record["data"]) + b"\n", "bare"))
    assert bare.container == "jsonl"
