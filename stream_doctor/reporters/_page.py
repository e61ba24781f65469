"""The text reports' own renderer: lines of styled spans, wrapped to a width, as ANSI or plain text.

``replay``'s and ``check``'s terminal reports render through this instead of rich, whose console
and table cost most of a small replay's start-up (issue 12). It does what those reports need and
no more, the way rich did it so the reports look the same: spans with a style, lines wrapped at
the width behind an indent (a word longer than a line folded across lines), lines cut with "…",
tab stops every 8 cells, and a table with aligned columns that shrinks its widest column to fit.
Cell widths are rich's own (``rich.cells``: wide characters two cells, an emoji sequence joined
by ZWJ or widened by VS16 one grapheme, never cut in half), imported only for a text beyond
printable ASCII and the reports' own punctuation, so an ASCII report still starts without rich
(``tests/test_text_page.py`` compares them over every code point below U+3000). There is no markup and nothing is parsed out
of the text, so capture text cannot style itself; it still goes through ``_neutral.text`` before
it gets here.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Callable, Literal, Sequence

#: A piece of a line: its text alone (unstyled) or with a style, e.g. ``("failed", "bold red")``.
Span = str | tuple[str, str]
Overflow = Literal["fold", "ellipsis", "none"]

# The SGR parameters of the style words the reports use: attributes first, then the colour, as
# rich orders them ("bold red" is ESC[1;31m).
_ATTRIBUTES = {"bold": "1", "dim": "2", "italic": "3", "underline": "4"}
_COLOURS = {"red": "31", "green": "32", "yellow": "33", "cyan": "36"}
_WORD = re.compile(r"\s*\S+\s*")
_SGR: dict[str, str] = {}


def sgr(style: str) -> str:
    """The escape sequence that starts ``style`` (words from ``_ATTRIBUTES`` and ``_COLOURS``)."""
    found = _SGR.get(style)
    if found is None:
        words = style.split()
        codes = [code for word, code in _ATTRIBUTES.items() if word in words]
        codes += [_COLOURS[word] for word in words if word in _COLOURS]
        unknown = set(words) - set(_ATTRIBUTES) - set(_COLOURS)
        if unknown:
            raise ValueError(f"unknown style word {sorted(unknown)[0]!r}")
        found = _SGR[style] = f"\x1b[{';'.join(codes)}m" if codes else ""
    return found


#: Characters one cell wide for rich in every Unicode version it knows: printable ASCII and the
#: punctuation the reports print themselves, so that a report of ASCII text never imports rich
#: (the differential test checks every one of them against ``rich.cells.cell_len``).
_ONE_CELL = frozenset(map(chr, range(0x20, 0x7F))) | frozenset("·×§…—→")


def _narrow(text: str) -> bool:
    return (text.isascii() and text.isprintable()) or _ONE_CELL.issuperset(text)


def cells(text: str) -> int:
    """How many terminal cells ``text`` takes: ``rich.cells.cell_len``, which the reports agree with."""
    if _narrow(text):
        return len(text)
    return _rich_cells()[0](text)


@cache
def _rich_cells() -> tuple[Callable[[str], int], Callable[[str], tuple[list[tuple[int, int, int]], int]]]:
    # imported once, for text beyond ASCII: an import statement per call costs more than the count
    from rich.cells import cell_len, split_graphemes

    return cell_len, split_graphemes


def _graphemes(text: str) -> list[tuple[int, int, int]]:
    """``text``'s graphemes as rich divides them: (start, end, cells), a ZWJ sequence or a mark with its base one."""
    return _rich_cells()[1](text)[0]


def _cut(text: str, width: int) -> int:
    """The length of the longest prefix of ``text`` that fits in ``width`` cells (whole graphemes only)."""
    if _narrow(text):
        return min(len(text), width)
    used = 0
    for start, _end, size in _graphemes(text):
        used += size
        if used > width:
            return start
    return len(text)


