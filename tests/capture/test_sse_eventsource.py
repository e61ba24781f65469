"""The SSE reader (``capture/sse.py``) against the browser's own ``EventSource``: Debian's Chromium.

A loopback server (127.0.0.1, an ephemeral port) serves each stream as ``text/event-stream`` at a URL
of its own; one page opens ``new EventSource(url)`` for many of them, records every message event
(type, data, lastEventId) and closes the source at its first connection error (the server ends each
response after its body, and EventSource would reconnect). What the browser dispatched is compared,
event for event, with the frames ``read_sse`` gives for the same bytes (fast path and line parser):
the event name (``message`` when none or empty), the data decoded as UTF-8, the id.

Inputs: every SSE fixture in ``fixtures/``, every raw SSE capture in ``../shared/corpus`` (skipped
when that folder is absent), and streams hypothesis generates: LF, CR and CRLF line ends mixed, one or
two BOMs at the start, comments, fields without a colon, no space, one or two after it, leading spaces
(`` data: x`` is a field named `` data``), empty ``event:``, ``id:`` with and without NUL, several
data lines, unknown fields, ``retry:``, bytes that are not UTF-8, very long lines, and a last event
with or without its blank line or its last line end. Each example is a batch of streams run in one
page. ``SSE_EVENTSOURCE_EXAMPLES`` sets the number of examples (30 by default), e.g. a long run::

    SSE_EVENTSOURCE_EXAMPLES=2000 .venv/bin/pytest tests/capture/test_sse_eventsource.py -q -p no:cacheprovider

Where the reader knowingly differs from the browser, the difference is in ``EXPECTED_DIFFERENCES``
with the words of the WHATWG HTML spec, "Interpreting an event stream", that the browser follows; the
comparison undoes exactly those, and a test per difference shows that the browser really does it.
Without chromium or playwright these tests skip with what to install, except under CI=true, where a
missing browser fails.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from stream_doctor.capture import load  # noqa: E402
from stream_doctor.capture._text import BOM  # noqa: E402
from stream_doctor.capture.base import Capture  # noqa: E402
from stream_doctor.capture.sse import read_sse  # noqa: E402
from tests.browser import chromium  # noqa: E402
from tests.conftest import CORPUS, NO_CORPUS, corpus_files, fixture_files  # noqa: E402

#: hypothesis and the corpus, each input read by Chromium's EventSource
pytestmark = [pytest.mark.slow]

EXAMPLES = int(os.environ.get("SSE_EVENTSOURCE_EXAMPLES", "30"))

#: Where this reader and a browser differ on purpose: what the spec ("Interpreting an event stream")
#: says the browser does, and what the reader does instead. The comparison undoes exactly these.
EXPECTED_DIFFERENCES = {
    "unterminated-last-event": (
        "Once the end of the file is reached, any pending data must be discarded. (If the file ends in the "
        "middle of an event, before the final empty line, the incomplete event is not dispatched.)",
        "the reader still gives the event whose blank line (or last line end) is missing, as a frame holding "
        "the data received, and reports the cut (InputProblem 'unterminated-event', SD003): a cut stream is "
        "what a user wants diagnosed. The events before it are the browser's.",
    ),
    "data-lines-not-separated": (
        'If the field name is "data": Append the field value to the data buffer, then append a single '
        "U+000A LINE FEED (LF) character to the data buffer.",
        "an event of several data lines each of which is a whole JSON object (or [DONE]), and whose joined "
        "data is not JSON, is given as one frame per line and reported ('data-lines-not-separated', SD005): "
        "the browser's one event has the lines joined by LF, which no JSON reader parses.",
    ),
    "unprefixed-json": (
        "If the line is empty (a blank line): Dispatch the event ... Otherwise, the string is not empty but "
        "does not contain a U+003A COLON character (:): Process the field using the whole line as the field "
        "name, and the empty string as the field value. ... Otherwise: The field is ignored.",
        "a block of lines none of which is a known field or a comment, which together are one JSON object "
        "(a Vertex AI or Gemini error written without data: prefixes), is given as one frame and reported "
        "('unprefixed-json'): google-genai reads it so and raises the error it holds; the browser ignores "
        "every line of it.",
    ),
    "last-event-id-carried": (
        "Set the last event ID string of the event source to the value of the last event ID buffer. The "
        "buffer does not get reset, so the last event ID string of the event source remains set to this "
        "value until the next time it is set by the server.",
        "Frame.sse_id is the id the event's own block set (None without a valid id line); the browser's "
        "lastEventId is the last id set before it, in any block, dispatched or not.",
    ),
}

#: Where Chromium itself departs from the spec, and this reader does not: the spec's words, and what Blink
#: does. The comparison gives the reader the stream as Blink reads it.
BROWSER_DEVIATIONS = {
    "line-end-after-bom": (
        "Streams must be decoded using the UTF-8 decode algorithm [which drops one leading BOM]. The stream "
        "must then be parsed by reading everything line by line, with a U+000D CARRIAGE RETURN U+000A LINE "
        "FEED (CRLF) character pair, a single U+000A LINE FEED (LF) character not preceded by a U+000D "
        "CARRIAGE RETURN (CR) character, and a single U+000D CARRIAGE RETURN (CR) character not followed by "
        "a U+000A LINE FEED (LF) character being the ways in which a line can end.",
        "Blink's EventSourceParser::AddBytes skips the BOM with a `continue` that also skips the test for a "
        "line end on the byte after it: a CR or LF right after the BOM becomes the first byte of the next "
        "line, whose field name then is no field (the line is ignored). The reader follows the spec.",
    ),
}

PAGE = b"<!doctype html><meta charset=utf-8><title>EventSource differential</title>"

#: Runs every case given, a few at a time (Chromium opens at most 6 connections per host).
RUN = """
async ({cases, workers}) => {
  const run = ({url, names}) => new Promise((resolve) => {
    const events = [];
    let opened = false;
    const source = new EventSource(url);
    const record = (event) => events.push([event.type, event.data, event.lastEventId]);
    const timer = setTimeout(() => { source.close(); resolve({events, opened, timeout: true}); }, 20000);
    for (const name of names) {
      if (name !== "error" && name !== "open") source.addEventListener(name, record);
    }
    // a server's "event: open"/"event: error" is a MessageEvent; the connection's own are plain Events
    source.addEventListener("open", (event) => {
      if (event instanceof MessageEvent) record(event); else opened = true;
    });
    source.addEventListener("error", (event) => {
      if (event instanceof MessageEvent) { record(event); return; }
      clearTimeout(timer);
      source.close();
      resolve({events, opened, timeout: false});
    });
  });
  const results = new Array(cases.length);
  let next = 0;
  const worker = async () => {
    while (next < cases.length) { const i = next++; results[i] = await run(cases[i]); }
  };
  await Promise.all(Array.from({length: workers}, worker));
  return results;
}
"""

Event = tuple[str, str, str]  # type, data, lastEventId


class _Streams(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.bodies: dict[str, bytes] = {}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Streams

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path == "/":
            body, kind = PAGE, "text/html; charset=utf-8"
        elif self.path in self.server.bodies:
            body, kind = self.server.bodies[self.path], "text/event-stream"
        else:
            # a reconnection the page did not close in time: no stream, which is an error, not events
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's name
        pass


@dataclass
class Browser:
    """One page of the loopback origin; ``run`` gives what its EventSource dispatched for each stream."""

    page: Any
    server: _Streams
    count: int = 0

    def run(self, streams: list[bytes]) -> list[list[Event]]:
        cases = []
        for data in streams:
            self.count += 1
            url = f"/s/{self.count}"
            self.server.bodies[url] = data
            cases.append({"url": url, "names": _names(data)})
        try:
            results = self.page.evaluate(RUN, {"cases": cases, "workers": 4})
        finally:
            for case in cases:
                del self.server.bodies[case["url"]]
        for data, result in zip(streams, results, strict=True):
            assert result["opened"] and not result["timeout"], (data[:200], result)
        return [[(kind, text, last_id) for kind, text, last_id in result["events"]] for result in results]


@contextmanager
def open_browser() -> Iterator[Browser]:
    """A page of a loopback server in a launched Chromium (the fixture below; ``tests/differential_tally.py``)."""
    server = _Streams()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with chromium("the SSE reader is compared with a real browser's EventSource") as launched:
            page = launched.new_page()
            page.set_default_timeout(60_000)
            page.goto(f"http://127.0.0.1:{server.server_address[1]}/")
            yield Browser(page, server)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with open_browser() as opened:
        yield opened


_LINE_END = re.compile(rb"(\r\n|\r|\n)")


def _field_lines(data: bytes) -> Iterator[tuple[int, bytes, bytes]]:
    """(offset, name, value) of every whole line of ``data`` that is a field, as the spec splits it."""
    body = data.removeprefix(BOM)
    offset = len(data) - len(body)
    parts = _LINE_END.split(body)  # line, end, line, end, ..., the rest after the last line end
    for line, end in zip(parts[0:-1:2], parts[1::2], strict=True):
        name, colon, value = line.partition(b":")
        if name or not colon:
            yield offset, name, value.removeprefix(b" ")
        offset += len(line) + len(end)


def _names(data: bytes) -> list[str]:
    """Every event name the stream's ``event`` lines give, read from the bytes (not by the reader)."""
    names = {"message"}
    for _, name, value in _field_lines(data + b"\n"):
        if name == b"event" and value:
            names.add(value.decode("utf-8", "replace"))
    return sorted(names)


