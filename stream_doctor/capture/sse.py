"""Raw Server-Sent Events text, as a client receives it (what ``curl -N`` saves).

Parsing follows the WHATWG EventSource rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation),
with one deliberate deviation: a last event whose terminating blank line is missing is still
dispatched, and reported, because a cut stream is exactly what a user wants diagnosed.

"""

from __future__ import annotations

import re

import orjson

from stream_doctor.capture._text import BOM, is_utf8, json_error, split_lines, uniform_line_end
from stream_doctor.capture.base import NOT_JSON, Capture, Frame, InputProblem, Pos
from stream_doctor.gcpause import no_gc

_KNOWN_FIELDS = (b"data", b"event", b"id", b"retry")


# The shape nearly every provider sends: an optional `event:` line and an optional `id:` line, in
# either order (sse-starlette writes id first), then one `data:` line and a blank line. Matching
# that whole, in C, instead of walking its lines in Python, makes the whole read 5-10% faster;
# any other block goes to the line parser. The spec's "one optional space after the
# colon" is the ` ?`; an id holding NUL is ignored by the spec, so it is left to the line parser.
def _simple_event(eol: bytes) -> re.Pattern[bytes]:
    value = b"([^\r\n]*)"
    identifier = b"([^\r\n\0]*)"
    event = b"event: ?" + value + eol
    sse_id = b"id: ?" + identifier + eol
    return re.compile(
        b"(?:" + event + b"(?:" + sse_id + b")?|" + sse_id + b"(?:" + event + b")?)?data: ?" + value + eol + eol
    )


_SIMPLE_EVENT = {b"\n": _simple_event(b"\n"), b"\r\n": _simple_event(b"\r\n")}


def _sniff(head: bytes) -> tuple[int, str]:
    """Score and, when 0, why: the first field line must be one of the SSE fields."""
    comments = 0
    # The first 16 KiB are plenty to find the first field line, and splitting all of the head
    # would cost more than reading a small capture.
    for number, line in enumerate(split_lines(head.removeprefix(BOM)[:16384])[0], 1):
        if not line.strip():
            continue
        if line.startswith(b":"):
            comments += 1
            continue
        name = line.partition(b":")[0]
        if name in _KNOWN_FIELDS:
            return 90, ""
        shown = name[:20].decode("utf-8", "replace")
        return 0, f"line {number} starts with {shown!r}, not an 'event:'/'data:' field"
    if comments:
        return 20, ""  # only keep-alive comments so far: SSE, but weakly
    return 0, "no 'event:'/'data:' field lines"


