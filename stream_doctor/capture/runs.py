"""Runs of a provider's argument-fragment event, read from the bytes without a Frame per event.

Most of a large capture is one event repeated: a fragment of the same call's arguments, in the
exact bytes the provider always sends, differing only in the fragment (and, for some providers, a
padding or obfuscation field). Reading those one by one (a Frame, a ``Pos``, a decoded dict each)
costs more than everything else a replay does. So the SSE reader (``capture/sse.py``) can
recognise such a run on the raw bytes and hand it on as one ``FrameRun``.

The contract, from the provider to the accumulator:

* A provider declares its canonical fragment event as a ``RunForm``: a regex (line ends written
  ``\\n``) for one whole event, whose group ``fragment`` is the fragment's JSON string body
  (``FRAGMENT``) and whose groups named ``free…`` may differ from event to event (padding,
  obfuscation). Every quantifier is possessive, so no input makes it backtrack.
* The reader reads the first event of a run like any other frame (the run's ``head``, a Frame in
  the batch). The run is the events right after it that are, byte for byte, the head outside its
  ``fragment`` and ``free`` groups: matched by a regex built from the head's own bytes, one
  anchored match per event, linear. Their fragments are decoded by one ``orjson.loads`` of an
  array of the raw string literals (escapes and UTF-8 checked as the event's own parse would);
  their positions (number, line, offset) follow arithmetically. Anything that is not such a run
  (another field, another order, whitespace, a bad escape, bytes that are not UTF-8) is read frame
  by frame, as without runs.
* An adapter translates a FrameRun as the events it stands for. Its events differ from the head
  only in their fragment, so where the adapter's per-frame fast path took the head (one fragment
  for key K, nothing else, no state changed but counts), it takes every event of the run the same
  way: the run extends the adapter's ``ArgsRun`` on K. Otherwise it translates ``run.frames()``,
  the Frames the reader would have made.

The engine asks for runs only for the hot path (no ``--timeline``, no client profiles, no kept
events), and only once the adapter is known (``Streamed.read_runs``); ``ENABLED`` switches them
off (the tests replay every capture both ways and compare the reports).
"""

from __future__ import annotations

import re
from array import array
from itertools import repeat
from typing import Callable, Iterable, Iterator

import orjson

from stream_doctor.capture.base import Frame, Pos

#: Private switch: False reads every event as a Frame (tests compare both ways).
ENABLED = True

#: A JSON string's body, tokenized: characters other than a quote, a backslash or a control
#: character, and JSON's escapes. Possessive: it never backtracks. What it cannot see (bytes that are
#: not UTF-8, a lone surrogate) orjson finds when it decodes the run, which is then read frame by frame.
FRAGMENT = rb'[^"\\\x00-\x1f]*+(?:\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})[^"\\\x00-\x1f]*+)*+'

#: How many run templates (a head's bytes around its fragment) one reading compiles at most; a
#: capture whose every run differs gets no more (it is read frame by frame, never slower than that).
MAX_TEMPLATES = 64

_new_tuple = tuple.__new__
_Match = re.Match


class RunForm:
    """A provider's canonical fragment event: ``event`` is a regex source for one whole event."""

    __slots__ = ("name", "source", "free", "_compiled")

    def __init__(self, name: str, source: bytes, free: dict[str, bytes] | None = None) -> None:
        """``source`` has a group ``fragment`` (``FRAGMENT``) and one group per key of ``free``, whose
        value is that group's regex source (it must match no quote, backslash or control character)."""
        self.name = name
        self.source = source
        self.free = free or {}
        self._compiled: dict[bytes, re.Pattern[bytes]] = {}

    def event(self, line_end: bytes) -> re.Pattern[bytes]:
        """The form for captures whose lines end with ``line_end``."""
        pattern = self._compiled.get(line_end)
        if pattern is None:
            pattern = self._compiled[line_end] = re.compile(self.source.replace(rb"\n", re.escape(line_end)))
        return pattern


class FrameRun:
    """The events right after ``head`` that differ from it only in their fragment (see the module).

    In a batch of frames it stands right after its head; ``kind`` "run" keeps every frame loop that
    looks for events (``kind == "event"``) off it. ``len(run)`` events, ``fragments`` decoded,
    ``positions`` as flat (number, line, offset) triples.
    """

    __slots__ = ("form", "head", "fragments", "positions", "matches", "_frames")

    kind = "run"
    t = None  # runs are read from captures that carry no times (``Streamed`` looks)

    def __init__(
        self,
        form: RunForm,
        head: Frame,
        fragments: list[str],
        positions: array[int],
        frames: Callable[[], list[Frame]],
        matches: list[re.Match[bytes]] | None = None,
    ) -> None:
        self.form = form
        self.head = head
        self.fragments = fragments
        self.positions = positions
        self.matches = matches or []  # each event's match: its ``fragment`` and ``free`` groups by name
        self._frames = frames

    def __len__(self) -> int:
        return len(self.fragments)

    @property
    def pos(self) -> Pos:
        """Where its last event starts."""
        return _new_tuple(Pos, self.positions[-3:])

    def frames(self) -> list[Frame]:
        """Its events as the Frames the reader makes without runs (for an adapter that cannot take it whole)."""
        return self._frames()

    def __repr__(self) -> str:
        return f"FrameRun({self.form.name}, {len(self)} events after {self.head.pos})"


