"""Minimize a capture: the smallest capture on which the kept findings still fire (docs/minimize.md).

Linear passes first, so a long conversation shrinks in a few replays: (a) only the turns the kept
findings point at; then, repeated until none changes anything (so minimizing the result again gives
it back): an envelope's header cut to what replays, (b) whole turns by ddmin, then whole calls
(``calls``), (c) frames by ddmin with halving chunks (a request no finding needs goes whole here,
before its history is looked at; the indices only removed frames held are renumbered away),
the elements of the remaining requests' lists (messages, content blocks, tools) by ddmin, and
(d) strings, each distinct value replaced everywhere at once (an id only by its prefix and a
number, so pairing holds and a report can name it; a tool's name never). Every candidate is
replayed by the engine (``oracle.Oracle``). ``--redact`` then rewrites the result (``redact``).
"""

from __future__ import annotations

import functools
import gzip
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping

from stream_doctor.minimizer.calls import renumbered, tagged, without
from stream_doctor.minimizer.ddmin import Stop, ddmin
from stream_doctor.minimizer.oracle import Oracle, replay_quietly
from stream_doctor.minimizer.units import KEPT_CONTAINERS, Layout, Unit, cut
from stream_doctor.minimizer.whitelist import ID_PREFIX, NAME_KEYS, id_prefix, is_id_key
from stream_doctor.minimizer.window import width
from stream_doctor.util import jsontext
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.capture.base import Capture
    from stream_doctor.values.command_options import MinimizeOptions
    from stream_doctor.values.options import Options
    from stream_doctor.values.report import Report


class MinimizeError(ValueError):
    """A kept code does not fire in the capture (or ``call`` names no call of it): nothing to minimize.
    The message is one line (the CLI prints it and exits 2). A capture that cannot be replayed at all
    raises ``stream_doctor.RunError``, as ``replay`` does."""


@dataclass(frozen=True)
class Progress:
    """Where a minimization is, for a progress display: the pass, the current size, the replays so far."""

    stage: str
    size: int
    frames: int
    checks: int


@dataclass(frozen=True)
class Minimized:
    """A minimized capture and what it took."""

    data: bytes
    container: str  # the container ``data`` is in (the original's, or "envelope")
    provider: str
    size_before: int  # the original's bytes, as given (compressed or not)
    size_after: int
    frames_before: int
    frames_after: int
    kept: tuple[Finding, ...]  # the kept findings, as ``data`` gives them
    seconds: float
    checks: int  # how many candidates were replayed
    stopped_early: bool  # max_seconds was reached: ``data`` is the best found so far
    converted: bool  # the original's container cannot hold the result: ``data`` is an envelope
    replaced: Mapping[str, int] = field(default_factory=dict)  # --redact: what was replaced, per kind
    kept_values: Mapping[str, int] = field(default_factory=dict)  # --redact: values a finding depends on
    windowed: int = 0  # of ``checks``, the replays of a window of turns, not of the whole candidate (``window``)


#: Keys whose string values are the protocol's words, never worth a replay to shorten.
_STRUCTURAL = frozenset(
    {"sd", "type", "event", "role", "object", "finish_reason", "stop_reason", "status", "model", "version", "provider"}
)
#: An id: a provider's prefix and a token (``toolu_01A09q…``, ``call_abc123``, ``msg_…``, ``fc_…``).
_ID = re.compile(ID_PREFIX.pattern + r"[A-Za-z0-9_-]{5,}")
#: A string's roles, the one that decides first: a name is never shortened, an id only to its prefix and a number.
_ROLES = ("name", "id", "text")
#: Values nested deeper than this are not looked into for strings.
_DEEPEST = 200
#: Rounds of redaction and search at most, under --redact (the second finds what the first made editable).
_ROUNDS = 3
#: A string is shortened by halving its prefix at most this many times.
_HALVINGS = 6


