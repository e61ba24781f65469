"""The SSE line parser, as the WHATWG spec describes it: what ``sse`` reads of a capture that its fast path
(``sse._Read.simple_events``: a block that is exactly an ``event:`` and a ``data:`` line, or a lone
``data:`` line) does not take whole: ``id:`` lines, several data lines, comments among fields, bytes that
are not UTF-8, mixed line ends, a cut last block, an event carried across pieces (``_sse_open``).

``LineReader.lines`` walks the lines and builds each event; what a block's end means (a frame, data lines
not separated, a cut, a JSON body without ``data:`` prefixes, an event without data) is decided once a
block, by the methods after it. The reading's state (frames, problems, the unknown fields) is the one
``sse._Read`` adds its fast path and pieces to.
"""

from __future__ import annotations

import orjson

from stream_doctor.capture import _sse_counted as _counted
from stream_doctor.capture import _sse_open as _open
from stream_doctor.capture._text import is_utf8, is_utf8_cut, json_error, split_lines
from stream_doctor.capture.base import NOT_JSON, Frame, InputProblem, Pos
from stream_doctor.capture.chunks import SSE_FIELDS
from stream_doctor.capture.problem_facts import CutBeforeData

#: The unknown fields of a block that may be a JSON body without data: prefixes, told when it is not one;
#: False: the block cannot be (its first line is looked at once a block); None: not looked at yet.
Held = list[tuple[bytes, Pos]] | bool | None


class _Lines:
    """``data`` cut into lines (and a blank one after the end, which flushes a last event), with where each
    is in the capture."""

    __slots__ = ("lines", "starts", "at", "cut", "last", "base_offset", "utf8_ok")

    def __init__(self, data: bytes, base_offset: int, base_line: int, utf8_ok: bool, gaps: list[_open.Gap] | None):
        self.lines, self.starts = split_lines(data)
        self.last = len(self.lines)
        # a line's number: ``data`` is the capture's lines from ``base_line`` on, but for the comment runs an
        # event carried across pieces had taken out (``gaps``), which ``placed`` counts back in
        self.at = base_line.__add__ if not gaps else _open.placed(self.starts, gaps, base_line, len(data)).__getitem__
        # the index of a last line the capture stops inside, -1 when it ends with a line end
        self.cut = self.last - 1 if data and data[-1] not in (10, 13) else -1
        self.lines.append(b"")
        self.base_offset = base_offset
        self.utf8_ok = utf8_ok

    def pos(self, number: int, index: int) -> Pos:
        """Frame ``number`` at line ``index``."""
        return Pos(number, self.at(index), self.base_offset + self.starts[index])


