"""One JSON value per line: bare provider events ("jsonl") and stream-doctor's envelope.

Bare JSONL is what SDK test suites and logging proxies save (the Vercel AI SDK's ``*.chunks.txt``,
Ollama's ``application/x-ndjson``); the envelope wraps each event with its timing and records
what the application did (see ``envelope.py`` and docs/envelope.md).
"""

from __future__ import annotations

import re

import orjson

from stream_doctor.capture import envelope
from stream_doctor.capture._text import BOM, json_error, split_lines
from stream_doctor.capture.base import NOT_JSON, Capture, CaptureError, Frame, InputProblem, Pos
from stream_doctor.capture.limits import check_bound, line_bound
from stream_doctor.gcpause import no_gc

# A first line longer than the sniffing head is cut; its start is all there is to go on.
_ENVELOPE_START = re.compile(rb'\s*\{\s*"sd"\s*:')
_LINE_END = re.compile(rb"\r\n|\r|\n")


def _first_line(head: bytes) -> tuple[int, bytes, bool] | None:
    """The first non-blank line of ``head``: its number, its bytes, and whether the head cut it.

    Found without splitting the whole head into lines: that would cost more than reading a
    small capture.
    """
    head = head.removeprefix(BOM)
    start = len(head) - len(head.lstrip(b" \t\r\n"))
    if start == len(head):
        return None
    number = len(_LINE_END.findall(head, 0, start)) + 1
    end = _LINE_END.search(head, start)
    if end is None:
        return number, head[start:], True
    return number, head[start : end.start()], False


def _sniff(head: bytes, *, envelope_only: bool) -> tuple[int, str]:
    if head.removeprefix(BOM).lstrip().startswith(b"["):
        return 0, "starts with '[' (a JSON array, not one value per line)"
    first = _first_line(head)
    if first is None:
        return 0, "no non-blank line"
    number, line, cut = first
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:  # a JSON object but for bytes that are not UTF-8: still JSONL, and the line gets SD004
            value = orjson.loads(line.decode("utf-8", "replace"))
        except orjson.JSONDecodeError:
            value = None
        if type(value) is not dict:
            if cut and line.lstrip().startswith(b"{"):
                if not envelope_only:
                    return 80, ""
                if _ENVELOPE_START.match(line):
                    return 100, ""
                return 0, f'line {number} is not an envelope record (no leading "sd" key)'
            return 0, f"line {number} is not a JSON object"
    if type(value) is not dict:
        return 0, f"line {number} is not a JSON object"
    if not envelope_only:
        return 80, ""
    if "sd" in value:
        return 100, ""
    return 0, f'line {number} is not an envelope record (no "sd" key)'


def _cut_last_line(
    data: bytes,
    lines: list[bytes],
    undecodable: int,
    frames: list[Frame],
    problems: list[InputProblem],
) -> bool:
    """True (and a problem noted) when the capture stops inside its last line: the stream was cut.

    That is: the last line has no line end and is not JSON (``undecodable`` is the index of the
    last line that failed to decode).
    """
    if undecodable < 0 or undecodable != len(lines) - 1 or data.endswith((b"\n", b"\r")):
        return False
    last = frames[-1]
    problems.append(
        InputProblem(
            "unterminated-event",
            f"the capture ends inside line {last.pos.line}: the stream was cut",
            last.pos,
        )
    )
    return True


def _appended(record: dict, line: bytes, where: Pos) -> Frame:  # type: ignore[type-arg]
    """An envelope record in a bare JSONL capture: an ``execute`` record the application appended
    (to an SDK's chunk log, say) is used as in an envelope; any other is reported at its line."""
    if record["sd"] == "execute":
        return envelope.to_frame(record, line, where)
    kind = record["sd"] if type(record["sd"]) is str else "?"
    return Frame(
        where,
        line,
        NOT_JSON,
        f"envelope: a {kind} record in a bare JSONL capture; only execute records may be appended "
        "(write an envelope for the rest, docs/envelope.md)",
    )