def minimize(
    data: bytes,
    name: str,
    wanted: MinimizeOptions,
    options: Options,
    progress: Callable[[Progress], None] | None = None,
) -> Minimized:
    """The smallest capture found on which every code of ``wanted.keep`` still fires (on ``wanted.call``, an
    id or a call number of the original, when given) and no new warning or error appears, each candidate
    replayed with ``options``. MinimizeError when a kept code does not fire in it, RunError when it cannot
    be replayed at all.

    ``wanted.max_seconds`` bounds the search (the best capture found so far is returned, ``stopped_early``);
    ``wanted.redact`` then masks what a shared capture must not show (``redact.WhitelistRedaction``: a few
    replays, whatever the time: leaving a secret in because the clock ran out is not an option)."""
    started = time.monotonic()
    max_seconds, redact = wanted.max_seconds, wanted.redact
    original = _read(data, name, wanted.keep, options, wanted.call)
    state = _State(original.layout, original.units, original.oracle, progress)
    deadline = None if max_seconds is None else started + max_seconds
    original.oracle.deadline = deadline
    stopped = _searched(state, original)
    replaced: dict[str, int] = {}
    kept_values: dict[str, int] = {}
    if redact:
        stopped, replaced, kept_values = _redact(state, name, deadline, stopped)
    result = state.layout.join(state.units)
    converted, container = original.converted, original.container
    if converted and len(result) >= len(data) and not redact:
        # the envelope's records cost more than the original's frames: the capture as it is is smallest
        result, converted, container = data, False, _load(data, name, options).container
    return Minimized(
        data=result,
        container=container,
        provider=original.oracle.provider,
        size_before=len(data),
        size_after=len(result),
        frames_before=original.frames,
        frames_after=len(state.units) if result is not data else original.frames,
        kept=_found(result, original.oracle),
        seconds=time.monotonic() - started,
        checks=original.oracle.checks,
        stopped_early=stopped,
        converted=converted,
        replaced=replaced,
        kept_values=kept_values,
        windowed=original.oracle.windows,
    )


@dataclass
class _Original:
    """The capture to minimize, read and judged: its units, the oracle that judges each candidate by the
    original's findings, the turns they point at, and its frames and container."""

    layout: Layout
    units: list[Unit]
    oracle: Oracle
    pointed: set[int]
    frames: int
    container: str
    converted: bool  # its container cannot hold a subset of its frames: the units are its envelope's


def _read(data: bytes, name: str, keep: tuple[str, ...], options: Options, call: str | None) -> _Original:
    """The original cut into units and replayed once: MinimizeError when a kept code does not fire in it
    (on ``call``, when given)."""
    working, converted, capture = _working(data, name, options)
    offsets = [frame.pos.offset for frame in capture.frames]
    layout, units = cut(working, capture, _turns(capture))  # before the replay lets go of the frames' values
    original = _replay_original(name, options, data) if converted else _replay_loaded(capture, options)
    try:
        call_id = _call_id(original, call)
        kept = [f for f in original.findings if f.code in keep and (call_id is None or f.call_id == call_id)]
        missing = [code for code in keep if not any(f.code == code for f in kept)]
        if missing:
            fired = ", ".join(sorted(set(original.codes))) or "no finding"
            where = f" on call {call}" if call is not None else ""
            raise MinimizeError(f"{name}: {', '.join(missing)} does not fire{where} (it shows: {fired})")
        allowed = frozenset(f.claim for f in original.findings if f.severity >= Severity.WARNING)
        provider = original.stream.capture.provider
        frames = original.source.frames if original.source is not None else 0
        if not converted:  # the original's positions are the working bytes'
            units = tagged(units, offsets, original)
    finally:
        original.close()
    claims = frozenset(f.claim for f in kept)
    oracle = Oracle(name, options, keep, call_id, claims, allowed, provider, capture.container, None)
    if converted:
        units = _as_envelope(units, offsets, capture, oracle)
    elif capture.container == "envelope" and not (options.executed or options.executions or options.execution_records):
        # executions told after the fact name calls by their number in the whole capture: no window then
        oracle.reach = width(keep)
        shown = {code: frozenset(f.location.interaction for f in kept if f.code == code) for code in keep}
        oracle.kept_turns = oracle.kept_turns_of(shown, units)
    return _Original(layout, units, oracle, _pointed(kept), frames, capture.container, converted)