class Page:
    """A text report being built: ``print`` lines into it, then ``text()``.

    ``width`` is the line width; ``colour`` whether styles become ANSI escape sequences (plain
    text otherwise). Every printed line ends with a line break.
    """

    def __init__(self, width: int, colour: bool) -> None:
        self.width = max(width, 1)
        self.colour = colour
        self._lines: list[str] = []

    def text(self) -> str:
        return "".join(self._lines)

    def blank(self) -> None:
        self._lines.append("\n")

    def print(self, *spans: Span, style: str = "", indent: int = 0, overflow: Overflow = "fold") -> None:
        """One line of spans (more where the text holds line breaks or is wrapped).

        ``style`` applies to the whole line under the spans' own styles; ``indent`` puts every
        line the text wraps onto that many cells in; ``overflow`` says what happens to a line
        wider than the room left: ``fold`` wraps it at spaces (folding a word longer than a
        line), ``ellipsis`` cuts it with "…", ``none`` leaves it as it is.
        """
        runs = [(s, style) if isinstance(s, str) else (s[0], _join(style, s[1])) for s in spans]
        room = max(self.width - indent, 1)
        pad = " " * indent
        for line in _split_lines(runs):
            plain = "".join(text for text, _ in line)
            if "\t" in plain:
                line = _expand_tabs(line)
                plain = "".join(text for text, _ in line)
            if overflow == "none":
                pieces = [line]
            elif overflow == "ellipsis":
                pieces = [_ellipsis(line, plain, room)]
            else:
                pieces = [_slice(line, start, end) for start, end in _wrap(plain, room)]
            for piece in pieces:
                self._lines.append(pad + self._styled(piece) + "\n")

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[bool]) -> None:
        """Columns two cells apart, headers in bold, numbers right-aligned (``right``), no rules or edges.

        When the table is wider than the page its widest columns shrink (rich's way: the widest
        first, down to the next widest) and their cells wrap within the column.
        """
        columns = len(headers)
        # each column's width with its padding: one cell each side between columns, none at the edges
        padding = [(0 if i == 0 else 1) + (0 if i == columns - 1 else 1) for i in range(columns)]
        natural = [max([cells(headers[i]), *(cells(row[i]) for row in rows)]) + padding[i] for i in range(columns)]
        widths = _fit(natural, self.width)
        for index, row in enumerate([headers, *rows]):
            column_lines = []
            for i, value in enumerate(row):
                room = max(widths[i] - padding[i], 1)
                # as rich's table columns: a word wider than the column is cut with "…", not folded
                column_lines.append([_cut_line(value[start:end], room) for start, end in _wrap(value, room, False)])
            for depth in range(max(len(lines) for lines in column_lines)):
                parts: list[tuple[str, str]] = []
                for i, lines in enumerate(column_lines):
                    value = lines[depth] if depth < len(lines) else ""
                    room = max(widths[i] - padding[i], 1)
                    if right[i]:
                        value = value.rstrip()
                    gap = " " * (room - cells(value))
                    cell = gap + value if right[i] else value + gap
                    left = " " if i else ""
                    parts.append((left + cell + (" " if i < columns - 1 else ""), "bold" if index == 0 else ""))
                self._lines.append(self._styled(parts).rstrip(" ") + "\n")

    def _styled(self, runs: list[tuple[str, str]]) -> str:
        if not self.colour:
            return "".join(text for text, _ in runs)
        out = []
        for text, style in _merged(runs):
            code = sgr(style) if style and text else ""
            out.append(f"{code}{text}\x1b[0m" if code else text)
        return "".join(out)


def _join(base: str, style: str) -> str:
    return f"{base} {style}" if base and style else base or style