def read_jsonl(data: bytes, path: str) -> Capture:
    """One frame per non-blank line; a line that is not JSON is a frame with the reason."""
    start = len(BOM) if data.startswith(BOM) else 0
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    frames: list[Frame] = []
    problems: list[InputProblem] = []
    undecodable = -1
    new_tuple = tuple.__new__  # builds a Pos in C, skipping NamedTuple's Python-level __new__
    with no_gc():
        lines, starts = split_lines(data[start:] if start else data)
        for index, line in enumerate(lines):
            if not line:
                continue
            where = new_tuple(Pos, (len(frames) + 1, index + 1, start + starts[index]))
            try:
                value = loads(line)
            except decode_error as exc:
                if line.isspace():
                    continue
                frames.append(Frame(where, line, NOT_JSON, json_error(exc)))
                undecodable = index
                continue
            if b'"sd"' in line and type(value) is dict and "sd" in value:
                frames.append(_appended(value, line, where))
            else:
                frames.append(Frame(where, line, value))
    ended_cleanly = not _cut_last_line(data, lines, undecodable, frames, problems)
    return Capture(path, "jsonl", len(data), frames, problems=problems, ended_cleanly=ended_cleanly)


def read_envelope(data: bytes, path: str) -> Capture:
    """The header into ``Capture.header``, every other record into a frame (see ``envelope``)."""
    start = len(BOM) if data.startswith(BOM) else 0
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    to_frame = envelope.to_frame
    problems_of = envelope.problems_of
    frames: list[Frame] = []
    problems: list[InputProblem] = []
    header = None
    first = True
    undecodable = -1
    with no_gc():
        lines, starts = split_lines(data[start:] if start else data)
        for index, line in enumerate(lines):
            if not line or line.isspace():
                continue
            where = Pos(len(frames) + 1, index + 1, start + starts[index])
            try:
                record = loads(line)
            except decode_error as exc:
                frames.append(Frame(where, line, NOT_JSON, json_error(exc)))
                undecodable = index
                first = False
                continue
            if first and type(record) is dict and record.get("sd") == "header":
                first = False
                if envelope.check_record(record) is None:
                    if record["version"] != envelope.VERSION:
                        raise CaptureError(
                            f"envelope version {record['version']!r} is not supported "
                            f"(this stream-doctor reads version {envelope.VERSION})",
                            line=index + 1,
                        )
                    header = record
                    problems += problems_of(record, where)
                    continue
            first = False
            frames.append(to_frame(record, line, where))
            if type(record) is dict and "problems" in record:
                problems += problems_of(record, where)
    carried_cut = any(p.kind in envelope.CUT_KINDS for p in problems)
    ended_cleanly = not _cut_last_line(data, lines, undecodable, frames, problems) and not carried_cut
    return Capture(
        path,
        "envelope",
        len(data),
        frames,
        header=header,
        problems=problems,
        ended_cleanly=ended_cleanly,
    )


class JsonlReader:
    """Reader for bare JSONL: one provider event per line."""

    name = "jsonl"
    title = "JSON Lines, one provider event per line"

    def sniff(self, head: bytes) -> int:
        return _sniff(head, envelope_only=False)[0]

    def reject_reason(self, head: bytes) -> str:
        """Why ``sniff`` gave 0, for the "could not recognise" message."""
        return _sniff(head, envelope_only=False)[1]

    def read(self, data: bytes, path: str) -> Capture:
        check_bound(line_bound(data))
        return read_jsonl(data, path)


class EnvelopeReader:
    """Reader for stream-doctor's capture envelope (JSONL whose records carry an "sd" key)."""

    name = "envelope"
    title = "stream-doctor capture envelope (JSONL)"

    def sniff(self, head: bytes) -> int:
        return _sniff(head, envelope_only=True)[0]

    def reject_reason(self, head: bytes) -> str:
        """Why ``sniff`` gave 0, for the "could not recognise" message."""
        return _sniff(head, envelope_only=True)[1]

    def read(self, data: bytes, path: str) -> Capture:
        check_bound(line_bound(data))
        return read_envelope(data, path)


JSONL_READER = JsonlReader()
ENVELOPE_READER = EnvelopeReader()
