"""Reading a capture piece by piece gives exactly what reading it whole gives: every frame with its
position, every input problem, the size, whether it ended cleanly; and a replay as it is read gives
the same report as a replay of the whole frame list. Pieces are cut as small as one byte."""

from __future__ import annotations

import gzip
import tempfile
from dataclasses import astuple
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stream_doctor.capture.chunks as chunks_module
from stream_doctor.capture import READERS, Interactions, ManyTurns, Streamed, load, open_capture
from stream_doctor.capture.base import Capture, Frame
from stream_doctor.capture.chunks import Origin, gunzip_chunks, line_cut, pieces, sse_cut
from stream_doctor.capture.limits import DEFAULT, Limits
from stream_doctor.engine.pipeline import replay, replay_loaded
from stream_doctor.values.options import Options
from tests.conftest import FIXTURES, fixture_files

STREAMED = ("sse", "jsonl", "envelope", "json")


def _opened_as(kind: type) -> list[Path]:
    """The fixtures the capture opener opens as ``kind`` (read in pieces, or interaction by interaction)."""
    found = []
    for path in fixture_files(check_tree=True, sidecars=True):
        try:
            opened = open_capture(str(path))
        except Exception:  # noqa: BLE001 - unreadable fixtures are other tests' business
            continue
        if isinstance(opened, kind):
            found.append(path)
    return found


FIXTURE_FILES = _opened_as(Streamed)


def _frame(frame: Frame) -> tuple[Any, ...]:
    return (frame.pos, frame.data, repr(frame.value), frame.error, frame.event, frame.t, frame.kind, frame.sse_id)


def _summary(capture: Capture, frames: list[Frame]) -> tuple[Any, ...]:
    return (
        capture.container,
        capture.size,
        capture.compressed,
        capture.header,
        [astuple(problem) for problem in capture.problems],
        capture.comments,
        capture.ended_cleanly,
        [_frame(frame) for frame in frames],
    )


def _streamed(path: str, chunk: int, monkeypatch: pytest.MonkeyPatch, probe: int = 16 * 1024) -> tuple[Any, ...]:
    monkeypatch.setattr(chunks_module, "CHUNK", chunk)
    monkeypatch.setattr(chunks_module, "PROBE", probe)
    opened = open_capture(path)
    assert isinstance(opened, Streamed)
    opened.one_turn = False
    frames = list(opened.frames())
    assert opened.count == len(frames)
    return _summary(opened.capture, frames)


def _whole(path: str) -> tuple[Any, ...]:
    capture = load(path)
    return _summary(capture, capture.frames)