def _merged(runs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for text, style in runs:
        if out and out[-1][1] == style:
            out[-1] = (out[-1][0] + text, style)
        elif text:
            out.append((text, style))
    return out


def _split_lines(runs: list[tuple[str, str]]) -> list[list[tuple[str, str]]]:
    lines: list[list[tuple[str, str]]] = [[]]
    for text, style in runs:
        first, *rest = text.split("\n")
        lines[-1].append((first, style))
        lines.extend([(piece, style)] for piece in rest)
    return lines


def _expand_tabs(line: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Tabs as spaces to the next multiple of 8 cells from the start of the line."""
    out = []
    column = 0
    for text, style in line:
        pieces = text.split("\t")
        built = []
        for number, piece in enumerate(pieces):
            if number:
                spaces = 8 - column % 8
                built.append(" " * spaces)
                column += spaces
            built.append(piece)
            column += cells(piece)
        out.append(("".join(built), style))
    return out


def _slice(line: list[tuple[str, str]], start: int, end: int) -> list[tuple[str, str]]:
    """The runs covering characters ``start`` to ``end`` of the line."""
    out = []
    offset = 0
    for text, style in line:
        stop = offset + len(text)
        if stop > start and offset < end:
            out.append((text[max(start - offset, 0) : end - offset], style))
        offset = stop
    return out


def _ellipsis(line: list[tuple[str, str]], plain: str, room: int) -> list[tuple[str, str]]:
    """The line cut to ``room`` cells, its last one "…" in the style of the character it replaces."""
    if cells(plain) <= room:
        return line
    keep = _cut(plain, room - 1)
    kept = _slice(line, 0, keep)
    filler = " " * (room - 1 - cells(plain[:keep]))  # half a wide character
    style = next((s for _, s in _slice(line, keep, keep + 1)), "")
    return [*kept, (filler, ""), ("…", style)]


def _cut_line(text: str, room: int) -> str:
    return "".join(piece for piece, _ in _ellipsis([(text, "")], text, room))


def _wrap(text: str, room: int, fold: bool = True) -> list[tuple[int, int]]:
    """Where the lines of ``text`` wrapped at ``room`` cells start and end, as rich's ``divide_line``.

    A word carries the spaces after it; a word wider than a line is folded across lines (or,
    without ``fold``, left whole on a line of its own); the spaces a line ends with are dropped
    where they pass the edge.
    """
    if not text:
        return [(0, 0)]
    breaks = [0]
    offset = 0
    for match in _WORD.finditer(text):
        start, word = match.start(), match.group(0)
        length = cells(word.rstrip())
        if room - offset >= length:
            offset += cells(word)
        elif length > room and not fold:
            if start:
                breaks.append(start)
            offset = cells(word)
        elif length > room:
            if start:
                breaks.append(start)
            offset = _fold(word, start, room, breaks)
        elif offset and start:
            breaks.append(start)
            offset = cells(word)
    spans = []
    for number, begin in enumerate(breaks):
        end = breaks[number + 1] if number + 1 < len(breaks) else len(text)
        line = text[begin:end]
        over = cells(line) - room
        if over > 0:
            end -= min(over, len(line) - len(line.rstrip(" ")))
        spans.append((begin, end))
    return spans


def _fold(word: str, start: int, room: int, breaks: list[int]) -> int:
    """Break ``word`` (at ``start`` in its text) into lines of ``room`` cells; the cells its last line takes."""
    if _narrow(word):
        cuts = range(start + room, start + len(word), room)
        breaks.extend(cuts)
        return start + len(word) - (cuts[-1] if cuts else start)
    used = 0
    for index, _end, width in _graphemes(word):
        if used + width > room and used:
            breaks.append(start + index)
            used = width
        else:
            used += width
    return used


def abbreviate(text: str, width: int) -> str:
    """``text`` in ``width`` cells, its middle given up for "…" when it is wider: the start and the
    end of an id, a tool name or a path are what tell it from its neighbours."""
    if cells(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    tail_cells = width // 2
    head = text[: _cut(text, width - 1 - tail_cells)]
    tail = text[len(text) - _cut(text[::-1], tail_cells) :]
    return head + "…" + tail


def _fit(widths: list[int], room: int) -> list[int]:
    """Column widths that fit in ``room``: the widest shrink toward the next widest, then all evenly."""
    excess = sum(widths) - room
    while excess > 0 and max(widths) > 0:
        widest = max(widths)
        second = max((w for w in widths if w != widest), default=0)
        widths = _reduce(excess, [1 if w == widest else 0 for w in widths], min(excess, widest - second), widths)
        excess = sum(widths) - room
    if excess > 0:
        widths = _reduce(excess, [1] * len(widths), None, widths)
    return widths


def _reduce(total: int, ratios: list[int], most: int | None, values: list[int]) -> list[int]:
    """Take ``total`` off ``values`` in proportion to ``ratios`` (at most ``most`` each, else up to each value)."""
    share = sum(ratios)
    out = []
    for ratio, value in zip(ratios, values, strict=True):
        if ratio and share:
            taken = min(value if most is None else most, round(ratio * total / share))
            out.append(value - taken)
            total -= taken
            share -= ratio
        else:
            out.append(value)
    return out