def _ours(capture: Capture, data: bytes) -> list[Event]:
    """The reader's frames as the events a browser dispatches, with EXPECTED_DIFFERENCES undone."""
    frames = list(capture.frames)
    cut = [p for p in capture.problems if p.kind == "unterminated-event"]
    # a problem's position is its event's block; its number is that of the event's first frame
    numbers = [f.pos.number for f in frames]
    if cut and cut[-1].pos and cut[-1].pos.number in numbers:  # unterminated-last-event: the browser discards it
        frames = frames[: numbers.index(cut[-1].pos.number)]
    # unprefixed-json: the browser ignores each of the block's lines
    unprefixed = {p.pos.number for p in capture.problems if p.kind == "unprefixed-json" and p.pos}
    frames = [f for f in frames if f.pos.number not in unprefixed]
    # data-lines-not-separated: the browser's one event is the lines joined by LF
    joined = {
        p.pos.number: int(re.match(r"\d+", p.message).group())  # type: ignore[union-attr]
        for p in capture.problems
        if p.kind == "data-lines-not-separated" and p.pos
    }
    ids = [(offset, value) for offset, name, value in _field_lines(data) if name == b"id" and b"\0" not in value]
    events: list[Event] = []
    i = 0
    while i < len(frames):
        frame = frames[i]
        count = joined.get(frame.pos.number, 1)
        text = b"\n".join(f.data for f in frames[i : i + count]).decode("utf-8", "replace")
        last_id = frame.sse_id
        if last_id is None:  # last-event-id-carried: the last valid id line before the event
            before = [value for offset, value in ids if offset < frame.pos.offset]
            last_id = before[-1].decode("utf-8", "replace") if before else ""
        events.append((frame.event or "message", text, last_id))
        i += count
    return events