class _Read:
    """One read in progress: the frames so far and what was noticed about the file."""

    __slots__ = ("frames", "problems", "unknown_fields", "event_names", "comments", "ended_cleanly")

    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self.problems: list[InputProblem] = []
        self.unknown_fields: set[bytes] = set()
        self.event_names: dict[bytes, str] = {}  # event names repeat: decode each once
        self.comments = 0
        self.ended_cleanly = True

    def simple_events(self, data: bytes, pos: int, line_end: bytes) -> None:
        """The hot path: consume whole simple events with one regex match each.

        Only used on valid UTF-8 with one kind of line end, so a match is exactly what the line
        parser would have produced. A block that does not match goes to ``lines``.
        """
        match = _SIMPLE_EVENT[line_end].match
        # Pos(...) goes through a Python-level __new__; tuple.__new__ builds the same Pos in C
        # (it is what NamedTuple._make does), which is 5% of this loop.
        new_tuple = tuple.__new__
        blank = line_end + line_end
        loads = orjson.loads
        decode_error = orjson.JSONDecodeError
        event_names = self.event_names
        frames = self.frames
        append = frames.append
        number = len(frames)
        line = 1
        size = len(data)
        while pos < size:
            m = match(data, pos)
            if m is None:
                # Hand the parser everything up to and including the next blank line, so that
                # no event is split between the two paths.
                end = data.find(blank, pos)
                end = size if end < 0 else end + len(blank)
                line = self.lines(data[pos:end], pos, line)
                number = len(frames)
                pos = end
                continue
            raw_event, raw_id, id_first, event_second, payload = m.groups()
            if raw_event is None:
                raw_event = event_second
            if raw_id is None:
                raw_id = id_first
            number += 1
            where = new_tuple(Pos, (number, line, pos))
            line += 2
            if raw_event is None:
                event = None
            else:
                line += 1
                event = event_names.get(raw_event)
                if event is None:
                    event = event_names[raw_event] = raw_event.decode()
            if raw_id is None:
                sse_id = None
            else:
                line += 1
                sse_id = raw_id.decode()
            try:
                append(Frame(where, payload, loads(payload), None, event, None, "event", sse_id))
            except decode_error as exc:
                append(Frame(where, payload, NOT_JSON, json_error(exc), event, None, "event", sse_id))
            pos = m.end()

    def lines(self, data: bytes, base_offset: int, base_line: int, utf8_ok: bool = True) -> int:
        """Parse ``data`` line by line, as the spec describes. Returns the next line number.

        ``data`` is the whole capture or a run of whole blocks from it; an event still open at
        its end is the capture's unterminated last event.
        """
        lines, starts = split_lines(data)
        last = len(lines)
        lines.append(b"")  # a blank line after the end flushes an unterminated last event
        loads = orjson.loads
        decode_error = orjson.JSONDecodeError
        frames = self.frames
        problems = self.problems
        event_names = self.event_names
        comments = 0

        # The event being built. ``first_data``/``more_data`` avoid a list per event in the usual
        # one-data-line case; ``block`` is the index of the event's first field line.
        first_data: bytes | None = None
        more_data: list[bytes] | None = None
        event: str | None = None
        sse_id: str | None = None
        block = 0

        for i, line in enumerate(lines):
            if line.startswith(b"data: "):
                if first_data is None:
                    first_data = line[6:]
                elif more_data is None:
                    more_data = [first_data, line[6:]]
                else:
                    more_data.append(line[6:])
                continue
            if line.startswith(b"event: "):
                raw = line[7:]
                event = event_names.get(raw)
                if event is None:
                    event = event_names[raw] = raw.decode("utf-8", "replace")
                continue
            if not line:
                if first_data is not None:
                    payload = first_data if more_data is None else b"\n".join(more_data)
                    where = Pos(len(frames) + 1, base_line + block, base_offset + starts[block])
                    try:
                        value = loads(payload)
                        error = None
                    except decode_error as exc:
                        value = NOT_JSON
                        error = json_error(exc)
                    frames.append(Frame(where, payload, value, error, event, None, "event", sse_id))
                    if i == last:
                        self.ended_cleanly = False
                        problems.append(
                            InputProblem(
                                "unterminated-event",
                                "the capture ends inside an event: the stream was cut",
                                where,
                            )
                        )
                    if not utf8_ok:
                        bad = next((j for j in range(block, i) if not is_utf8(lines[j])), None)
                        if bad is not None:
                            problems.append(
                                InputProblem("not-utf8", f"line {base_line + bad} is not valid UTF-8", where)
                            )
                elif event is not None:
                    # An event name but no data: the spec drops the block without dispatching
                    # it. At the end of the capture too; no frame was cut, so it ends cleanly.
                    where = Pos(len(frames) + 1, base_line + block, base_offset + starts[block])
                    problems.append(
                        InputProblem(
                            "event-without-data",
                            f"an 'event: {event}' block has no data lines; clients drop it",
                            where,
                        )
                    )
                first_data = more_data = event = sse_id = None
                block = i + 1
                continue
            if line[0] == 58:  # b":"
                comments += 1
                if block == i:
                    block = i + 1  # comments before an event are not part of where it starts
                continue

            # Everything the fast tests above did not catch: no space after the colon, no colon
            # at all, id/retry and unknown fields.
            name, _, value_bytes = line.partition(b":")
            if value_bytes.startswith(b" "):
                value_bytes = value_bytes[1:]
            if name == b"data":
                if first_data is None:
                    first_data = value_bytes
                elif more_data is None:
                    more_data = [first_data, value_bytes]
                else:
                    more_data.append(value_bytes)
            elif name == b"event":
                event = value_bytes.decode("utf-8", "replace")
            elif name == b"id":
                if b"\0" not in value_bytes:  # the spec ignores an id containing NUL
                    sse_id = value_bytes.decode("utf-8", "replace")
            elif name == b"retry":
                pass  # a reconnection delay: nothing to diagnose in a replay
            elif name not in self.unknown_fields:
                self.unknown_fields.add(name)
                shown = name.decode("utf-8", "replace")
                problems.append(
                    InputProblem(
                        "unknown-sse-field",
                        f"unknown SSE field {shown!r} (clients ignore it)",
                        Pos(len(frames) + 1, base_line + i, base_offset + starts[i]),
                    )
                )

        self.comments += comments
        return base_line + last


def read_sse(data: bytes, path: str, *, fast: bool = True) -> Capture:
    """Read an SSE capture. ``fast=False`` parses every block line by line (tests compare both)."""
    start = len(BOM) if data.startswith(BOM) else 0
    state = _Read()
    with no_gc():
        line_end = uniform_line_end(data) if fast else None
        utf8_ok = is_utf8(data)
        if line_end is not None and utf8_ok:
            state.simple_events(data, start, line_end)
        else:
            state.lines(data[start:] if start else data, start, 1, utf8_ok)
    return Capture(
        path=path,
        container=SseReader.name,
        size=len(data),
        frames=state.frames,
        problems=state.problems,
        comments=state.comments,
        ended_cleanly=state.ended_cleanly,
    )


class SseReader:
    """Reader for ``text/event-stream`` bodies."""

    name = "sse"
    title = "Server-Sent Events text"

    def sniff(self, head: bytes) -> int:
        return _sniff(head)[0]

    def reject_reason(self, head: bytes) -> str:
        """Why ``sniff`` gave 0, for the "could not recognise" message."""
        return _sniff(head)[1]

    def read(self, data: bytes, path: str) -> Capture:
        return read_sse(data, path)


READER = SseReader()