def _searched(state: _State, original: _Original) -> bool:
    """The search's passes on the original; whether the clock stopped them. A search that judged some
    candidates by a window of turns has its result replayed whole (whatever the clock says, as redaction
    is): should a finding that reads further back than its rule's reach (or an unplaced one) reject it,
    the search runs again from the original with whole replays only, as it did before windows."""
    state.focus_safely(original.pointed)
    stopped = state.search()
    oracle = state.oracle
    if not oracle.windows:
        return stopped
    deadline, oracle.deadline = oracle.deadline, None
    verified = oracle(state.layout.join(state.units))
    oracle.deadline = deadline
    if verified:
        return stopped
    oracle.reach = None
    state.restart(original.layout, original.units)
    state.focus_safely(original.pointed)
    return state.search()


def _found(result: bytes, oracle: Oracle) -> tuple[Finding, ...]:
    """The kept findings as the result shows them (it replays: it is the last accepted candidate)."""
    final = replay_quietly(oracle.name, oracle.options, result)
    if final is None:
        return ()
    with final:
        return tuple(f for f in final.findings if any(oracle.wanted(f, code) for code in oracle.keep))


def _redact(
    state: _State, name: str, deadline: float | None, stopped: bool
) -> tuple[bool, dict[str, int], dict[str, int]]:
    """``--redact`` on the best capture found (``redact.WhitelistRedaction``, a bounded number of replays, whatever
    the clock says), then the search again on what it wrote while the clock allows: redaction can make
    a frame editable that was not (an event over several ``data:`` lines is written on one), and the
    result must be a fixed point of ``minimize --redact``. At most ``_ROUNDS`` rounds."""
    from stream_doctor.minimizer.redact import WhitelistRedaction

    replaced: dict[str, int] = {}
    kept: dict[str, int] = {}
    for round_number in range(1, _ROUNDS + 1):
        state.oracle.deadline = None
        redaction = WhitelistRedaction(state.layout, state.units, state.oracle, name)
        if not redaction.run():
            raise MinimizeError(
                f"{name}: redacted, it no longer shows {', '.join(state.oracle.keep)}: a finding depends on a "
                "secret; minimize it without --redact and mask it by hand"
            )
        state.layout, state.units = _recut(redaction.layout.join(redaction.units), name, state.oracle.options)
        state.oracle.kept_turns = None  # the turns are numbered anew: the next whole replay places the kept findings
        for kind, count in redaction.replaced.items():
            replaced[kind] = replaced.get(kind, 0) + count
        for kind, count in redaction.kept.items():
            kept[kind] = max(kept.get(kind, 0), count)
        if stopped or round_number == _ROUNDS:
            break
        state.oracle.deadline = deadline
        before = state.layout.join(state.units)
        stopped = state.search()
        if state.layout.join(state.units) == before:
            break
    return stopped, replaced, kept


def _as_envelope(units: list[Unit], offsets: list[int], capture: Capture, oracle: Oracle) -> list[Unit]:
    """A converted capture's units, each with the call that owns it (from a replay of the envelope: the
    original's positions are not its own); MinimizeError when the envelope no longer shows what is kept."""
    from stream_doctor.engine.stages import RunError

    oracle.checks += 1
    try:
        report: Report | None = _replay_loaded(capture, oracle.options)
    except RunError:
        report = None
    if report is not None:
        with report:
            if oracle.judge(report):
                return tagged(units, offsets, report)
    raise MinimizeError(
        f"{oracle.name}: its format cannot hold a cut-down capture, and as an envelope "
        f"(stream-doctor convert) it no longer shows {', '.join(oracle.keep)}: it cannot be minimized"
    )


