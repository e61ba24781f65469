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
  ``fragment`` and ``free`` groups: matched by a regex built from the head's own bytes, linear.
  Where only the fragment may differ and blank lines cut nothing but events apart, one match of
  that template repeated reads the whole run, which is then cut at its blank lines (no match
  object an event); else one anchored match per event. Their fragments are decoded by one
  ``orjson.loads`` of an array of the raw string literals (escapes and UTF-8 checked as the event's
  own parse would).
  Their positions (number, line, offset) follow arithmetically, and only a finding reads them: where
  no ``free`` group holds a byte and each literal is the one ``orjson.dumps`` writes for its fragment
  (no backslash in them, else one ``dumps`` of the run's fragments compared), each event's
  length is its template's plus its fragment's, and the run keeps a ``LazyRun`` that computes the
  positions from the fragments when asked (``Positions``); else the offsets are taken from the
  matches as they are read. Anything that is not such a run (another field, another order,
  whitespace, a bad escape, bytes that are not UTF-8) is read frame by frame, as without runs.
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
from itertools import accumulate, chain, repeat
from operator import getitem
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, NamedTuple, Sequence, cast

import orjson

from stream_doctor.capture.base import Frame, Piece, Pos

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

    __slots__ = ("name", "source", "free", "computed", "_compiled", "_prefixes")

    def __init__(self, name: str, source: bytes, free: dict[str, bytes] | None = None, computed: bool = True) -> None:
        """``source`` has a group ``fragment`` (``FRAGMENT``) and one group per key of ``free``, whose
        value is that group's regex source (it must match no quote, backslash or control character).
        ``computed``: a run's positions may be computed from its fragments when read (False for an
        adapter whose ``run_fragments`` rewrites them: they would be computed at once, at more cost)."""
        self.name = name
        self.source = source
        self.free = free or {}
        self.computed = computed
        self._compiled: dict[bytes, re.Pattern[bytes]] = {}
        self._prefixes: dict[bytes, bytes] = {}

    def event(self, line_end: bytes) -> re.Pattern[bytes]:
        """The form for captures whose lines end with ``line_end``."""
        pattern = self._compiled.get(line_end)
        if pattern is None:
            pattern = self._compiled[line_end] = re.compile(self.source.replace(rb"\n", re.escape(line_end)))
        return pattern

    def prefix(self, line_end: bytes) -> bytes:
        """The bytes every event of the form starts with (``literal_prefix`` of its source)."""
        prefix = self._prefixes.get(line_end)
        if prefix is None:
            prefix = self._prefixes[line_end] = literal_prefix(self.source).replace(b"\n", line_end)
        return prefix


def literal_prefix(source: bytes) -> bytes:
    """The literal bytes a regex ``source`` starts with, line ends written ``\\n``: its characters up to
    the first that is not one (a group, a class), less one that a quantifier follows; none when an
    alternation of the whole source may start otherwise."""
    if _alternates(source):
        return b""
    out = bytearray()
    at = 0
    while at < len(source):
        char = source[at : at + 1]
        if char == b"\\":
            escaped = source[at + 1 : at + 2]
            if escaped == b"n":
                literal = b"\n"
            elif escaped and not escaped.isalnum():
                literal = escaped
            else:
                break  # a class (``\\d``) or a reference: no longer literal
            at += 2
        elif char in b"()[]{}?*+|^$.":
            break
        else:
            literal = char
            at += 1
        if source[at : at + 1] in (b"?", b"*", b"+", b"{"):
            break  # this character may repeat or be missing
        out += literal
    return bytes(out)


class LazyRun(NamedTuple):
    """The positions of ``events`` consecutive fragments, read from a run of events whose every literal
    is its fragment's canonical JSON (see the module): event ``k`` is frame ``number + k`` at line
    ``line + step * k``, and starts where event ``k - 1`` ended, each event being ``fixed`` bytes
    beside its fragment's literal. ``at``: the index of its first fragment among its ``Positions``'."""

    at: int
    events: int
    number: int
    line: int
    step: int
    offset: int
    fixed: int
    last: int  # where its last event starts (an ``ArgsRun``'s ``pos``, read without the fragments)

    def flat(self, texts: Sequence[str]) -> array[int]:
        """Its (number, line, offset) triples; ``texts``: its fragments."""
        count = self.events
        flat = array("q", bytes(24 * count))
        flat[0::3] = array("q", list(range(self.number, self.number + count)))  # lists: see ``frame_run``
        flat[1::3] = array("q", list(range(self.line, self.line + self.step * count, self.step)))
        # an event's length: its fixed bytes and its literal, whose quotes ``dumps`` adds (hence - 2)
        lengths = map((self.fixed - 2).__add__, map(len, map(orjson.dumps, texts[: count - 1])))
        flat[2::3] = array("q", list(accumulate(lengths, initial=self.offset)))
        return flat

    def moved(self, by: int) -> LazyRun:
        return self._replace(at=self.at + by)


if TYPE_CHECKING:
    _Flat = array[int]
else:
    _Flat = array


class Positions(_Flat):
    """Fragment positions as flat (number, line, offset) triples, but for the runs' (``lazy``), whose
    triples are computed from the fragments when asked (``flat``). An ``array("q")``: a fragment read
    alone is ``extend``-ed with its ``Pos`` at C speed; positions of another kind are ``add``-ed."""

    __slots__ = ("lazy", "lazy_count")

    lazy: list[LazyRun]  # in order, each at its fragments' place (``at``)
    lazy_count: int  # fragments in ``lazy``

    def __new__(cls, lazy: list[LazyRun] | None = None) -> Positions:
        # made in one call (a few are made for every turn): no ``__init__``, no ``super()``
        positions: Positions = array.__new__(cls, "q")  # type: ignore[assignment]
        positions.lazy = lazy or []
        positions.lazy_count = sum(run.events for run in lazy) if lazy else 0
        return positions

    def fragment_count(self) -> int:
        """How many fragments' positions it holds."""
        return len(self) // 3 + self.lazy_count

    def add(self, more: list[Pos] | array[int]) -> None:
        """Append ``more``: a list of ``Pos``, flat triples, or ``Positions`` (whose runs stay lazy)."""
        if isinstance(more, list):
            self.extend(chain.from_iterable(more))
            return
        if type(more) is Positions and more.lazy:
            at = self.fragment_count()
            self.lazy += [run.moved(at) for run in more.lazy]
            self.lazy_count += more.lazy_count
        self += more

    def add_run(self, run: LazyRun) -> None:
        self.lazy.append(run.moved(self.fragment_count()))
        self.lazy_count += run.events

    def flat(self, texts: Sequence[str]) -> array[int]:
        """Every triple, the runs' computed from their fragments (``texts``: every fragment, in order)."""
        if not self.lazy:
            return self
        out = array("q")
        done = 0  # fragments in ``out``
        taken = 0  # of ``self``'s own triples
        for run in self.lazy:
            alone = 3 * (run.at - done)
            out += self[taken : taken + alone]
            taken += alone
            out += run.flat(texts[run.at : run.at + run.events])
            done = run.at + run.events
        out += self[taken:]
        return out

    def last(self) -> Pos:
        """The last fragment's position."""
        lazy = self.lazy
        if lazy and lazy[-1].at + lazy[-1].events == self.fragment_count():
            run = lazy[-1]
            return Pos(run.number + run.events - 1, run.line + run.step * (run.events - 1), run.last)
        return _new_tuple(Pos, self[-3:])


class FrameRun:
    """The events right after ``head`` that differ from it only in their fragment (see the module).

    In a batch of frames it stands right after its head; ``kind`` "run" keeps every frame loop that
    looks for events (``kind == "event"``) off it. ``len(run)`` events, ``fragments`` decoded,
    ``positions`` theirs (computed when read where the fragments give them).
    """

    __slots__ = ("form", "head", "fragments", "positions", "matches", "_frames")

    kind = "run"
    t = None  # runs are read from captures that carry no times (``Streamed`` looks)

    def __init__(
        self,
        form: RunForm,
        head: Frame,
        fragments: list[str],
        positions: Positions,
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
        return self.positions.last()

    def triples(self) -> array[int]:
        """Its events' positions as flat (number, line, offset) triples (computed, if they are lazy)."""
        return self.positions.flat(self.fragments)

    def frames(self) -> list[Frame]:
        """Its events as the Frames the reader makes without runs (for an adapter that cannot take it whole)."""
        return self._frames()

    def __repr__(self) -> str:
        return f"FrameRun({self.form.name}, {len(self)} events after {self.head.pos})"


class Template(NamedTuple):
    """A run template, compiled from a head's bytes: ``event`` matches one event like it; ``events``,
    where only the fragment may differ and blank lines cut the events apart, all of a run's at once."""

    event: re.Pattern[bytes]
    events: re.Pattern[bytes] | None


class Found(NamedTuple):
    """The events of a run after its head: their fragments' literals, where the last starts and ends,
    and each one's match where a free group may differ (None: only the fragment can, no match is made)."""

    literals: list[bytes]
    last: int
    end: int
    matches: list[re.Match[bytes]] | None


#: A run ``find_runs`` found: its head's start and end, the head's match, the events after it.
Run = tuple[int, int, "re.Match[bytes]", Found]


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
        self.templates: dict[tuple[bytes, ...], Template] = {}
        self.failed = 0  # templates not compiled because MAX_TEMPLATES were


def find_runs(
    reading: RunReading, data: bytes, start: int, end: int, line_end: bytes, events_per_line: bool = False
) -> Iterator[Run]:
    """Each run in ``data[start:end]`` (which starts and ends at event boundaries): ``(head start,
    head end, head match, the events after it)``, in order, never overlapping.
    Events end with a blank line (SSE), or with each line end (``events_per_line``: JSON Lines).

    The caller reads everything between runs (heads included) frame by frame, and may reject a run
    (its fragments do not decode): it is then read frame by frame too, and the search goes on after it.
    """
    form = reading.form
    if form is None:
        return
    event, prefix = form.event(line_end), form.prefix(line_end)
    blank = line_end if events_per_line else line_end + line_end
    at = start
    while at < end:
        head = _next_event(event, prefix, data, at, end)
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
        template = _template(reading, form, fixed, [name for _, name in spans], blank)
        if template is None:
            return
        found = _events(template, fixed, data, head_end, end, blank)
        if found is None:
            at = head_end
            continue
        yield head_start, head_end, head, found
        at = found.end


def _alternates(source: bytes) -> bool:
    """Whether regex ``source`` has a ``|`` outside its groups and classes."""
    depth, in_class, at = 0, False, 0
    while at < len(source):
        char = source[at : at + 1]
        if char == b"\\":
            at += 1  # the escaped character is no operator
        elif in_class:
            in_class = char != b"]"
        elif char == b"[":
            in_class = True
            at += source[at + 1 : at + 2] == b"]"  # a ']' first in a class is one of its characters
        elif char in b"()":
            depth += 1 if char == b"(" else -1
        elif char == b"|" and depth == 0:
            return True
        at += 1
    return False


#: The shortest literal prefix of a form that ``_next_event`` finds before the regex tries.
DISTINCT = 16


def _next_event(event: re.Pattern[bytes], prefix: bytes, data: bytes, at: int, end: int) -> re.Match[bytes] | None:
    """``event.search(data, at, end)``, where the bytes every match starts with are found by
    ``bytes.find`` (memchr speed) and the regex tries only there: a search steps through the bytes
    one by one, and after a run come the events that restate its arguments (a third of a Responses
    stream's bytes, half a millisecond of search at 100 KB). A prefix shorter than ``DISTINCT``
    would start most events (``data: {``), each then one more call: the regex searches alone."""
    if len(prefix) < DISTINCT:
        return event.search(data, at, end)
    while True:
        at = data.find(prefix, at, end)
        if at < 0:
            return None
        found = event.match(data, at, end)
        if found is not None:
            return found
        at += 1


def _template(
    reading: RunReading, form: RunForm, fixed: list[bytes], names: list[str], blank: bytes
) -> Template | None:
    """The template of a head whose bytes are ``fixed`` around its groups ``names`` (built once a
    process, counted once a reading); None once a reading took MAX_TEMPLATES (it then stops looking
    for runs)."""
    key = (*fixed, *(name.encode() for name in names))
    template = reading.templates.get(key)
    if template is not None:
        return template
    if len(reading.templates) >= MAX_TEMPLATES:
        # A capture whose runs all differ (thousands of calls, each with its own index): the
        # rest of it is read frame by frame, without looking for runs at every event.
        reading.failed += 1
        reading.form = None
        return None
    whole = (blank, *key, *(form.free.get(name, b"") for name in names))  # all a template is built from
    template = _COMPILED.get(whole)
    if template is None:
        if len(_COMPILED) >= MAX_COMPILED:
            _COMPILED.clear()  # captures whose heads all differ (an id in each): no more kept than this
        template = _COMPILED[whole] = _compiled(form, fixed, names, blank)
    reading.templates[key] = template
    return template


#: Templates built in this process, by the bytes and groups they are built from (at most
#: MAX_COMPILED): escaping a head's bytes and finding its compiled regexes in ``re``'s cache cost
#: 60-120 µs a template, a fifth of a small replay, and every replay of one kind of capture (a test
#: suite's, a scan's, a server's) builds the same ones.
_COMPILED: dict[tuple[bytes, ...], Template] = {}
MAX_COMPILED = 256


def _compiled(form: RunForm, fixed: list[bytes], names: list[str], blank: bytes) -> Template:
    """The template of a head whose bytes are ``fixed`` around its groups ``names``, compiled."""
    source = [re.escape(fixed[0])]
    for name, after in zip(names, fixed[1:], strict=True):
        group = FRAGMENT if name == "fragment" else form.free[name]
        source.append(b"(?P<" + name.encode() + b">" + group + b")")
        source.append(re.escape(after))
    events = None
    if names == ["fragment"] and _cut_at_blanks(fixed[0], fixed[1], blank):
        events = re.compile(b"(?:" + re.escape(fixed[0]) + FRAGMENT + re.escape(fixed[1]) + b")*+")
    return Template(re.compile(b"".join(source)), events)


def _cut_at_blanks(before: bytes, after: bytes, blank: bytes) -> bool:
    """Whether events ``before`` + literal + ``after`` hold ``blank`` only at their end, however many
    follow each other and whatever their literals (which hold no line end): then cutting a run of them
    at each ``blank`` gives its events."""
    end = len(after) - len(blank)
    joined = after + before  # an event's end and the next one's start
    single = before + after  # an event of an empty literal
    return (
        joined.find(blank) == end and joined.find(blank, end + 1) < 0 and single.find(blank) == len(single) - len(blank)
    )


def _events(template: Template, fixed: list[bytes], data: bytes, head_end: int, end: int, blank: bytes) -> Found | None:
    """The run of events like its head right after ``head_end`` (None: not one).

    Where only the fragment differs, one match of the repeated template reads them all, and cutting
    them at the blank lines gives their literals: no match object an event, and the template's fixed
    bytes read by the regex once; else one anchored match per event, each where the last ended."""
    if template.events is not None:
        matched = template.events.match(data, head_end, end)  # it always matches, if only no event
        run_end = matched.end() if matched else head_end
        if run_end == head_end:
            return None
        events = data[head_end:run_end].split(blank)
        events.pop()  # the empty rest after the last event's blank
        cut = slice(len(fixed[0]), len(blank) - len(fixed[1]))  # an event's literal, between its fixed bytes
        literals = cast("list[bytes]", list(map(getitem, events, repeat(cut))))
        return Found(literals, run_end - len(blank) - len(events[-1]), run_end, None)
    # ``scanner`` is CPython's, typeshed lacks it
    matches = list(iter(template.event.scanner(data, head_end, end).match, None))  # type: ignore[attr-defined]
    if not matches:
        return None
    fragment = template.event.groupindex["fragment"]  # a group's number reads faster than its name
    literals = cast("list[bytes]", list(map(_Match.group, matches, repeat(fragment))))
    return Found(literals, matches[-1].start(), matches[-1].end(), matches)


def frame_run(
    form: RunForm,
    head: Frame,
    head_match: re.Match[bytes],
    found: Found,
    first: tuple[int, int, int],
    step: int,
    frames: Callable[[], list[Frame]],
) -> FrameRun | None:
    """The FrameRun of a run ``find_runs`` found after ``head`` (read as ``head_match``), or None when a
    fragment does not decode. ``first``: where the data searched starts in the file (its offset), and
    the frame number and line of the run's first event; each event takes ``step`` lines."""
    literals = found.literals
    text = b'["' + b'","'.join(literals) + b'"]'
    try:
        fragments = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None
    count = len(literals)
    if len(fragments) != count:
        return None
    base, number, line = first
    head_end = head_match.end()
    positions = Positions()
    # each event: the template's fixed bytes, its literal and its free groups (padding, a sequence number)
    fixed = head_end - head_match.start() - sum(len(head_match[name] or b"") for name in ("fragment", *form.free))
    literal_bytes = len(text) - 4 - 3 * (count - 1)  # the bytes of the run's literals, without '["', '","', '"]'
    lengths_follow = found.end - head_end == count * fixed + literal_bytes
    if form.computed and lengths_follow and _canonical(fragments, text):
        # no free group holds a byte, and each literal is its fragment's canonical JSON: each event's
        # length follows from its fragment, so the positions are computed only if a finding reads them
        positions.add_run(LazyRun(0, count, number, line, step, base + head_end, fixed, base + found.last))
    else:  # the offsets as read
        flat = array("q", bytes(24 * count))
        # each column made from a list: ``array`` appends an iterator's items one by one (half the
        # cost of the Responses run reader's positions at 100 KB), a list's in one step
        flat[0::3] = array("q", list(range(number, number + count)))
        flat[1::3] = array("q", list(range(line, line + step * count, step)))
        if found.matches is not None:
            starts = list(map(_Match.end, found.matches))
            starts.pop()
            starts.insert(0, head_end)
        else:  # only the fragment differs: each event is its literal and the fixed bytes
            starts = list(accumulate(map(fixed.__add__, map(len, literals[:-1])), initial=head_end))
        flat[2::3] = array("q", list(map(base.__add__, starts)))
        positions.add(flat)
    return FrameRun(form, head, fragments, positions, frames, found.matches)


def _canonical(fragments: list[str], text: bytes) -> bool:
    """Whether ``text``, the JSON array the fragments were read from, is the one orjson writes for them:
    then each literal is, as an array of strings is tokenized one way only."""
    if b"\\" not in text:
        # FRAGMENT lets no quote, backslash or control character stand raw: without an escape every
        # literal is canonical, found at memchr speed. With escapes, one ``dumps`` compared costs less
        # than looking for ``\\u`` and ``\\/``: bytes' search for a two-byte needle steps byte by byte
        # through a text of many backslashes (about 4 ns a byte, twice; ``dumps`` about 2.5, once)
        return True
    try:
        return orjson.dumps(fragments) == text
    except orjson.JSONEncodeError:  # a lone surrogate, which orjson does not write
        return False


#: While the engine has not said which runs to read, pieces are read this many bytes at a time.
HEAD_STEP = 16 * 1024


def small_first(pieces: Iterable[Piece], reading: RunReading, cut: Callable[[bytes, int], int]) -> Iterator[Piece]:
    """``pieces`` re-cut into steps of at most ``HEAD_STEP`` bytes (where ``cut`` says a frame may end)
    while ``reading`` is pending. Each step is a part of the piece's bytes, never a copy of the rest of
    the piece: a capture that gives no frames (a gigabyte of blank lines) keeps the engine waiting to
    the end, and copying the rest each step made every 1 MiB piece 64 MiB of copies."""
    for data, start, end, last in pieces:
        while reading.pending and end - start > HEAD_STEP:
            step = cut(data[start : start + HEAD_STEP], 0)
            if not step:
                break
            yield data, start, start + step, False
            start += step
        yield data, start, end, last
