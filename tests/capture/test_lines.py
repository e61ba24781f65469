"""``split_lines``, the line cutting every line-oriented reader shares, against ``bytes.splitlines``.

Lines of a capture with one line end are cut by a ``find`` each while they are long and by
``bytes.split`` once they turn short; either way the lines and their byte offsets must be what
Python's own ``splitlines`` reads (LF, CR and CRLF end a line; a final line end starts no line).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from stream_doctor.capture._text import split_lines


def _reference(data: bytes) -> tuple[list[bytes], list[int]]:
    kept = data.splitlines(keepends=True)
    starts, at = [], 0
    for line in kept:
        starts.append(at)
        at += len(line)
    return data.splitlines(), starts


def _line(size: int) -> bytes:
    return (b'{"k":"' + b"x" * size + b'"}')[: max(size, 0)]


_SIZES = st.one_of(st.integers(0, 40), st.integers(400, 3000))


@settings(max_examples=300, deadline=None)
@given(
    runs=st.lists(st.tuples(_SIZES, st.integers(1, 90)), max_size=6),  # runs of lines of one size
    line_end=st.sampled_from([b"\n", b"\r\n", b"\r", b"mixed"]),
    final=st.booleans(),
)
def test_lines_and_offsets_are_what_splitlines_reads(runs: list[tuple[int, int]], line_end: bytes, final: bool) -> None:
    sizes = [size for size, times in runs for _ in range(times)]
    ends = [b"\n", b"\r\n", b"\r"]
    parts = []
    for number, size in enumerate(sizes):
        parts.append(_line(size))
        if number < len(sizes) - 1 or final:
            parts.append(ends[number % 3] if line_end == b"mixed" else line_end)
    data = b"".join(parts)
    assert split_lines(data) == _reference(data)
    # a piece inside the chunk it was read in (``chunks.pieces``): its lines, at their offsets in the chunk
    before, after = b'{"k":1}\r\n\r', b'\n{"k":2}\r'
    lines, starts = _reference(data)
    assert split_lines(before + data + after, len(before), len(before) + len(data)) == (
        lines,
        [start + len(before) for start in starts],
    )


def test_lines_that_turn_short_or_long_read_the_same() -> None:
    """Both ways of cutting, and the change from one to the other, within one piece."""
    long, short = _line(2000), _line(10)
    for lines in (
        [long] * 70 + [short] * 200,  # long, then over to split for the rest
        [short] * 200 + [long] * 70,  # split from the 16th line
        [long] * 64 + [short] * 64 + [b""] * 3,  # the change exactly at a check (every 16 lines), empty lines after it
        [long] * 63 + [short] * 66,
        # short lines split a block at a time, then sampled again: long lines after the first block
        # (an agent session's first turns, then its long requests), short ones again after them
        [short] * 30_000 + [long] * 70 + [short] * 30_000 + [b""] * 2,
    ):
        for end in (b"\n", b"\r\n"):
            for final in (b"", end):
                data = end.join(lines) + final
                assert split_lines(data) == _reference(data)
                lines_of, starts = _reference(data)
                within = split_lines(b"x" + end + data + b"y" * 9, 1 + len(end), 1 + len(end) + len(data))
                assert within == (lines_of, [start + 1 + len(end) for start in starts])


def test_an_empty_piece_and_one_line_end_hold_what_they_hold() -> None:
    assert split_lines(b"") == ([], [])
    assert split_lines(b"\n") == ([b""], [0])
    assert split_lines(b"a\n\n") == ([b"a", b""], [0, 2])
    assert split_lines(b"\r\n\r\n") == ([b"", b""], [0, 2])