def _recut(data: bytes, name: str, options: Options) -> tuple[Layout, list[Unit]]:
    """``data`` cut into units again: what redaction rewrote (an SSE event) is editable as any frame."""
    capture = _load(data, name, options)
    return cut(data, capture, _turns(capture))


def _replay_original(name: str, options: Options, data: bytes) -> Report:
    from stream_doctor.engine.pipeline import replay

    return replay(name, options, data)


def _replay_loaded(capture: Capture, options: Options) -> Report:
    from stream_doctor.engine.pipeline import replay_loaded

    return replay_loaded(capture, options)


def _call_id(report: Report, call: str | None) -> str | None:
    if call is None:
        return None
    numbers = report.matching(call)
    if not numbers:
        raise MinimizeError(f"{report.path}: no call {call!r} (calls: {report.call_listing()})")
    call_id = report.calls[numbers[0] - 1].call_id
    if call_id is None:
        raise MinimizeError(
            f"{report.path}: call {call} has no id, so its findings cannot be told apart; leave out --call"
        )
    return call_id


def _pointed(findings: list[Finding]) -> set[int]:
    """The turns the kept findings point at, where they are and what they relate to (empty: one turn)."""
    turns = {f.location.interaction for f in findings}
    turns |= {r.location.interaction for f in findings for r in f.related}
    return {turn for turn in turns if turn is not None}


def _working(data: bytes, name: str, options: Options) -> tuple[bytes, bool, Capture]:
    """The bytes to cut into frames: the capture itself (decompressed) when its container can hold a
    subset of its frames, else the capture converted to an envelope (``stream-doctor convert``); whether
    it was converted; and those bytes read into frames."""
    from stream_doctor.engine.convert import convert

    capture = _load(data, name, options)
    offsets = [frame.pos.offset for frame in capture.frames]
    apart = all(a < b for a, b in zip(offsets, offsets[1:], strict=False))  # each frame its own bytes
    if capture.container in KEPT_CONTAINERS and capture.compressed in (None, "gzip") and offsets and apart:
        if capture.compressed:
            data = gzip.decompress(data)
            return data, False, _load(data, name, options)
        return data, False, capture
    envelope = convert(name, options, data)
    return envelope, True, _load(envelope, name, options)


def _load(data: bytes, name: str, options: Options) -> Capture:
    from stream_doctor.capture import load
    from stream_doctor.capture.base import CaptureError
    from stream_doctor.engine.stages import RunError

    try:
        return load(name, options.container, data, options.limits)
    except CaptureError as error:
        raise RunError(name, error.message, error.line) from None


def _turns(capture: Capture) -> list[int]:
    from stream_doctor.conversation.build import split

    turn_of = {id(frame): section.number for section in split(capture) for frame in section.frames}
    return [turn_of.get(id(frame), 1) for frame in capture.frames]


