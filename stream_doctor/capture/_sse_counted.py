"""The SSE lines the reader counts instead of keeping one by one (issue 31: small inputs stay small).

What is kept per class of line, whatever the capture holds:

- blank lines and comment lines (keep-alives): a count (``Capture.comments``). A piece of them
  alone (``chunks.sse_cut`` cuts after a comment line, between events or inside one) is counted in C
  by ``quiet``; one between events by the block reader without a call per line; a run inside an event
  carried across pieces (``_sse_open``) by a search a run, and only where it was is kept.
- lines of unknown fields: the first ``UNKNOWN_NAMES_REPORTED`` names each a problem where first
  met (their start, ``UNKNOWN_NAME_KEPT`` bytes, kept to report each once); past those, a tally of
  lines per name for at most ``UNKNOWN_NAMES_COUNTED`` names and a count of the lines beyond, told
  once at the end of the capture with the first few names (``UnknownFields.summary``): 500,000
  distinct names are one more finding, not 500,000, and none goes unsaid.
"""

from __future__ import annotations

from itertools import islice

from stream_doctor.capture._text import uniform_line_end
from stream_doctor.capture.base import InputProblem, Pos

#: How much of an unknown field's name is remembered (to report it once) and shown.
UNKNOWN_NAME_KEPT = 256
UNKNOWN_NAME_SHOWN = 40
#: Unknown field names reported one by one, each where it is first met.
UNKNOWN_NAMES_REPORTED = 10
#: Names past those whose lines are tallied one by one (the summary counts the lines of any others).
UNKNOWN_NAMES_COUNTED = 1000
#: Names the summary shows, with their counts.
UNKNOWN_NAMES_SHOWN = 5


def quiet(piece: bytes) -> tuple[int, int] | None:
    """How many lines, and how many of them comments, when ``piece`` holds only blank and comment lines,
    whole (a piece of keep-alives); None for any other piece.

    Counted in C (counts; or a split, and the least and greatest line, which start with ":" when every
    line that is not blank does), never a Python step per line: a gigabyte of blank lines or keep-alive
    comments takes seconds, and is not kept."""
    if piece[0] not in (58, 10, 13):
        return None  # the usual piece, starting with a field: nothing spent on it
    if piece[0] != 58 and not piece.translate(None, b"\r\n"):  # a table lookup a byte (strip: a search)
        if piece.find(b"\r") < 0:
            return len(piece), 0
        return piece.count(b"\n") + piece.count(b"\r") - piece.count(b"\r\n"), 0
    line_end = uniform_line_end(piece)
    if line_end is None and piece.find(b"\n") < 0:
        line_end = b"\r"  # CR line ends alone (chunks.sse_cut cuts after comment lines ended by a CR too)
    if line_end is None or not piece.endswith(line_end):
        return None
    count = piece.count(line_end)
    if piece[0] == 58 and piece.count(line_end + b":") == count - 1:
        return count, count  # comment lines alone: each line end but the last is followed by ":"
    lines = piece.split(line_end)
    lines.pop()  # after the last line end
    written = list(filter(None, lines))
    if not (b":" <= min(written) and max(written) < b";"):
        return None
    return len(lines), len(written)


def shown_name(name: bytes, whole: bool = True) -> str:
    """The start of a field name, as a finding quotes it (a "name" can be a whole line of junk); with its
    size when ``name`` is the whole of it, not the start that was kept."""
    if len(name) <= UNKNOWN_NAME_SHOWN:
        return name.decode("utf-8", "replace")
    return name[:UNKNOWN_NAME_SHOWN].decode("utf-8", "replace") + (f"… ({len(name):,} bytes)" if whole else "…")


class UnknownFields:
    """The unknown field names of one capture: the first few reported where first met, the rest tallied."""

    __slots__ = ("reported", "more", "more_lines", "first_more")

    def __init__(self) -> None:
        self.reported: set[bytes] = set()
        self.more: dict[bytes, int] = {}  # name's start → lines, for names past the reported ones
        self.more_lines = 0  # lines of those names, the untallied ones included
        self.first_more: Pos | None = None

    def add(self, name: bytes, where: Pos, problems: list[InputProblem], lines: int = 1) -> None:
        """``lines`` lines of an unknown field ``name``, the first at ``where``."""
        kept = name[:UNKNOWN_NAME_KEPT]
        if kept in self.reported:
            return
        if len(self.reported) < UNKNOWN_NAMES_REPORTED:  # the first reported; the others are that name's
            self.reported.add(kept)
            message = f"unknown SSE field {shown_name(name)!r} (clients ignore it)"
            problems.append(InputProblem("unknown-sse-field", message, where))
            return
        self.more_lines += lines
        if self.first_more is None:
            self.first_more = where
        tally = self.more.get(kept)
        if tally is not None:
            self.more[kept] = tally + lines
        elif len(self.more) < UNKNOWN_NAMES_COUNTED:
            self.more[kept] = lines

    def summary(self) -> InputProblem | None:
        """The lines of the names past the first few, told once (None when there were none)."""
        if not self.more_lines:
            return None
        tallied = sum(self.more.values())
        names = f"{len(self.more):,}" if tallied == self.more_lines else f"more than {len(self.more):,}"
        first = ", ".join(
            f"{shown_name(name, whole=False)!r} ({lines:,})"
            for name, lines in islice(self.more.items(), UNKNOWN_NAMES_SHOWN)
        )
        others = ", …" if len(self.more) > UNKNOWN_NAMES_SHOWN else ""
        return InputProblem(
            "unknown-sse-field",
            f"{self.more_lines:,} more lines of unknown SSE fields, {names} other names (clients ignore them); "
            f"past the first {UNKNOWN_NAMES_REPORTED} names, reported one by one, they are told together here, "
            f"lines per name: {first}{others}",
            self.first_more,
        )