def _as_blink_reads(data: bytes) -> bytes:
    """``data`` with BROWSER_DEVIATIONS applied: a CR or LF right after the BOM read as a byte of the next line."""
    if data.startswith((BOM + b"\r", BOM + b"\n")):
        return BOM + b"x" + data[len(BOM) + 1 :]  # any byte that is no line end: the line is no field either way
    return data


def differences(browser: Browser, streams: list[bytes]) -> list[tuple[bytes, list[Event], list[Event]]]:
    """Each stream whose events, as the reader gives them (fast path or line parser), are not what the
    browser dispatched: (the stream as Blink reads it, the browser's events, the reader's)."""
    found = []
    for sent, theirs in zip(streams, browser.run(streams), strict=True):
        data = _as_blink_reads(sent)
        for capture in (read_sse(data, "eventsource"), read_sse(data, "eventsource", fast=False)):
            ours = _ours(capture, data)
            if ours != theirs:
                found.append((data, theirs, ours))
                break
    return found


def _compare(browser: Browser, streams: list[bytes]) -> None:
    assert [(data[:2000], theirs, ours) for data, theirs, ours in differences(browser, streams)] == []


def _sse_files(paths: Iterable[Path]) -> list[Path]:
    """The raw SSE captures among ``paths`` (the fixtures, or every file of the corpus)."""
    found = []
    for path in paths:
        if not path.is_file() or path.name == "README.md" or path.suffix == ".gz":
            continue
        try:
            capture = load(str(path))
        except Exception:  # noqa: BLE001 - files that are no capture are other tests' business
            continue
        if capture.container == "sse":
            found.append(path)
    return found