class LineReader:
    """The frames read so far and what was noticed about the capture; ``lines`` parses a run of blocks."""

    __slots__ = ("frames", "before", "problems", "unknown_fields", "event_names", "comments", "ended_cleanly")

    def __init__(self, problems: list[InputProblem] | None = None) -> None:
        self.frames: list[Frame] = []  # the frames of the piece being read (and its FrameRuns, see sse)
        self.before = 0  # frames read from earlier pieces, and those the piece's runs hold beyond one entry
        self.problems: list[InputProblem] = [] if problems is None else problems
        self.unknown_fields = _counted.UnknownFields()
        self.event_names: dict[bytes, str] = {}  # event names repeat: decode each once
        self.comments = 0
        self.ended_cleanly = True

    def lines(
        self,
        data: bytes,
        base_offset: int,
        base_line: int,
        utf8_ok: bool = True,
        gaps: list[_open.Gap] | None = None,
        told: bool = False,
    ) -> int:
        """Parse ``data`` (the whole capture or a run of whole blocks from it) line by line, as the spec
        describes; the next line number. An event still open at its end is the capture's unterminated last
        event. When ``data`` stops inside its last line, the capture was cut there: a cut ``data:`` line still
        joins the event's data (the frame says what became of it), any other cut line is not read as a field
        (``e`` is the start of ``event:``, not an unknown field), and an event without a whole ``data:`` line
        is reported cut (``CutBeforeData``), never dispatched. With ``gaps``, ``data`` is an event carried
        across pieces (``_sse_open``) with its comment runs (and, ``told``, its unknown-field lines, already
        told) taken out: every line number and offset counts them back in."""
        text = _Lines(data, base_offset, base_line, utf8_ok, gaps)
        lines, cut = text.lines, text.cut
        event_names = self.event_names
        comments = 0
        # The event being built. ``first_data``/``more_data`` avoid a list per event in the usual
        # one-data-line case; ``block`` is the index of the event's first field line.
        first_data: bytes | None = None
        more_data: list[bytes] | None = None
        event: str | None = None
        sse_id: str | None = None
        block = 0
        held: Held = None
        body = _open.JsonBody()  # what the held lines would be: it ends them as an open event's does
        for i, line in enumerate(lines):
            if i == cut and not line.startswith(b"data:"):
                continue  # the cut start of a line: what field it was going to be is unknown
            if held and line and not body.takes(line):  # no JSON body: its lines are unknown fields, told now
                # (a blank line ends the event: no line of its body, as the open event's count has it)
                held = self._told(held)
            if line.startswith(b"data: "):
                value = line[6:]
            elif line.startswith(b"event: "):
                raw = line[7:]
                event = event_names.get(raw)
                if event is None:
                    event = event_names[raw] = raw.decode("utf-8", "replace")
                continue
            elif not line:
                self._ended(text, block, i, first_data, more_data, event, sse_id, held)
                first_data = more_data = event = sse_id = held = None
                block = i + 1
                continue
            elif line[0] == 58:  # b":"
                comments += 1
                if block == i:
                    block = i + 1  # comments before an event are not part of where it starts
                continue
            else:  # what the tests above did not catch: no space after the colon, no colon, id, retry, unknown
                name, _, value = line.partition(b":")
                if value.startswith(b" "):
                    value = value[1:]
                if name != b"data":
                    if name == b"event":
                        event = value.decode("utf-8", "replace")
                    elif name == b"id":
                        if b"\0" not in value:  # the spec ignores an id containing NUL
                            sse_id = value.decode("utf-8", "replace")
                    elif name != b"retry":  # a reconnection delay: nothing to diagnose in a replay
                        if held is None:  # a block that may be one JSON object without data: prefixes?
                            body = _open.JsonBody()
                            held = [] if not told and lines[block].lstrip()[:1] == b"{" and body.takes(line) else False
                        self._unknown(text, i, name, held, told)
                    continue
            if first_data is None:
                first_data = value
            elif more_data is None:
                more_data = [first_data, value]
            else:
                more_data.append(value)
        self.comments += comments
        return text.at(text.last)

    def _unknown(self, text: _Lines, i: int, name: bytes, held: Held, told: bool) -> None:
        """An unknown field's line: held while its block may be a JSON body, else told (unless ``told``).
        A "field name" can be a whole line of junk (a body of NULs has no colon): only its start is kept
        and shown, never copied, decoded and quoted whole."""
        where = text.pos(self.before + len(self.frames) + 1, i)
        if isinstance(held, list):
            held.append((name, where))  # told when the block ends, unless it is that object
        elif not told:
            self.unknown_fields.add(name, where, self.problems)

    def _told(self, held: Held) -> bool:
        """The held lines told as the unknown fields they are; False: the block holds no JSON body."""
        for name, where in held if isinstance(held, list) else ():
            self.unknown_fields.add(name, where, self.problems)
        return False

    def _ended(
        self,
        text: _Lines,
        block: int,
        i: int,
        first_data: bytes | None,
        more_data: list[bytes] | None,
        event: str | None,
        sse_id: str | None,
        held: Held,
    ) -> None:
        """The blank line ``i`` (or the end) ends the block from ``block``: its event dispatched, or why not."""
        if first_data is not None:
            self._dispatched(text, block, i, first_data if more_data is None else more_data, event, sse_id)
        elif i == text.last and (
            text.cut >= 0 or any(text.lines[j].partition(b":")[0] in SSE_FIELDS for j in range(block, i))
        ):
            self._cut_before_data(text, block, i)
        elif event is None and sse_id is None and held and self.unprefixed(text, block, i):
            return  # a JSON object written without data: prefixes, read as Google's clients read it
        elif event is not None:
            # An event name but no data: the spec drops the block without dispatching it.
            self.problems.append(
                InputProblem(
                    "event-without-data",
                    f"an 'event: {event}' block has no data lines: browsers' EventSource and "
                    "eventsource-parser (the AI SDK) drop it, as the SSE spec says, while the SSE "
                    "decoders of openai-python and anthropic-sdk-python (Stainless-generated) dispatch "
                    "it with empty data, which a json.loads of the data then fails on",
                    text.pos(self.before + len(self.frames) + 1, block),
                )
            )
        self._told(held)

    def _dispatched(
        self, text: _Lines, block: int, i: int, data: bytes | list[bytes], event: str | None, sse_id: str | None
    ) -> None:
        """The event of the block from ``block`` to ``i``, with its data line (or lines)."""
        payload = data if isinstance(data, bytes) else b"\n".join(data)
        where = text.pos(self.before + len(self.frames) + 1, block)
        try:
            value = orjson.loads(payload)
            error = None
        except orjson.JSONDecodeError as exc:
            value = NOT_JSON
            error = json_error(exc)
        unseparated = None if isinstance(data, bytes) or value is not NOT_JSON else _each_line_whole(data)
        cut = text.cut
        if unseparated is not None:
            # a cut last line that is not a data: line was not read: its lines end before it
            end = cut if i == text.last and cut >= 0 and not text.lines[cut].startswith(b"data:") else i
            self.unseparated(text, block, end, unseparated, event, sse_id)
        else:
            self.frames.append(Frame(where, payload, value, error, event, None, "event", sse_id))
        if i == text.last:
            self.ended_cleanly = False
            self.problems.append(
                InputProblem("unterminated-event", "the capture ends inside an event: the stream was cut", where)
            )
        if not text.utf8_ok:
            # a character the cut split at the end of the capture is the cut, not bad bytes
            lines = text.lines
            bad = next((j for j in range(block, i) if not (is_utf8_cut if j == cut else is_utf8)(lines[j])), None)
            if bad is not None:
                self.problems.append(InputProblem("not-utf8", f"line {text.at(bad)} is not valid UTF-8", where))

    def _cut_before_data(self, text: _Lines, block: int, i: int) -> None:
        """The capture ends inside a line, or inside an event (an event:, id: or retry: line) before any whole
        data line of it: the spec would drop the block unread, and so does this reader; the cut is what is
        reported, never the half-received field (SD003, not SD005). A last block of unknown fields alone (a
        JSON error body written without data: prefixes) began no event: those are SD005's."""
        where = text.pos(self.before + len(self.frames) + 1, block)
        cut = text.cut
        cut_line = text.lines[cut] if cut >= 0 else b""
        comment = block == cut and cut_line[:1] == b":"
        # only the cut line's start is kept: it may be megabytes of junk without a line end
        start = cut_line[: _counted.UNKNOWN_NAME_SHOWN].decode("utf-8", "replace")
        self.ended_cleanly = False
        ended = text.at(i) - 1
        self.problems.append(
            InputProblem(
                "unterminated-event",
                f"the capture ends inside an event, before its data (line {ended}): the stream was cut",
                where,
                facts=CutBeforeData(ended, cut >= 0, comment, start, len(cut_line)),
            )
        )

    def unprefixed(self, text: _Lines, block: int, end: int) -> bool:
        """A block of unknown fields alone that is one JSON object (a body written without ``data:``
        prefixes, as the Vertex AI and Gemini APIs write an error mid-stream): read as one frame, and its
        framing reported once, when it is; False (its unknown fields reported as they were) when not.

        google-genai reads such lines as Google's servers send them: ``HttpResponse._iter_response_stream``
        joins the lines that do not start with ``data: `` until their braces balance, and
        ``BaseApiClient.request_streamed`` raises ``APIError`` on the ``{"error": …}`` object; the Firebase
        SDKs' tests expect the same (an RPC error after the events before it). The SSE rules, and so the
        browsers' ``EventSource`` and eventsource-parser (the AI SDK), ignore every line of it.
        """
        lines, at = text.lines, text.at
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
        where = text.pos(self.before + len(self.frames) + 1, block)
        self.frames.append(Frame(where, payload, value))
        self.problems.append(
            InputProblem(
                "unprefixed-json",
                f"lines {where.line}-{at(end - 1)} are a JSON object written without data: prefixes: "
                "google-genai (HttpResponse._iter_response_stream) and the Firebase SDKs read it as the next "
                "chunk, as read here, while browsers' EventSource and eventsource-parser (the AI SDK) ignore "
                "every line of it, as the SSE rules say, and lose what it says",
                where,
            )
        )
        return True

    def unseparated(
        self, text: _Lines, block: int, end: int, values: list[object], event: str | None, sse_id: str | None
    ) -> None:
        """An event of several ``data:`` lines each of which is a whole JSON document (or ``[DONE]``),
        whose joined data is not: events written without the blank lines between them. A client that
        follows the SSE rules sees one event and cannot parse its data; one that reads ``data:`` lines
        (openai-php's ``StreamResponse``) sees one event a line. Each line is read as its own frame,
        and the framing is reported."""
        first = text.pos(self.before + len(self.frames) + 1, block)
        taken = iter(values)
        line_number = 0
        for j in range(block, end):
            name, _, payload = text.lines[j].partition(b":")
            if name != b"data":
                continue
            payload = payload[1:] if payload.startswith(b" ") else payload
            value = next(taken)
            line_number += 1
            where = text.pos(self.before + len(self.frames) + 1, j)
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