def test_the_common_containers_stream_and_the_rest_are_read_whole() -> None:
    assert {path.suffix for path in FIXTURE_FILES} >= {".sse", ".jsonl"}
    assert len(FIXTURE_FILES) > 100
    assert not isinstance(open_capture(str(FIXTURES / "conversations" / "bedrock_two_turns.har")), Streamed)


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_streamed_fixture_reads_the_same_in_pieces(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    whole = _whole(str(path))
    assert whole[0] in STREAMED
    for chunk, probe in ((5, 16 * 1024), (1000, 16 * 1024), (1000, 1), (1000, 24)):
        assert _streamed(str(path), chunk, monkeypatch, probe) == whole, (chunk, probe)


EVENT = b'event: content_block_delta\ndata: {"type":"ping"}'
#: an event whose fields have runs of comment lines between and after them
INSIDE = b"event: ping\n" + b":\n" * 90 + b"data: {}\n" + b":\n" * 70
TRICKY = {
    "lf": EVENT + b"\n\n" + EVENT + b"\n\n",
    "crlf": EVENT.replace(b"\n", b"\r\n") + b"\r\n\r\n" + EVENT.replace(b"\n", b"\r\n") + b"\r\n\r\n",
    "cr": EVENT.replace(b"\n", b"\r") + b"\r\r" + EVENT.replace(b"\n", b"\r") + b"\r\r",
    "mixed": EVENT + b"\r\n\n" + EVENT + b"\r\r\n: keep-alive\n\n" + EVENT + b"\n\r" + EVENT + b"\r\n\r\n",
    "bom-and-blank-lines": b"\xef\xbb\xbf\n\n\n" + EVENT + b"\n\n\n\n\n" + EVENT + b"\n\n",
    "cut-last-event": EVENT + b"\n\n" + EVENT,
    "cut-after-cr": EVENT + b"\n\n" + EVENT + b"\r",
    "odd-fields": b"id: 7\nretry: 10\nfoo: bar\ndata: {}\ndata: {}\n\nevent: x\n\n" + EVENT + b"\n\n",
    "not-utf8": EVENT + b"\n\n" + b'data: {"a":"\xff"}\n\n' + EVENT + b"\n\n",
    "long": b"data: " + b'"' + b"x" * 5000 + b'"' + b"\n\n" + EVENT + b"\n\n",
    # issue 31: runs of comment lines are cut after, between events only (chunks.sse_cut); blank-line runs
    "comment-runs": b": a\n" * 40 + EVENT + b"\n\n" + b": keep-alive\n" * 30 + EVENT + b"\n: inside\n" * 20 + b"\n",
    "comment-runs-crlf": (b": a\n" * 40 + EVENT + b"\n\n" + b": b\n" * 30 + b"\n" * 50).replace(b"\n", b"\r\n") + EVENT,
    "comment-runs-cut": EVENT + b"\n\n" + b":\n" * 60 + b": cut",
    "comment-then-field": EVENT + b"\n\n" + b":\n" * 60 + b"event: x\n" + b":\n" * 60 + b"data: {}\n\n",
    # issue 31: and inside an event (after its first field, between its data lines, at a capture's cut), with
    # every kind of line end, a comment that is not UTF-8, a JSON object without data: prefixes around them
    "comment-runs-inside": INSIDE.replace(b"data", b"id: 3\n" + b": k\n" * 50 + b"data") + b"\n\n" + EVENT + b"\n\n",
    "comment-runs-inside-crlf": (INSIDE + b"\ndata: {}\n\n").replace(b"\n", b"\r\n") + EVENT,
    "comment-runs-inside-cr": (INSIDE + b"\n\n").replace(b"\n", b"\r") + EVENT + b"\r\r",
    "comment-runs-inside-mixed": b"data: 1\r"
    + b":a\r\n:b\n:c\r" * 30
    + b"\ndata: 2\r\n"
    + b":\r" * 40
    + b"\r\n"
    + EVENT,
    "comment-runs-inside-not-utf8": INSIDE.replace(b":\n:\nd", b":\xff\n:\nd") + b"\n\n" + EVENT + b"\n\n",
    "comment-runs-inside-cut": EVENT + b"\n\nevent: ping\n" + b":\n" * 80 + b": cut",
    "comment-runs-inside-cut-after-data": EVENT + b"\n\n" + b"data: {}\n" + b":\n" * 80,
    "comment-runs-unprefixed-json": EVENT
    + b'\n\n{\n"error": {"code": 1}\n'
    + b":\n" * 60
    + b'}\n\n{\n"e": 2}\n\n'
    + EVENT,
    "comment-runs-unseparated": b'data: {"a": 1}\n' + b":\n" * 60 + b'data: {"b": 2}\n\n' + EVENT + b"\n\n",
    "many-unknown-fields": EVENT + b"\n\n" + b"".join(b"f%d: x\n" % (i % 40) for i in range(300)) + b"\n" + EVENT,
    "jsonl": b'{"type":"ping"}\r\n\n  \n{"type":"ping"}\n{"type":',
    # issue 31: a piece of blank and whitespace lines alone is counted, not split
    "jsonl-blank-runs": b'{"type":"ping"}\n' + b"\n" * 300 + b"  \r\n" * 100 + b" \t" + b'\n{"type":"ping"}\n  ',
    "jsonl-cr": b'{"type":"ping"}\r{"type":"ping"}\r\r{"sd":"execute","call_id":"a","input":{}}\r',
    "jsonl-bom-bad-line": b'\xef\xbb\xbf{"type":"ping"}\nnot json\n{"type":"ping"}\n',
    "envelope": b'{"sd":"header","version":1,"problems":[{"kind":"k","message":"m"}]}\n'
    b'{"sd":"request","body":{},"t":0}\n{"sd":"event","t":0.5,"data":{"type":"ping"}}\n'
    b'{"sd":"event","raw":"x","error":"not JSON"}\n{"sd":"bogus"}\n{"sd":"execute","call_id":"a","input":{},"t":2}',
    # JSON arrays: each element may straddle pieces anywhere, inside a string, an escape or a CRLF
    "array-tricky-strings": b'\xef\xbb\xbf[\r\n {"s": "a [b] {c} , \\" ]\\\\"},\r\n"x\\\\", [1, [2, {"t": "}"}]], 12.5 ,\r\rnull\n]\r\n',
    "array-cut-in-element": b'[{"a": 1},\n {"b": [1, 2',
    "array-cut-in-string": b'[{"a": 1}, {"text": "never \\" closes',
    "array-cut-in-escape": b'[{"a": 1}, {"text": "ends in \\',
    "array-last-whole": b'[{"a": 1},\n  {"b": 2}  \n',
    "array-empty-elements-and-data-after": b'[1, , nope, {"a": },\n 2,]\n  \n[3]',
    "array-long-element": b'[{"text": "' + b'x\\"' * 2000 + b'"}, {"n": 2}]',
}


@pytest.mark.parametrize("name", sorted(TRICKY))
@pytest.mark.parametrize("compress", [False, True], ids=["plain", "gzip"])
def test_line_ends_bom_cuts_and_long_frames_read_the_same_in_pieces(
    name: str, compress: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = TRICKY[name]
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if compress else data)
    whole = _whole(str(path))
    for chunk in (1, 2, 3, 7, 64, 4096):
        for probe in (1, 5, 16 * 1024):  # where the frame begun before a chunk ends: found at once, or by doubling
            assert _streamed(str(path), chunk, monkeypatch, probe) == whole, (chunk, probe)


def _cut(chunks: list[bytes], cut: Any) -> list[tuple[bytes, bool]]:
    """The bytes of each piece ``pieces`` makes of ``chunks``, and whether it is the last."""
    return [(data[start:end], last) for data, start, end, last in pieces(iter(chunks), cut)]


def test_cuts_fall_only_where_a_frame_can_end() -> None:
    assert sse_cut(b"a\n\nb", 0) == 3
    assert sse_cut(b"a\r\n\r\nb", 0) == 5
    assert sse_cut(b"a\r\r", 0) == 0  # an LF may follow: the line end is not known yet
    assert sse_cut(b"a\r\rb", 0) == 3
    assert sse_cut(b"data: a\ndata: b\n", 0) == 0  # no blank line
    assert line_cut(b"a\nb", 0) == 2
    assert line_cut(b"a\r", 0) == 0
    assert line_cut(b"a\rb", 0) == 2
    assert _cut([b"a\n", b"b", b"c\nd"], line_cut) == [(b"a\n", False), (b"bc\n", False), (b"d", True)]


def test_a_comment_line_between_or_inside_events_is_a_place_to_cut() -> None:
    # issue 31: comments without blank lines were gathered whole (a 2.2 MB gzip of them: 5.9 GB), and
    # after an event's first field too (event: ping, then 100 MiB of comments: 2.8 GB)
    assert sse_cut(b":a\n:b\ndat", 0, True) == 6  # from a piece's start: its state is empty there
    assert sse_cut(b"x\n\n:a\r\n:b\r\nda", 0) == 11  # after a blank line
    assert sse_cut(b":a\n:b\ndat", 0) == 6  # the line before ":b" ends in the window: ":b" is a whole line
    assert sse_cut(b"data: 1\n:a\n:b\n", 0, True) == 14  # inside an event: _sse_open carries it on
    assert sse_cut(b":a\nevent: x\n:b\n", 0, True) == 15
    assert sse_cut(b"event: x\r:a\r:b\rd", 0, True) == 15  # CR line ends
    assert sse_cut(b"x\r" + b"\r" * 9, 0) == 10  # a run of CR blank lines: all but the CR an LF may follow
    # near misses: a comment line whose start is not in the window, a last line that is a field, a CR
    # that ends the window (an LF may follow it), a blank line
    assert sse_cut(b":b\n", 0) == 0
    assert sse_cut(b"data:b\n", 0, True) == 0
    assert sse_cut(b":a\nevent: x\n", 0, True) == 0
    assert sse_cut(b"x\n\n:a\n:b\r", 0) == 6  # not after the CR
    assert sse_cut(b"event: x\r:a\r", 0, True) == 0
    held = [b":a\n" * 10, b":b\n" * 10 + b"dat", b"a: {}\n\n:c\n"]
    assert _cut(held, sse_cut) == [
        (b":a\n" * 10, False),
        (b":b\n" * 10, False),
        (b"data: {}\n\n:c\n", False),
        (b"", True),
    ]


def test_an_unknown_field_line_between_or_inside_events_is_a_place_to_cut() -> None:
    # issue 31: event: ping, then 32 MiB of unknown field lines, was gathered whole (787 MB)
    assert sse_cut(b"a\nb\n", 0) == 4  # "b" is a whole line: the spec ignores it
    assert sse_cut(b"event: ping\nf: x\nf: x\n", 0, True) == 22
    assert sse_cut(b"x\n\nf: x\r\ndat", 0) == 9
    assert sse_cut(b"data: 1\r" + b"\0" * 9 + b"\r", 0, True) == 0  # a CR that ends the window
    assert sse_cut(b"data: 1\r" + b"\0" * 9 + b"\rd", 0, True) == 18  # a line of junk without a colon
    assert sse_cut(b"dataa:1\n", 0, True) == 8  # a name longer than a field's
    # near misses: each field's own line, a line whose start is not in the window
    for field in (b"data", b"event", b"id", b"retry", b"data: 1", b"event:x", b"id: 7", b"retry: 5"):
        assert sse_cut(field + b"\n", 0, True) == 0, field
    assert sse_cut(b"f: x\n", 0) == 0


@settings(max_examples=150, deadline=None)
@given(
    name=st.sampled_from(sorted(TRICKY)),
    sizes=st.lists(st.integers(1, 700), min_size=1, max_size=12),
    probe=st.integers(1, 64),
)
def test_pieces_of_chunks_of_any_sizes_read_as_the_whole(name: str, sizes: list[int], probe: int) -> None:
    """Chunks of changing sizes (a frame begun in one ends in the next, or several later, or the
    next chunk is smaller than what is held), the held frame's end found at once or by doubling:
    the pieces are the bytes, in order, and the reader reads them as it reads the whole."""
    data = TRICKY[name]
    whole = load(name, data=data)  # read whole by the reader the bytes are sniffed as
    reader = READERS[whole.container]
    chunks, at = [], 0
    while at < len(data):
        size = sizes[len(chunks) % len(sizes)]
        chunks.append(data[at : at + size])
        at += size
    saved = chunks_module.PROBE
    chunks_module.PROBE = probe
    try:
        cut = list(pieces(iter(chunks), reader.cut))
        streamed = Capture(whole.path, whole.container, len(data), [])
        for batch in reader.stream(iter(cut), streamed):  # type: ignore[attr-defined]
            streamed.frames += batch
    finally:
        chunks_module.PROBE = saved
    assert b"".join(piece[start:end] for piece, start, end, _ in cut) == data
    assert [last for *_, last in cut] == [False] * (len(cut) - 1) + [True]
    assert all(end > start for _, start, end, last in cut if not last)
    assert [_frame(f) for f in streamed.frames] == [_frame(f) for f in whole.frames]
    assert [astuple(p) for p in streamed.problems] == [astuple(p) for p in whole.problems]
    assert streamed.ended_cleanly == whole.ended_cleanly


def test_gzip_in_pieces_reads_every_member_and_stops_at_the_cap() -> None:
    members = gzip.compress(b"one\n") + b"\0\0" + gzip.compress(b"two\n") + b"trailing garbage"
    split = [members[i : i + 3] for i in range(0, len(members), 3)]
    assert b"".join(gunzip_chunks(iter(split), DEFAULT)) == b"one\ntwo\n"
    from stream_doctor.capture.base import CaptureError

    with pytest.raises(CaptureError, match="cut off"):
        b"".join(gunzip_chunks(iter([members[:10]]), DEFAULT))
    with pytest.raises(CaptureError, match="larger than 1,000 bytes once decompressed"):
        b"".join(gunzip_chunks(iter([gzip.compress(bytes(5000))]), Limits(max_bytes=1000)))


def test_bytes_in_memory_are_read_in_pieces_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunks_module, "CHUNK", 10)
    origin = Origin("mem", b"x" * 25, DEFAULT)
    assert [len(chunk) for chunk in origin.chunks()] == [10, 10, 5]


