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

from collections.abc import Callable, Iterable, Iterator
from functools import partial

import orjson

from stream_doctor.capture import _sse_counted as _counted
from stream_doctor.capture import _sse_open as _open
from stream_doctor.capture import runs as _runs
from stream_doctor.capture._text import (
    BOM,
    head_lines,
    is_utf8,
    is_utf8_cut,
    json_error,
    split_lines,
    uniform_line_end,
)
from stream_doctor.capture.base import NOT_JSON, Capture, Frame, InputProblem, Pos
from stream_doctor.capture.chunks import SSE_FIELDS, pieces, slices, sse_cut
from stream_doctor.capture.limits import check_bound, event_bound
from stream_doctor.gcpause import no_gc
from stream_doctor.problems import CutBeforeData


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
        if stray > _STRAY or line.lstrip()[:1] in (b"{", b"[", b"<"):
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


class _Read:
    """One read in progress: the frames so far and what was noticed about the file."""

    __slots__ = (
        "frames", "before", "problems", "unknown_fields", "event_names", "comments", "ended_cleanly", "runs",
    )  # fmt: skip

    def __init__(self, problems: list[InputProblem] | None = None, runs: _runs.RunReading | None = None) -> None:
        self.frames: list[Frame] = []  # the frames of the piece being read (and its FrameRuns, see events)
        self.before = 0  # frames read from earlier pieces, and those the piece's runs hold beyond one entry
        self.problems: list[InputProblem] = [] if problems is None else problems
        self.unknown_fields = _counted.UnknownFields()
        self.event_names: dict[bytes, str] = {}  # event names repeat: decode each once
        self.comments = 0
        self.ended_cleanly = True
        self.runs = runs

    def piece(self, piece: bytes, line: int, offset: int, fast: bool) -> int:
        """Read a piece of whole events (or the capture's last piece) at ``line``/``offset``; the next line."""
        quiet = _counted.quiet(piece)
        if quiet is not None:  # blank and comment lines alone: counted, nothing kept
            self.comments += quiet[1]
            return line + quiet[0]
        line_end = uniform_line_end(piece) if fast else None
        if line_end is not None:
            return self.events(piece, line_end, line, offset)
        return self.lines(piece, offset, line, is_utf8(piece))

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

    def tell(self, name: bytes, line: int, offset: int) -> None:
        """An unknown field line of an event carried across pieces, told as it is added (``_sse_open``)."""
        where = Pos(self.before + len(self.frames) + 1, line, offset)
        self.unknown_fields.add(name, where, self.problems)

    def events(self, data: bytes, line_end: bytes, line: int, offset: int) -> int:
        """``simple_events`` over a whole piece, with the runs of the reading's form taken whole.

        Between runs (and for each run's head) the bytes are read frame by frame; each run of
        events that differ from their head only in the fragment becomes one ``FrameRun`` right after
        its head's frame (``capture/runs.py``). A run whose head did not read as one decoded frame,
        or whose fragments do not decode, is read frame by frame instead.
        """
        reading = self.runs
        if reading is None or reading.form is None or not _runs.ENABLED:
            return self.simple_events(data, 0, line_end, line, offset)
        form = reading.form
        frames = self.frames
        done = 0
        for head_start, head_end, _, matches in _runs.find_runs(reading, data, 0, len(data), line_end):
            line = self.simple_events(data, done, line_end, line, offset + done, head_end)
            done = head_end
            head = frames[-1] if frames else None
            if head is None or head.pos.offset != offset + head_start or head.value is NOT_JSON:
                continue  # the head is not one decoded frame: its run is read frame by frame
            fragments = _runs.decode(matches)
            if fragments is None:
                continue  # a fragment does not decode: the run is read frame by frame, which says why
            step = data.count(line_end, head_start, head_end)
            number = self.before + len(frames) + 1
            flat = _runs.positions(matches, head_end, offset, number, line, step)
            run_end = matches[-1].end()
            rebuild = partial(self.rebuilt, data, head_end, run_end, line_end, line, offset + head_end, number)
            frames.append(_runs.FrameRun(form, head, fragments, flat, rebuild, matches))  # type: ignore[arg-type]
            self.before += len(matches) - 1
            reading.extra += len(matches) - 1
            line += step * len(matches)
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
        """The hot path: cut the capture at its blank lines and take the commonest block whole.

        Used when the capture has one kind of line end. A block that is exactly an ``event:``
        line and a ``data:`` line (Anthropic, Responses), or a lone ``data:`` line (OpenAI,
        Gemini), with valid UTF-8, is read here with ``startswith`` and ``find``; every other
        block (an ``id:`` line, several data lines, comments, bytes that are not UTF-8, extra
        blank lines, the capture's unterminated last block) goes, whole, to the spec's line
        parser, so both paths agree by construction. ``bytes.split`` runs at memchr speed, which
        is what makes this faster than matching each block with a regex.
        """
        eol = line_end
        blank = eol + eol
        step = len(eol)
        # Pos(...) goes through a Python-level __new__; tuple.__new__ builds the same Pos in C.
        new_tuple = tuple.__new__
        loads = orjson.loads
        decode_error = orjson.JSONDecodeError
        event_names = self.event_names
        frames = self.frames
        append = frames.append
        before = self.before
        number = before + len(frames)
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
            if startswith(block, b"data: "):
                if block.find(eol) < 0:
                    payload = block[6:]
                    try:
                        value = loads(payload)
                    except decode_error as exc:
                        if is_utf8(block):  # not JSON: a frame that says why; not UTF-8: the parser's
                            number += 1
                            append(Frame(new_tuple(Pos, (number, line, offset)), payload, NOT_JSON, json_error(exc)))
                            line += 2
                            offset += size
                            continue
                    else:
                        number += 1
                        append(Frame(new_tuple(Pos, (number, line, offset)), payload, value))
                        line += 2
                        offset += size
                        continue
            elif startswith(block, b"event: "):
                end = block.find(eol, 7)
                if end > 0 and startswith(block, b"data: ", end + step) and block.find(eol, end + step) < 0:
                    raw_event = block[7:end]
                    event = event_names.get(raw_event)
                    if event is None and is_utf8(raw_event):
                        event = event_names[raw_event] = raw_event.decode()
                    if event is not None:
                        payload = block[end + step + 6 :]
                        try:
                            value = loads(payload)
                        except decode_error as exc:
                            if is_utf8(payload):
                                number += 1
                                where = new_tuple(Pos, (number, line, offset))
                                append(Frame(where, payload, NOT_JSON, json_error(exc), event))
                                line += 3
                                offset += size
                                continue
                        else:
                            number += 1
                            append(Frame(new_tuple(Pos, (number, line, offset)), payload, value, None, event))
                            line += 3
                            offset += size
                            continue
            # Not the common shape (or bytes that are not UTF-8, which the parser reports).
            line = self.lines(block + blank, offset, line, is_utf8(block))
            number = before + len(frames)
            offset += size
        if rest:
            count = rest.count(eol)
            if rest[0] == 58 and rest.endswith(eol) and rest.count(colon_after_eol) == count - 1:
                self.comments += count  # comment lines alone, as a piece cut after them ends (chunks.sse_cut)
                return line + count
            line = self.lines(rest, offset, line, is_utf8(rest))
        return line

    def lines(
        self,
        data: bytes,
        base_offset: int,
        base_line: int,
        utf8_ok: bool = True,
        gaps: list[_open.Gap] | None = None,
        told: bool = False,
    ) -> int:
        """Parse ``data`` line by line, as the spec describes. Returns the next line number.

        ``data`` is the whole capture or a run of whole blocks from it; an event still open at
        its end is the capture's unterminated last event. When ``data`` stops inside its last line
        (no line end), the capture was cut there: a cut ``data:`` line still joins the event's data
        (the frame then says what became of it), any other cut line is not read as a field at all
        (``e`` is the start of ``event:``, not an unknown field), and an event without a whole
        ``data:`` line when the capture ends is reported cut (``CutBeforeData``), never dispatched.
        With ``gaps``, ``data`` is an event carried across pieces (``_sse_open``) with its comment runs
        (and, ``told``, its unknown-field lines, already told) taken out: every line number and offset
        counts them back in.
        """
        before = self.before
        lines, starts = split_lines(data)
        last = len(lines)
        # a line's number: ``data`` is the capture's lines from ``base_line`` on, but for the comment runs an
        # event carried across pieces had taken out (``gaps``), which ``placed`` counts back in
        at = base_line.__add__ if not gaps else _open.placed(starts, gaps, base_line, len(data)).__getitem__
        # the index of a last line the capture stops inside, -1 when it ends with a line end
        cut = last - 1 if data and data[-1] not in (10, 13) else -1
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
        # the unknown fields of a block that starts with "{", told when it ends; False: the block does
        # not (its first line is looked at once a block, however many lines it has); None: not looked
        held: list[tuple[bytes, Pos]] | bool | None = None
        body = _open.JsonBody()  # what the held lines would be: it ends them as an open event's does

        for i, line in enumerate(lines):
            if i == cut and not line.startswith(b"data:"):
                continue  # the cut start of a line: what field it was going to be is unknown
            if held and not body.takes(line):  # no JSON body: its lines are unknown fields, told now
                for name, where in held:  # type: ignore[union-attr]
                    self.unknown_fields.add(name, where, problems)
                held = False
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
                    where = Pos(before + len(frames) + 1, at(block), base_offset + starts[block])
                    try:
                        value = loads(payload)
                        error = None
                    except decode_error as exc:
                        value = NOT_JSON
                        error = json_error(exc)
                    unseparated = None if more_data is None or value is not NOT_JSON else _each_line_whole(more_data)
                    if unseparated is not None:
                        # a cut last line that is not a data: line was not read: its lines end before it
                        end = cut if i == last and cut >= 0 and not lines[cut].startswith(b"data:") else i
                        self.unseparated(lines, starts, block, end, at, base_offset, unseparated, event, sse_id)
                    else:
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
                        # a character the cut split at the end of the capture is the cut, not bad bytes
                        bad = next(
                            (j for j in range(block, i) if not (is_utf8_cut if j == cut else is_utf8)(lines[j])),
                            None,
                        )
                        if bad is not None:
                            problems.append(InputProblem("not-utf8", f"line {at(bad)} is not valid UTF-8", where))
                elif i == last and (
                    cut >= 0 or any(lines[j].partition(b":")[0] in SSE_FIELDS for j in range(block, i))
                ):
                    # The capture ends inside a line, or inside an event (an event:, id: or retry:
                    # line) before any whole data line of it: the spec would drop the block unread,
                    # and so does this reader; the cut is what is reported, never the half-received
                    # field (SD003, not SD005). A last block of unknown fields alone (a JSON error
                    # body written without data: prefixes) began no event: those are SD005's.
                    where = Pos(before + len(frames) + 1, at(block), base_offset + starts[block])
                    cut_line = lines[cut] if cut >= 0 else b""
                    comment = block == cut and cut_line[:1] == b":"
                    # only the cut line's start is kept: it may be megabytes of junk without a line end
                    start = cut_line[: _counted.UNKNOWN_NAME_SHOWN].decode("utf-8", "replace")
                    self.ended_cleanly = False
                    problems.append(
                        InputProblem(
                            "unterminated-event",
                            f"the capture ends inside an event, before its data (line {at(i) - 1}): the stream was cut",
                            where,
                            facts=CutBeforeData(at(i) - 1, cut >= 0, comment, start, len(cut_line)),
                        )
                    )
                elif (
                    event is None
                    and sse_id is None
                    and held
                    and self.unprefixed(lines, starts, block, i, at, base_offset)
                ):
                    held = None  # a JSON object written without data: prefixes, read as Google's clients read it
                elif event is not None:
                    # An event name but no data: the spec drops the block without dispatching it.
                    where = Pos(before + len(frames) + 1, at(block), base_offset + starts[block])
                    problems.append(
                        InputProblem(
                            "event-without-data",
                            f"an 'event: {event}' block has no data lines: browsers' EventSource and "
                            "eventsource-parser (the AI SDK) drop it, as the SSE spec says, while the SSE "
                            "decoders of openai-python and anthropic-sdk-python (Stainless-generated) dispatch "
                            "it with empty data, which a json.loads of the data then fails on",
                            where,
                        )
                    )
                for name, where in held if isinstance(held, list) else ():
                    self.unknown_fields.add(name, where, problems)
                first_data = more_data = event = sse_id = held = None
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
            else:
                # a "field name" can be a whole line of junk (a body of NULs has no colon): only its
                # start is kept and shown, never copied, decoded and quoted whole
                where = Pos(before + len(frames) + 1, at(i), base_offset + starts[i])
                if held is None:  # a block that may be one JSON object without data: prefixes (unprefixed)?
                    body = _open.JsonBody()
                    held = [] if not told and lines[block].lstrip()[:1] == b"{" and body.takes(line) else False
                if isinstance(held, list):
                    held.append((name, where))  # told when the block ends, unless it is that object
                elif not told:
                    self.unknown_fields.add(name, where, problems)

        self.comments += comments
        return at(last)

    def unprefixed(
        self, lines: list[bytes], starts: list[int], block: int, end: int, at: Callable[[int], int], base_offset: int
    ) -> bool:
        """A block of unknown fields alone that is one JSON object (a body written without ``data:``
        prefixes, as the Vertex AI and Gemini APIs write an error mid-stream): read as one frame, and its
        framing reported once, when it is; False (its unknown fields reported as they were) when not.

        google-genai reads such lines as Google's servers send them: ``HttpResponse._iter_response_stream``
        joins the lines that do not start with ``data: `` until their braces balance, and
        ``BaseApiClient.request_streamed`` raises ``APIError`` on the ``{"error": …}`` object; the Firebase
        SDKs' tests expect the same (an RPC error after the events before it). The SSE rules, and so the
        browsers' ``EventSource`` and eventsource-parser (the AI SDK), ignore every line of it.
        """
        if not lines[block].lstrip().startswith(b"{") or at(end) - at(block) != end - block:
            return False  # not an object's first line, or comment lines among its lines (taken out: _sse_open)
        body = lines[block:end]
        if any(line[:1] == b":" or line.partition(b":")[0] in SSE_FIELDS for line in body):
            return False
        payload = b"\n".join(body)
        try:
            value = orjson.loads(payload)
        except orjson.JSONDecodeError:
            return False
        if not isinstance(value, dict):
            return False
        # the block's lines were held as they were read, not told as unknown fields: they are one object
        first_line = at(block)
        problems = self.problems
        where = Pos(self.before + len(self.frames) + 1, first_line, base_offset + starts[block])
        self.frames.append(Frame(where, payload, value))
        problems.append(
            InputProblem(
                "unprefixed-json",
                f"lines {first_line}-{at(end - 1)} are a JSON object written without data: prefixes: "
                "google-genai (HttpResponse._iter_response_stream) and the Firebase SDKs read it as the next "
                "chunk, as read here, while browsers' EventSource and eventsource-parser (the AI SDK) ignore "
                "every line of it, as the SSE rules say, and lose what it says",
                where,
            )
        )
        return True

    def unseparated(
        self,
        lines: list[bytes],
        starts: list[int],
        block: int,
        end: int,
        at: Callable[[int], int],
        base_offset: int,
        values: list[object],
        event: str | None,
        sse_id: str | None,
    ) -> None:
        """An event of several ``data:`` lines each of which is a whole JSON document (or ``[DONE]``),
        whose joined data is not: events written without the blank lines between them. A client that
        follows the SSE rules sees one event and cannot parse its data; one that reads ``data:`` lines
        (openai-php's ``StreamResponse``) sees one event a line. Each line is read as its own frame,
        and the framing is reported."""
        first = Pos(self.before + len(self.frames) + 1, at(block), base_offset + starts[block])
        taken = iter(values)
        line_number = 0
        for j in range(block, end):
            name, _, payload = lines[j].partition(b":")
            if name != b"data":
                continue
            payload = payload[1:] if payload.startswith(b" ") else payload
            value = next(taken)
            line_number += 1
            where = Pos(self.before + len(self.frames) + 1, at(j), base_offset + starts[j])
            joined = (line_number, len(values))
            self.frames.append(Frame(where, payload, value, None, event, None, "event", sse_id, joined=joined))
        self.problems.append(
            InputProblem(
                "data-lines-not-separated",
                f"{len(values)} data lines follow each other with no blank line between them: by the SSE rules "
                "they are one event whose data is the lines joined by newlines, which a client that follows "
                "them (openai-python's and openai-node's SSE decoders, the AI SDK's eventsource-parser) cannot "
                "parse as JSON; a client that reads each data: line as an event (openai-php) reads them one by "
                "one, as shown here",
                first,
            )
        )


def _each_line_whole(data_lines: list[bytes]) -> list[object] | None:
    """Each data line parsed on its own when every one is a whole JSON object or ``[DONE]`` (the payloads
    providers send), else None: data lines that merely each parse (``1`` and ``2``) are one event's data."""
    values: list[object] = []
    for line in data_lines:
        if line.strip() == b"[DONE]":
            values.append(NOT_JSON)
            continue
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(value, dict):
            return None
        values.append(value)
    return values


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
    pieces: Iterable[tuple[bytes, bool]],
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
    for piece, last in pieces:
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
        self, pieces: Iterable[tuple[bytes, bool]], capture: Capture, runs: _runs.RunReading | None = None
    ) -> Iterator[list[Frame]]:
        """The frames a piece at a time (see ``stream_sse``); the engine's streaming replay reads them."""
        return stream_sse(pieces, capture, runs=runs)

    cut = staticmethod(sse_cut)


READER = SseReader()
