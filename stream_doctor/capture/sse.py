"""Raw Server-Sent Events text, as a client receives it (what ``curl -N`` saves).

Parsing follows the WHATWG EventSource rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
every frame is an event a browser's ``EventSource`` dispatches, with its name, data and id, except
where this reader knowingly differs (``tests/capture/test_sse_eventsource.py`` compares it with
Chromium's on the fixtures, the corpus and generated framings, and lists these differences):

- A cut last event. The spec: "Once the end of the file is reached, any pending data must be
  discarded. (If the file ends in the middle of an event, before the final empty line, the
  incomplete event is not dispatched.)" This reader still gives an event that has a data line, with
  the data received, and reports the cut (``unterminated-event``, SD003), because a cut stream is
  exactly what a user wants diagnosed; the events before it are the browser's.
- Data lines that are each a whole JSON object (or ``[DONE]``) with no blank lines between them.
  The spec: "Append the field value to the data buffer, then append a single U+000A LINE FEED (LF)
  character to the data buffer", so a browser dispatches one event whose data is the lines joined by
  LF, which no JSON reader parses. This reader gives a frame per line and reports the framing
  (``data-lines-not-separated``, SD005).
- The id. ``Frame.sse_id`` is the id the event's own block set (None when it has no valid ``id``
  line), whereas a browser's ``lastEventId`` is the last one set before the event in any block: "The
  buffer does not get reset, so the last event ID string of the event source remains set to this
  value until the next time it is set by the server."

Chromium itself departs from the spec on a CR or LF right after the BOM, which Blink reads as the
first byte of the next line (the test lists it too); this reader follows the spec there.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import partial

import orjson

from stream_doctor.capture import _sse_counted as _counted
from stream_doctor.capture import _sse_open as _open
from stream_doctor.capture import runs as _runs
from stream_doctor.capture._sse_lines import LineReader
from stream_doctor.capture._text import (
    BOM,
    crlf_only,
    head_lines,
    is_utf8,
    json_error,
)
from stream_doctor.capture.base import NOT_JSON, Capture, Frame, InputProblem, Piece, Pos
from stream_doctor.capture.chunks import SSE_FIELDS, piece_bytes, pieces, slices, sse_cut
from stream_doctor.capture.limits import check_bound, event_bound
from stream_doctor.capture.starts.sse import NOT_FIELDS
from stream_doctor.util.gcpause import no_gc


def _sniff(head: bytes) -> tuple[int, str]:
    """Score and, when 0, why: the first field line must be one of the SSE fields.

    By the EventSource rules every line is a field and an unknown one is ignored, so lines before the
    first known field (` data: {…}` behind a space, as one OpenRouter recording starts; a stray
    ``hello``) do not make the body something else: a few of them lower the score, and the reader
    reports them (SD005). A line that starts like JSON or markup, or more than ``_STRAY`` unknown
    lines, says the file is another format."""
    comments = 0
    stray = 0
    spaced = True
    first_unknown: str | None = None
    # The first 16 KiB are plenty to find the first field line; lines are walked lazily because
    # splitting all of the head would cost more than reading a small capture.
    for number, line in _sniffed_lines(head.removeprefix(BOM)[:16384]):
        if not line.strip():
            continue
        if line.startswith(b":"):
            comments += 1
            continue
        name = line.partition(b":")[0]
        if name in SSE_FIELDS:
            if first_unknown is None:
                return 90, ""
            return (60, "") if spaced else (40, "")
        shown = name[:20].decode("utf-8", "replace")
        reason = f"line {number} starts with {shown!r}, not an 'event:'/'data:' field"
        first_unknown = first_unknown or reason
        stray += 1
        spaced = spaced and name.lstrip(b" \t") in SSE_FIELDS
        if stray > _STRAY or line.lstrip()[:1] in NOT_FIELDS:
            return 0, first_unknown
    if first_unknown is not None:
        return 0, first_unknown
    if comments:
        return 20, ""  # only keep-alive comments so far: SSE, but weakly
    return 0, "no 'event:'/'data:' field lines"


def _sniffed_lines(head: bytes) -> Iterator[tuple[int, bytes]]:
    """``head_lines`` with a lone CR ending a line too, as it does in an event stream: a capture written with
    CR line ends whose first line is an unknown field is one line to ``head_lines``."""
    for number, line, _ in head_lines(head):
        for part in line.split(b"\r") if b"\r" in line else (line,):
            yield number, part


#: How many unknown field lines may come before the first known one in a body still sniffed as SSE.
_STRAY = 4


class _Read(LineReader):
    """One read in progress: the frames so far and what was noticed about the file (``LineReader``, which
    parses what the fast path here does not take whole), read a piece at a time."""

    __slots__ = ("runs",)

    def __init__(self, problems: list[InputProblem] | None = None, runs: _runs.RunReading | None = None) -> None:
        super().__init__(problems)
        self.runs = runs

    def piece(self, piece: bytes, line: int, offset: int, fast: bool) -> int:
        """Read a piece of whole events (or the capture's last piece) at ``line``/``offset``; the next line."""
        quiet = _counted.quiet(piece)
        if quiet is not None:  # blank and comment lines alone: counted, nothing kept
            self.comments += quiet[1]
            return line + quiet[0]
        if fast:
            line_end = b"\n" if piece.find(b"\r") < 0 else b"\r\n"  # one memchr for the usual capture
            found = self.found_runs(piece, line_end)
            if line_end == b"\n" or _crlf_outside(piece, found):
                return self.events(piece, line_end, line, offset, found)
        return self.lines(piece, offset, line, is_utf8(piece))

    def found_runs(self, data: bytes, line_end: bytes) -> tuple[_runs.RunForm, list[_runs.Run]] | None:
        """The reading's form and its runs in ``data`` (``runs.find_runs``); None when it reads no runs.
        The form is taken first: the search stops reading runs (``form`` None) after too many templates."""
        reading = self.runs
        if reading is None or reading.form is None or not _runs.ENABLED:
            return None
        form = reading.form
        return form, list(_runs.find_runs(reading, data, 0, len(data), line_end))

    def carried(self, event: _open.OpenEvent, piece: bytes, last: bool) -> tuple[int, int] | None:
        """The next piece of an event still open: None while it goes on past ``piece``; else the event is
        read (to its blank line, or to the capture's end) and the next line and the bytes of ``piece`` it
        took are returned."""
        if not last:
            quiet = _counted.quiet(piece) if piece else None
            if quiet is not None and quiet[0] == quiet[1] and is_utf8(piece):  # comment lines alone: counted
                event.skip(quiet[0], len(piece))
                return None
        end = _open.blank_end(piece)
        if end < 0 and not last:
            event.add(piece)
            return None
        used = len(piece) if end < 0 else end
        event.add(piece[:used])
        data = bytes(event.text)
        self.comments += event.comments
        return self.lines(data, event.offset, event.line, is_utf8(data), event.gaps, bool(event.told)), used

    def tell(self, name: bytes, line: int, offset: int, count: int) -> None:
        """``count`` unknown field lines of an event carried across pieces (copies of one from ``line``), told as
        they are added (``_sse_open``)."""
        where = Pos(self.before + len(self.frames) + 1, line, offset)
        self.unknown_fields.add(name, where, self.problems, count)

    def events(
        self, data: bytes, line_end: bytes, line: int, offset: int, taken: tuple[_runs.RunForm, list[_runs.Run]] | None
    ) -> int:
        """``simple_events`` over a whole piece, with the runs ``found_runs`` found taken whole.

        Between runs (and for each run's head) the bytes are read frame by frame; each run of
        events that differ from their head only in the fragment becomes one ``FrameRun`` right after
        its head's frame (``capture/runs.py``). A run whose head did not read as one decoded frame,
        or whose fragments do not decode, is read frame by frame instead.
        """
        reading = self.runs
        if taken is None or reading is None:
            return self.simple_events(data, 0, line_end, line, offset)
        form, runs = taken
        frames = self.frames
        done = 0
        for head_start, head_end, head_match, found in runs:
            line = self.simple_events(data, done, line_end, line, offset + done, head_end)
            done = head_end
            head = frames[-1] if frames else None
            if head is None or head.pos.offset != offset + head_start or head.value is NOT_JSON:
                continue  # the head is not one decoded frame: its run is read frame by frame
            step = data.count(line_end, head_start, head_end)
            number = self.before + len(frames) + 1
            run_end = found.end
            rebuild = partial(self.rebuilt, data, head_end, run_end, line_end, line, offset + head_end, number)
            run = _runs.frame_run(form, head, head_match, found, (offset, number, line), step, rebuild)
            if run is None:
                continue  # a fragment does not decode: the run is read frame by frame, which says why
            frames.append(run)  # type: ignore[arg-type]
            self.before += len(found.literals) - 1
            reading.extra += len(found.literals) - 1
            line += step * len(found.literals)
            done = run_end
        return self.simple_events(data, done, line_end, line, offset + done)

    def rebuilt(
        self, data: bytes, start: int, end: int, line_end: bytes, line: int, offset: int, number: int
    ) -> list[Frame]:
        """The frames of ``data[start:end]`` (a run's events) as reading them without runs gives."""
        state = _Read([])
        state.before = number - 1
        state.event_names = self.event_names
        state.simple_events(data, start, line_end, line, offset, end)
        return state.frames

    def simple_events(
        self, data: bytes, pos: int, line_end: bytes, line: int = 1, offset: int | None = None, end: int | None = None
    ) -> int:
        """The hot path: cut the capture (one kind of line end) at its blank lines and take the commonest
        block whole: exactly an ``event:`` line and a ``data:`` line (Anthropic, Responses), or a lone
        ``data:`` line (OpenAI, Gemini), with valid UTF-8, read with ``startswith`` and ``find``. Every other
        block (an ``id:`` line, several data lines, comments, bytes that are not UTF-8, extra blank lines,
        the unterminated last block) goes, whole, to the spec's line parser (``_sse_lines``), so both
        paths agree by construction. ``bytes.split`` runs at memchr speed, faster than a regex a block."""
        eol = line_end
        blank = eol + eol
        step = len(eol)
        # Pos(...) goes through a Python-level __new__; tuple.__new__ builds the same Pos in C.
        new_tuple = tuple.__new__
        loads = orjson.loads
        decode_error = orjson.JSONDecodeError
        event_names = self.event_names
        append = self.frames.append
        before = self.before
        number = before + len(self.frames)
        offset = pos if offset is None else offset
        startswith = bytes.startswith
        blocks = (data[pos:end] if pos or end is not None else data).split(blank)
        rest = blocks.pop()  # after the last blank line: empty, unless the capture was cut
        colon_after_eol = eol + b":"
        for block in blocks:
            size = len(block) + 2 * step
            if not block:  # two more blank lines (a run of them): nothing to dispatch, nothing to keep
                line += 2
                offset += size
                continue
            if block[0] == 58 and block.count(colon_after_eol) == block.count(eol):  # comment lines alone
                count = block.count(eol) + 1
                self.comments += count
                line += count + 1
                offset += size
                continue
            frame = None  # the block's frame, read here, and its lines (with the blank one)
            if startswith(block, b"data: "):
                if block.find(eol) < 0:
                    payload = block[6:]
                    height = 2
                    try:
                        frame = Frame(new_tuple(Pos, (number + 1, line, offset)), payload, loads(payload))
                    except decode_error as exc:
                        if is_utf8(block):  # not JSON: a frame that says why; not UTF-8: the parser's
                            where = new_tuple(Pos, (number + 1, line, offset))
                            frame = Frame(where, payload, NOT_JSON, json_error(exc))
            elif startswith(block, b"event: "):
                end = block.find(eol, 7)
                if end > 0 and startswith(block, b"data: ", end + step) and block.find(eol, end + step) < 0:
                    raw_event = block[7:end]
                    event = event_names.get(raw_event)
                    if event is None and is_utf8(raw_event):
                        event = event_names[raw_event] = raw_event.decode()
                    if event is not None:
                        payload = block[end + step + 6 :]
                        height = 3
                        where = new_tuple(Pos, (number + 1, line, offset))
                        try:
                            frame = Frame(where, payload, loads(payload), None, event)
                        except decode_error as exc:
                            if is_utf8(payload):
                                frame = Frame(where, payload, NOT_JSON, json_error(exc), event)
            if frame is not None:
                number += 1
                append(frame)
                line += height
            else:  # not the common shape (or bytes that are not UTF-8, which the parser reports)
                line = self.lines(block + blank, offset, line, is_utf8(block))
                number = before + len(self.frames)
            offset += size
        return self.rest(rest, eol, line, offset) if rest else line

    def rest(self, rest: bytes, eol: bytes, line: int, offset: int) -> int:
        """What follows the last blank line of a run of blocks (the capture cut, or comment lines alone, as
        a piece cut after them ends: ``chunks.sse_cut``) at ``line``/``offset``; the next line."""
        count = rest.count(eol)
        if rest[0] == 58 and rest.endswith(eol) and rest.count(eol + b":") == count - 1:
            self.comments += count
            return line + count
        return self.lines(rest, offset, line, is_utf8(rest))


def _crlf_outside(data: bytes, found: tuple[_runs.RunForm, list[_runs.Run]] | None) -> bool:
    """Whether ``data`` ends its lines with CRLF alone, where the runs ``found`` (with CRLF line ends) need
    not be counted again: a run's events are its head's bytes but for groups that hold no CR or LF,
    so they end their lines as the head does, which is counted (a head with a group right after a CR
    is the exception: that CR pairs with the LF after the group only while the group is empty).
    Counting every byte three times was a fifth of a Gemini replay (whose runs are most of it)."""
    done = 0
    form, runs = found if found is not None else (None, [])
    groups = ("fragment", *form.free) if form is not None else ()
    for head_start, head_end, head_match, events in runs:
        if not crlf_only(data, done, head_end) or any(
            data[at - 1] == 13 for at in map(head_match.start, groups) if at > head_start
        ):
            return False
        done = events.end
    return crlf_only(data, done)


def read_sse(data: bytes, path: str, *, fast: bool = True) -> Capture:
    """Read an SSE capture. ``fast=False`` parses every block line by line (tests compare both).

    ``data`` is read in pieces as a file is (``chunks.pieces``): a body decoded inside a HAR file or a
    cassette that is mostly comments or blank lines is counted a piece at a time, not split whole."""
    capture = Capture(path=path, container=SseReader.name, size=len(data), frames=[])
    with no_gc():
        for batch in stream_sse(pieces(slices(data), sse_cut), capture, fast=fast):
            capture.frames += batch
    return capture


def stream_sse(
    pieces: Iterable[Piece],
    capture: Capture,
    *,
    fast: bool = True,
    runs: _runs.RunReading | None = None,
) -> Iterator[list[Frame]]:
    """The frames of an SSE capture read piece by piece (``chunks.pieces`` with ``chunks.sse_cut``: each
    piece but the last ends with a blank line or a comment line), a list per piece; what was noticed goes
    to ``capture`` (``problems`` as it is read; ``comments``, ``ended_cleanly`` and the unknown fields past
    the first few once the last piece is read: ``_sse_counted``).

    Each piece is read to its last blank line as a whole capture would be (the parser's state is empty
    after a blank line), continuing the frame numbers, lines and offsets of the pieces before it; a piece
    of blank and comment lines alone is only counted. What follows its last blank line is an event still
    open (``_sse_open``: its lines are carried to the pieces after it, its comment runs counted, not kept,
    until the blank line that ends it), or comment lines alone, counted. With ``runs``
    (``capture/runs.py``) the runs of its form come as FrameRuns; while the form is still to be
    said (``runs.pending``), pieces are read in steps of ``runs.HEAD_STEP`` bytes, so that the frames the
    provider is detected from are about all that is read without runs.
    """
    state = _Read(capture.problems, runs)
    line = 1
    offset = 0
    first = True
    carried: _open.OpenEvent | None = None
    if runs is not None:
        pieces = _runs.small_first(pieces, runs, sse_cut)
    for data, start, end, last in pieces:
        piece = piece_bytes(data, start, end)
        del data
        if first:
            first = False
            if piece.startswith(BOM):
                piece, offset = piece[len(BOM) :], len(BOM)
        if carried is not None:
            ended = state.carried(carried, piece, last)
            if ended is None:  # the event goes on past this piece
                offset += len(piece)
                continue
            (line, used), carried = ended, None
            offset += used
            piece = piece[used:]
        whole, rest = (piece, b"") if last else _open.split(piece)
        if whole:
            line = state.piece(whole, line, offset, fast)
            offset += len(whole)
        if rest:
            quiet = _counted.quiet(rest)
            if quiet is not None and quiet[0] == quiet[1]:  # comment lines alone, after the last event
                line += quiet[0]
                state.comments += quiet[1]
            else:
                carried = _open.OpenEvent(line, offset, state.tell)
                carried.add(rest)
            offset += len(rest)
        batch = state.frames
        if batch:
            state.before += len(batch)
            state.frames = []
            yield batch
        del piece, whole, rest, batch  # not held while the next piece is read and cut into frames
    capture.comments = state.comments
    capture.ended_cleanly = state.ended_cleanly
    more_unknown = state.unknown_fields.summary()
    if more_unknown is not None:
        capture.problems.append(more_unknown)


class SseReader:
    """Reader for ``text/event-stream`` bodies."""

    name = "sse"
    title = "Server-Sent Events text"
    reads_runs = True  # ``stream`` takes ``runs`` (capture/runs.py)

    def sniff(self, head: bytes) -> int:
        return _sniff(head)[0]

    def reject_reason(self, head: bytes) -> str:
        """Why ``sniff`` gave 0, for the "could not recognise" message."""
        return _sniff(head)[1]

    def read(self, data: bytes, path: str) -> Capture:
        check_bound(event_bound(data))
        return read_sse(data, path)

    def stream(
        self, pieces: Iterable[Piece], capture: Capture, runs: _runs.RunReading | None = None
    ) -> Iterator[list[Frame]]:
        """The frames a piece at a time (see ``stream_sse``); the engine's streaming replay reads them."""
        return stream_sse(pieces, capture, runs=runs)

    cut = staticmethod(sse_cut)


READER = SseReader()