def test_a_second_request_record_means_several_turns(tmp_path: Path) -> None:
    path = tmp_path / "two.jsonl"
    path.write_bytes(
        b'{"sd":"header","version":1}\n{"sd":"request","body":{}}\n{"sd":"event","data":{"type":"ping"}}\n'
        b'{"sd":"request","body":{}}\n{"sd":"event","data":{"type":"ping"}}\n'
    )
    opened = open_capture(str(path))
    assert isinstance(opened, Streamed)
    with pytest.raises(ManyTurns):
        list(opened.frames())
    assert len(opened.whole().frames) == 4  # read on from the first piece, into one list


def _session(padding: int) -> bytes:
    """An envelope of 40 turns whose first turn has ``padding`` events of 2 KB first."""
    long = b'{"sd":"event","data":{"type":"ping","pad":"%s"}}\n' % (b"x" * 2000)
    first = b'{"sd":"request","body":{}}\n' + long * padding
    turns = (
        b'{"sd":"request","body":{"messages":[%d]}}\n{"sd":"event","data":{"type":"ping"},"t":%d}\n' % (n, n)
        for n in range(40)
    )
    return b'{"sd":"header","version":1}\n' + first + b"".join(turns)


@pytest.mark.parametrize(("padding", "reads"), [(0, 1), (100, 2)])
def test_several_turns_read_whole_parse_the_first_piece_once(
    padding: int, reads: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A session's second request in the first piece stops the one-turn reading before any frame was
    # handed on: the whole list goes on from that piece (up to 1 MB parsed once, not twice). Near miss:
    # a first turn longer than the first piece has been handed on, so the file is read again.
    path = tmp_path / "session.jsonl"
    path.write_bytes(_session(padding))
    monkeypatch.setattr(chunks_module, "CHUNK", 4096)
    opened = open_capture(str(path))
    assert isinstance(opened, Streamed)
    chunks_read: list[int] = []
    chunks_of = opened.origin.chunks

    def counted() -> Iterator[bytes]:
        chunks_read.append(1)
        return chunks_of()

    monkeypatch.setattr(opened.origin, "chunks", counted)
    with pytest.raises(ManyTurns):
        list(opened.frames())
    whole = opened.whole()
    assert len(chunks_read) == reads - 1  # the first read's chunks were taken when the capture was opened
    assert _summary(whole, whole.frames) == _whole(str(path))
    assert [frame.kind for frame in whole.frames[:2]] == ["request", "event" if padding else "request"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    turns=st.integers(2, 5),
    padding=st.integers(0, 60),
    chunk=st.sampled_from([64, 1000, 4096, 1 << 20]),
    header=st.booleans(),
    broken=st.sampled_from(["", "not json", '{"sd":"event"}', '{"sd":"request","body":1}']),
    cut=st.booleans(),
)
def test_several_turns_read_whole_read_as_load_reads_them(
    turns: int, padding: int, chunk: int, header: bool, broken: str, cut: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The neighbours of the case above: the second request in the first piece or later, with or
    # without a header, a bad line among the first turn's, a last line cut: whether the whole list
    # goes on from the first piece or reads the file again, it holds what reading the file whole does.
    long = b'{"sd":"event","data":{"type":"ping","pad":"%s"},"t":0.5}\n' % (b"x" * 2000)
    first = b'{"sd":"request","body":{}}\n' + long * padding + (broken.encode() + b"\n" if broken else b"")
    rest = b"".join(
        b'{"sd":"request","body":{"n":%d}}\n{"sd":"event","data":{"type":"ping"}}\n' % n for n in range(turns)
    )
    data = (b'{"sd":"header","version":1}\n' if header else b"") + first + rest
    monkeypatch.setattr(chunks_module, "CHUNK", chunk)
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "session.jsonl")
        Path(path).write_bytes(data[:-3] if cut else data)
        opened = open_capture(path)
        assert isinstance(opened, Streamed)
        with pytest.raises(ManyTurns):
            list(opened.frames())
        whole = opened.whole()
        assert _summary(whole, whole.frames) == _whole(path)


def _report(path: str, **options: Any) -> dict[str, Any]:
    return replay(path, Options(**options)).to_dict()


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_streamed_replay_reports_what_a_replay_of_the_whole_list_does(path: Path) -> None:
    options = Options(keep_events=True)
    try:
        whole = replay_loaded(load(str(path)), options).to_dict()
    except Exception as error:  # noqa: BLE001 - the streamed replay must fail alike
        with pytest.raises(type(error), match=None) as caught:
            replay(str(path), options)
        assert str(caught.value) == str(error)
        return
    assert replay(str(path), options).to_dict() == whole
    assert replay(str(path), Options()).to_dict() == replay_loaded(load(str(path)), Options()).to_dict()


INTERACTION_FILES = _opened_as(Interactions)


@pytest.mark.parametrize("path", INTERACTION_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_replay_a_turn_at_a_time_reports_what_a_replay_of_the_whole_list_does(path: Path) -> None:
    for options in (Options(), Options(keep_events=True), Options(provider="anthropic")):
        try:
            whole = replay_loaded(load(str(path)), options).to_dict()
        except Exception as error:  # noqa: BLE001 - the replay a turn at a time must fail alike
            with pytest.raises(type(error)) as caught:
                replay(str(path), options)
            assert str(caught.value) == str(error)
            continue
        assert replay(str(path), options).to_dict() == whole


def test_har_files_are_read_an_interaction_at_a_time() -> None:
    assert {path.suffix for path in INTERACTION_FILES} >= {".har"}