class RunReading:
    """What a reading with runs shares with its reader: the form (None: none yet, or none at all),
    whether the engine still has to say (the reader then reads the first piece in small steps,
    so the frames the provider is detected from are all it reads without runs), and how many frames
    the runs held beyond one entry each (``Streamed`` counts frames)."""

    __slots__ = ("form", "pending", "extra", "templates", "failed")

    def __init__(self) -> None:
        self.form: RunForm | None = None
        self.pending = True
        self.extra = 0
        self.templates: dict[tuple[bytes, ...], re.Pattern[bytes]] = {}
        self.failed = 0  # templates not compiled because MAX_TEMPLATES were


def find_runs(
    reading: RunReading, data: bytes, start: int, end: int, line_end: bytes, events_per_line: bool = False
) -> Iterator[tuple[int, int, re.Match[bytes], list[re.Match[bytes]]]]:
    """Each run in ``data[start:end]`` (which starts and ends at event boundaries): ``(head start,
    head end, head match, the matches of the events after it)``, in order, never overlapping.
    Events end with a blank line (SSE), or with each line end (``events_per_line``: JSON Lines).

    The caller reads everything between runs (heads included) frame by frame, and may reject a run
    (its fragments do not decode): it is then read frame by frame too, and the search goes on after it.
    """
    form = reading.form
    if form is None:
        return
    search = form.event(line_end).search
    blank = line_end if events_per_line else line_end + line_end
    templates = reading.templates
    at = start
    while at < end:
        head = search(data, at, end)
        if head is None:
            return
        head_start, head_end = head.span()
        if head_start != start and not data.endswith(blank, start, head_start):
            at = head_start + 1  # not where an event starts (a field line of a longer event)
            continue
        spans = sorted((head.span(group), group) for group in ("fragment", *form.free) if head.start(group) >= 0)
        fixed: list[bytes] = []  # the head's bytes around its fragment and free parts
        done = head_start
        for (group_start, group_end), _ in spans:
            fixed.append(data[done:group_start])
            done = group_end
        fixed.append(data[done:head_end])
        if not data.startswith(fixed[0], head_end):  # the next event is not like it: no run here
            at = head_end
            continue
        key = (*fixed, *(name.encode() for _, name in spans))
        pattern = templates.get(key)
        if pattern is None:
            if len(templates) >= MAX_TEMPLATES:
                # A capture whose runs all differ (thousands of calls, each with its own index): the
                # rest of it is read frame by frame, without looking for runs at every event.
                reading.failed += 1
                reading.form = None
                return
            source = [re.escape(fixed[0])]
            for (_, name), after in zip(spans, fixed[1:], strict=True):
                group = FRAGMENT if name == "fragment" else form.free[name]
                source.append(b"(?P<" + name.encode() + b">" + group + b")")
                source.append(re.escape(after))
            pattern = templates[key] = re.compile(b"".join(source))
        # one anchored match per event, each where the last ended (``scanner`` is CPython's, typeshed lacks it)
        matches = list(iter(pattern.scanner(data, head_end, end).match, None))  # type: ignore[attr-defined]
        if not matches:
            at = head_end
            continue
        yield head_start, head_end, head, matches
        at = matches[-1].end()


def decode(matches: list[re.Match[bytes]]) -> list[str] | None:
    """The fragments of a run's events (group 1 of each match), or None when one does not decode."""
    literals = list(map(_Match.group, matches, repeat("fragment")))
    try:
        fragments = orjson.loads(b'["' + b'","'.join(literals) + b'"]')
    except orjson.JSONDecodeError:
        return None
    return fragments if len(fragments) == len(matches) else None


def positions(
    matches: list[re.Match[bytes]], head_end: int, base: int, number: int, line: int, step: int
) -> array[int]:
    """The flat (number, line, offset) triples of a run's events: the first is frame ``number`` at
    ``line`` and byte ``base + head_end``; each takes ``step`` lines."""
    count = len(matches)
    flat = array("q", bytes(24 * count))
    flat[0::3] = array("q", range(number, number + count))
    flat[1::3] = array("q", range(line, line + step * count, step))
    starts = array("q", map(base.__add__, map(_Match.end, matches)))
    starts.pop()
    starts.insert(0, base + head_end)
    flat[2::3] = starts
    return flat


#: While the engine has not said which runs to read, pieces are read this many bytes at a time.
HEAD_STEP = 16 * 1024


def small_first(
    pieces: Iterable[tuple[bytes, bool]], reading: RunReading, cut: Callable[[bytes, int], int]
) -> Iterator[tuple[bytes, bool]]:
    """``pieces`` re-cut into steps of at most ``HEAD_STEP`` bytes (where ``cut`` says a frame may end)
    while ``reading`` is pending. Each step is sliced from where the last ended, never by copying the
    rest of the piece: a capture that gives no frames (a gigabyte of blank lines) keeps the engine
    waiting to the end, and copying the rest each step made every 1 MiB piece 64 MiB of copies."""
    for piece, last in pieces:
        start = 0
        while reading.pending and len(piece) - start > HEAD_STEP:
            end = cut(piece[start : start + HEAD_STEP], 0)
            if not end:
                break
            yield piece[start : start + end], False
            start += end
        yield piece[start:] if start else piece, last