class _State:
    """The best candidate so far (``units``) and the passes that shrink it."""

    def __init__(
        self, layout: Layout, units: list[Unit], oracle: Oracle, progress: Callable[[Progress], None] | None
    ) -> None:
        self.layout, self.units, self.oracle, self.progress = layout, units, oracle, progress
        self.stage = "start"
        self._ids: dict[str, int] = {}  # per id prefix, the last number given

    def restart(self, layout: Layout, units: list[Unit]) -> None:
        """Back to ``units``, as before any pass: the ids numbered so far are numbered again."""
        self.layout, self.units = layout, units
        self._ids.clear()

    def accepts(self, units: list[Unit]) -> bool:
        if not self.oracle.accepts(self.layout, self.units, units):
            return False
        self.units = units
        self._tell()
        return True

    def _tell(self) -> None:
        if self.progress is not None:
            size = len(self.layout.join(self.units))
            self.progress(Progress(self.stage, size, len(self.units), self.oracle.checks))

    def _enter(self, stage: str) -> None:
        self.stage = stage
        self._tell()

    def focus_safely(self, pointed: set[int]) -> None:
        try:
            self.focus(pointed)
        except Stop:
            pass  # the search then stops at once, and says so

    def search(self) -> bool:
        """The passes (b) to (d), repeated until none changes anything; whether the clock stopped them."""
        try:
            while True:
                before = self.layout.join(self.units)
                self.header()
                self.turns()
                self.calls()
                self.frames()  # before the requests' lists: a request no finding needs goes whole
                self.lists()
                self.strings()
                if self.layout.join(self.units) == before:
                    return False
        except Stop:
            return True

    # (a)
    def focus(self, pointed: set[int]) -> None:
        self._enter("turns the findings point at")
        turns = sorted({unit.turn for unit in self.units})
        if not pointed or len(turns) < 2:
            return
        only = [unit for unit in self.units if unit.turn in pointed]
        if only != self.units and self.accepts(only):
            return
        between = [unit for unit in self.units if min(pointed) <= unit.turn <= max(pointed)]
        if between != self.units:
            self.accepts(between)

    def header(self) -> None:
        """An envelope's header as little as it takes: only version and provider, or none."""
        header = self.layout.header()
        if header is None:
            return
        self._enter("header")
        slim = {key: header[key] for key in ("sd", "version", "provider") if key in header}
        for head in (b"", jsontext.dumps(slim) + b"\n"):
            if len(head) < len(self.layout.head) and self._with_head(head):
                return

    def _with_head(self, head: bytes) -> bool:
        layout = Layout(self.layout.container, head, self.layout.tail)
        if not self.oracle(layout.join(self.units)):
            return False
        self.layout = layout
        self._tell()
        return True

    # (b)
    def turns(self) -> None:
        self._enter("whole turns")
        numbers = sorted({unit.turn for unit in self.units})
        if len(numbers) < 2:
            return
        ddmin(numbers, lambda kept: self.accepts([u for u in self.units if u.turn in kept]), keep_one=True)

    def calls(self) -> None:
        """Whole calls by ddmin, the indices after a removed one renumbered (``calls``)."""
        self._enter("whole calls")
        ordinals = sorted({unit.call for unit in self.units if unit.call is not None})
        if len(ordinals) < 2:
            return
        ddmin(ordinals, lambda kept: self.accepts(without(self.units, set(kept))), keep_one=True)

    def lists(self) -> None:
        self._enter("messages, blocks and tools of the requests")
        for index in range(len(self.units)):
            if index >= len(self.units) or self.units[index].kind != "request" or self.units[index].payload is None:
                continue
            paths = list(_lists(self.units[index].value()))
            at = 0
            while at < len(paths):
                path, unit = paths[at], self.units[index]
                items = _get(unit.value(), path)
                ddmin(list(range(len(items))), functools.partial(self._with_list, index, unit, path))
                paths = list(_lists(self.units[index].value()))
                at += 1

    def _with_list(self, index: int, unit: Unit, path: tuple[Any, ...], kept: list[int]) -> bool:
        """The units with the list at ``path`` of ``unit`` (the request as this list's ddmin began) cut to ``kept``."""
        record = unit.value()
        items = _get(record, path)
        _set(record, path, [items[k] for k in kept])
        return self.accepts([*self.units[:index], unit.edited(record), *self.units[index + 1 :]])

    # (c)
    def frames(self) -> None:
        self._enter("frames")
        ddmin(self.units, self._with_frames, keep_one=True)

    def _with_frames(self, kept: list[Unit]) -> bool:
        """The units cut to ``kept``, the indices that only removed frames held gone from the numbering
        (a text block's events removed: the call after it becomes block 0, as the provider numbers it)."""
        staying = {id(unit) for unit in kept}
        return self.accepts(renumbered(kept, [unit for unit in self.units if id(unit) not in staying]))

    # (d)
    def strings(self) -> None:
        self._enter("strings")
        values = _strings(self.units)
        names = tuple(value for value, role in values.items() if role == "name")  # Cohere's ids begin with one
        for value, role in values.items():
            if role == "name" or not any(_holds(unit, value) for unit in self.units):
                continue  # a tool's name says which tool; or gone with an earlier replacement
            if role == "id" or _ID.fullmatch(value) is not None:
                self._id(value, values, names)
                continue
            if self._replace(value, ""):
                continue
            length = len(value)
            for _ in range(_HALVINGS):
                length //= 2
                if length < 1 or not self._replace(value, value[:length]):
                    break
                value = value[:length]

    def _id(self, value: str, taken: Mapping[str, str], names: tuple[str, ...]) -> None:
        """An id keeps its provider prefix and reads as one (``toolu_1``), so a report can still name it; one
        already numbered so is left as it is (minimizing the result again gives it back)."""
        head = id_prefix(value, names) or "id_"
        if value.startswith(head) and value[len(head) :].isdigit():
            return
        number = self._ids.get(head, 0) + 1
        while f"{head}{number}" in taken:  # an id the capture holds already: two ids must stay two
            number += 1
        if len(head) + len(str(number)) < len(value) and self._replace(value, f"{head}{number}"):
            self._ids[head] = number

    def _replace(self, old: str, new: str) -> bool:
        units = [unit.edited(_replaced(unit.value(), old, new)) if _holds(unit, old) else unit for unit in self.units]
        return units != self.units and self.accepts(units)


