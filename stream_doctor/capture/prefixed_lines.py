"""Line-prefixed parts: ``TYPE_ID:JSON`` per line, the Vercel AI SDK's data stream protocol (v4 and earlier).

Each line is one part: a one-character type id, a colon, and a JSON value (``0:"Hello"``,
``9:{"toolCallId":…}``), sent as ``text/plain`` with the header ``x-vercel-ai-data-stream: v1``
(vercel/ai ``content/docs/04-ai-sdk-ui/50-stream-protocol.mdx`` at 0bd5bc6). The type id becomes
the frame's ``event``, the JSON its value, so the provider adapter reads it the way it reads a
named SSE event.
"""

from __future__ import annotations

import orjson

from stream_doctor.capture._text import BOM, head_lines, json_error, split_lines
from stream_doctor.capture.base import NOT_JSON, Capture, Frame, InputProblem, Pos
from stream_doctor.capture.limits import check_bound, line_bound
from stream_doctor.capture.starts.prefixed import PREFIX
from stream_doctor.util.gcpause import no_gc


def _sniff(head: bytes) -> tuple[int, str]:
    for number, line, cut in head_lines(head.removeprefix(BOM)[:16384]):
        if not line.strip():
            continue
        match = PREFIX.match(line)
        if match is None:
            return 0, f"line {number} does not start with a one-character type id and ':'"
        rest = line[match.end() :]
        try:
            orjson.loads(rest)
        except orjson.JSONDecodeError:
            if not cut or len(head) < 16384:  # a line cut by the sniffing head may not parse
                return 0, f"line {number} has a type id but no JSON after it"
        return 85, ""
    return 0, "no non-blank line"


class PrefixedLinesReader:
    """Reader for ``TYPE_ID:JSON`` lines (AI SDK data stream protocol)."""

    name = "prefixed"
    title = "line-prefixed parts, TYPE_ID:JSON per line (Vercel AI SDK data stream v4)"

    def sniff(self, head: bytes) -> int:
        return _sniff(head)[0]

    def reject_reason(self, head: bytes) -> str:
        """Why ``sniff`` gave 0, for the "could not recognise" message."""
        return _sniff(head)[1]

    def read(self, data: bytes, path: str) -> Capture:
        check_bound(line_bound(data))
        start = len(BOM) if data.startswith(BOM) else 0
        loads = orjson.loads
        decode_error = orjson.JSONDecodeError
        match = PREFIX.match
        frames: list[Frame] = []
        problems: list[InputProblem] = []
        last_bad = -1
        with no_gc():
            lines, starts = split_lines(data[start:] if start else data)
            for index, line in enumerate(lines):
                if not line or line.isspace():
                    continue
                where = Pos(len(frames) + 1, index + 1, start + starts[index])
                prefix = match(line)
                if prefix is None:
                    frames.append(Frame(where, line, NOT_JSON, "not a TYPE_ID:JSON part (no type id prefix)"))
                    last_bad = index
                    continue
                payload = line[prefix.end() :]
                event = prefix.group(1).decode()
                try:
                    frames.append(Frame(where, payload, loads(payload), None, event))
                except decode_error as exc:
                    frames.append(Frame(where, payload, NOT_JSON, json_error(exc), event))
                    last_bad = index
        ended_cleanly = True
        if frames and last_bad == len(lines) - 1 and not data.endswith((b"\n", b"\r")):
            ended_cleanly = False
            problems.append(
                InputProblem(
                    "unterminated-event",
                    f"the capture ends inside line {frames[-1].pos.line}: the stream was cut",
                    frames[-1].pos,
                )
            )
        return Capture(path, self.name, len(data), frames, problems=problems, ended_cleanly=ended_cleanly)


READER = PrefixedLinesReader()