def test_every_sse_fixture_reads_as_eventsource_dispatches_it(browser: Browser) -> None:
    files = _sse_files(fixture_files(check_tree=True, sidecars=True))
    assert len(files) > 50
    _compare(browser, [path.read_bytes() for path in files])


@pytest.mark.skipif(not CORPUS.is_dir(), reason=NO_CORPUS)
def test_every_raw_sse_capture_of_the_corpus_reads_as_eventsource_dispatches_it(browser: Browser) -> None:
    files = _sse_files(corpus_files())
    if not files:
        pytest.skip(f"no raw SSE capture in {CORPUS}")
    _compare(browser, [path.read_bytes() for path in files])


# ---- generated framings -------------------------------------------------------------------------------

NAMES = ("message", "delta", "ping", "error", "open", "é ü", "a b", "")
_text = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\r\n"), max_size=12).map(str.encode)
_raw = st.binary(max_size=6).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b""))  # not always UTF-8
_value = st.one_of(_text, _text, _raw, st.sampled_from([b"{}", b'{"a": 1}', b"[DONE]", b" x", b"\0"]))
_colon = st.sampled_from([b":", b": ", b":  ", b":\t"])


def _field(name: bytes) -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.builds(lambda colon, value: name + colon + value, _colon, _value),
        st.just(name),  # no colon: the whole line is the name, the value empty
    )


_line = st.one_of(
    _field(b"data"),
    _field(b"data"),
    st.builds(lambda colon, name: b"event" + colon + name.encode(), _colon, st.sampled_from(NAMES)),
    _field(b"event"),
    _field(b"id"),
    st.builds(lambda a, b: b"id: " + a + b"\0" + b, _text, _text),  # a NUL: the field is ignored
    st.builds(lambda digits: b"retry: " + digits, st.sampled_from([b"0", b"3000", b"x", b""])),
    st.builds(lambda value: b":" + value, _value),  # a comment
    st.builds(
        lambda name, colon, value: name + colon + value,
        st.sampled_from([b" data", b"  event", b"Data", b"foo", b"\xef\xbb\xbfdata", b"data\0"]),
        _colon,
        _value,
    ),  # a leading space, another case, an unknown name, a second BOM, a NUL: no field the spec knows
    st.just(b"data: " + b'{"type": "a"}'),  # several of these in one event: one frame each here
)
_line_end = st.sampled_from([b"\n", b"\r", b"\r\n"])
_event = st.lists(st.tuples(_line, _line_end), min_size=0, max_size=5)


@st.composite
def _stream(draw: st.DrawFn) -> bytes:
    prefix = draw(st.sampled_from([b"", b"", BOM, BOM + BOM]))  # only the first BOM is stripped
    events = draw(st.lists(_event, min_size=1, max_size=6))
    if draw(st.integers(0, 3)) == 0:  # a very long line (one per stream at most: a batch stays small)
        size = draw(st.integers(1_000, 100_000))
        events[draw(st.integers(0, len(events) - 1))].append((b"data: " + b"x" * size, b"\n"))
    parts = [prefix]
    for lines in events:
        for line, end in lines:
            parts += [line, end]
        parts.append(draw(_line_end))  # the blank line that dispatches
    stream = b"".join(parts)
    ending = draw(st.sampled_from(["whole", "no blank line", "no line end", "cut anywhere"]))
    if ending == "no blank line" and stream.endswith((b"\n", b"\r")):
        stream = stream[: -2 if stream.endswith(b"\r\n") else -1]
    elif ending == "no line end":
        stream = stream.rstrip(b"\r\n")
    elif ending == "cut anywhere" and stream:
        stream = stream[: draw(st.integers(0, len(stream)))]
    return stream


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(streams=st.lists(_stream(), min_size=1, max_size=8))
def test_generated_framings_read_as_eventsource_dispatches_them(browser: Browser, streams: list[bytes]) -> None:
    _compare(browser, streams)