def _holds(unit: Unit, value: str) -> bool:
    if unit.payload is None:
        return False
    return jsontext.dumps(value) in unit.payload


def _strings(units: list[Unit]) -> dict[str, str]:
    """Every distinct string value of the editable units (not keys, not the protocol's words), longest first
    within first appearance order (a long text is worth a replay before a short one), each with its role:
    "name" when it is a name somewhere, else "id" when it is an id somewhere, else "text"."""
    seen: dict[str, str] = {}
    for unit in units:
        if unit.payload is not None:
            _collect(unit.value(), None, seen)
    return {text: seen[text] for text in sorted(seen, key=lambda text: -len(text))}


def _collect(value: Any, key: str | None, seen: dict[str, str]) -> None:
    stack: list[tuple[Any, str | None]] = [(value, key)]
    while stack:
        current, name = stack.pop()
        if isinstance(current, dict):
            stack.extend((item, k) for k, item in reversed(current.items()))
        elif isinstance(current, list):
            stack.extend((item, name) for item in reversed(current))
        elif isinstance(current, str) and len(current) >= 2 and name not in _STRUCTURAL:
            role = "name" if name in NAME_KEYS else "id" if name is not None and is_id_key(name) else "text"
            if _ROLES.index(role) < _ROLES.index(seen.get(current, "text")):
                seen[current] = role
            else:
                seen.setdefault(current, role)


def _replaced(value: Any, old: str, new: str, key: str | None = None, depth: int = 0) -> Any:
    if depth > _DEEPEST:  # left as it is: Python's stack ends near 1,000 levels, JSON's at 1,024
        return value
    if isinstance(value, dict):
        return {k: _replaced(item, old, new, k, depth + 1) for k, item in value.items()}
    if isinstance(value, list):
        return [_replaced(item, old, new, key, depth + 1) for item in value]
    if value == old and isinstance(value, str) and key not in _STRUCTURAL:
        return new
    return value


def _lists(record: Any) -> Iterator[tuple[Any, ...]]:
    """The paths of the lists in a request record's body (or a request value), outer lists first."""
    body = record.get("body") if isinstance(record, dict) and "sd" in record else record
    base: tuple[Any, ...] = ("body",) if body is not record else ()
    stack: list[tuple[Any, tuple[Any, ...]]] = [(body, base)]
    while stack:
        current, path = stack.pop()
        if isinstance(current, dict):
            stack.extend((item, (*path, k)) for k, item in reversed(current.items()))
        elif isinstance(current, list):
            if current:
                yield path
            stack.extend((item, (*path, n)) for n, item in reversed(list(enumerate(current))))


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _set(value: Any, path: tuple[Any, ...], new: Any) -> None:
    _get(value, path[:-1])[path[-1]] = new