# ---- each expected difference is real: the browser does what the spec's words say -------------------------


def test_an_unterminated_last_event_is_discarded_by_the_browser_and_reported_here(browser: Browser) -> None:
    streams = [b"data: 1\n\ndata: 2\n", b"data: 1\n\ndata: 2", b"data: 1\n\ndata: 2\n\n"]
    assert browser.run(streams) == [[("message", "1", "")], [("message", "1", "")], [("message", "1", ""), ("message", "2", "")]]  # fmt: skip
    for data in streams[:2]:
        capture = read_sse(data, "eventsource")
        assert [f.data for f in capture.frames] == [b"1", b"2"]
        assert not capture.ended_cleanly and capture.problems[-1].kind == "unterminated-event"
    assert read_sse(streams[2], "eventsource").ended_cleanly  # the near miss: the blank line is there


def test_json_data_lines_without_blank_lines_are_one_event_in_the_browser_a_frame_each_here(browser: Browser) -> None:
    streams = [b'data: {"a": 1}\ndata: {"b": 2}\n\n', b"data: 1\ndata: 2\n\n"]
    assert browser.run(streams) == [[("message", '{"a": 1}\n{"b": 2}', "")], [("message", "1\n2", "")]]
    split = read_sse(streams[0], "eventsource")
    assert [f.value for f in split.frames] == [{"a": 1}, {"b": 2}]
    assert [p.kind for p in split.problems] == ["data-lines-not-separated"]
    near_miss = read_sse(streams[1], "eventsource")  # numbers that each parse are one event's data
    assert [f.data for f in near_miss.frames] == [b"1\n2"] and near_miss.problems == []


def test_a_json_object_without_data_prefixes_is_ignored_by_the_browser_one_frame_here(browser: Browser) -> None:
    streams = [
        b'data: {"a": 1}\n\n{\n  "error": {"code": 499}\n}\n',
        b'data: {"a": 1}\n\n{\n  "error": 499\nnot json\n',  # near miss: not one object, each line ignored
    ]
    assert browser.run(streams) == [[("message", '{"a": 1}', "")], [("message", '{"a": 1}', "")]]
    read = read_sse(streams[0], "eventsource")
    assert [f.value for f in read.frames] == [{"a": 1}, {"error": {"code": 499}}]
    assert [p.kind for p in read.problems] == ["unprefixed-json"]
    near_miss = read_sse(streams[1], "eventsource")
    assert [f.value for f in near_miss.frames] == [{"a": 1}]
    assert {p.kind for p in near_miss.problems} == {"unknown-sse-field"}


def test_the_browser_carries_the_last_event_id_where_a_frame_gives_its_own(browser: Browser) -> None:
    data = b"id: 7\ndata: 1\n\ndata: 2\n\nid: 8\n\ndata: 3\n\nid: a\0b\ndata: 4\n\nid\ndata: 5\n\n"
    assert browser.run([data]) == [
        [
            ("message", "1", "7"),
            ("message", "2", "7"),
            ("message", "3", "8"),
            ("message", "4", "8"),
            ("message", "5", ""),
        ]
    ]
    assert [f.sse_id for f in read_sse(data, "eventsource").frames] == ["7", None, None, None, ""]


def test_chromium_reads_a_line_end_right_after_the_bom_as_part_of_the_next_line(browser: Browser) -> None:
    streams = [BOM + b"\ndata: 1\n\ndata: 2\n\n", BOM + b"\r\ndata: 1\n\n", BOM + b"data: 1\n\n", b"\ndata: 1\n\n"]
    # the first: "\ndata: 1" is one line, no field; the second: "\r" alone is one line, no field, and
    # "data: 1" follows; the near misses: no line end after the BOM, no BOM
    assert browser.run(streams) == [[("message", "2", "")], [("message", "1", "")], [("message", "1", "")], [("message", "1", "")]]  # fmt: skip
    # the reader follows the spec: the BOM is dropped and the line end ends a (blank) line
    assert [f.data for f in read_sse(streams[0], "eventsource").frames] == [b"1", b"2"]
