"""Calls as units: which frames are one call's alone, and a candidate without some calls.

A capture of forty calls in one turn holds its one broken call among four hundred frames; the frame
pass can only remove a call whose frames a halving chunk happens to cover, and removing a call's
frames leaves a gap in the block indices of the calls after it (SD404), which the oracle rejects.
So calls go first as whole units: a frame belongs to a call when the call's start, one of its
fragments or its completion is that frame and no other call's is (a chunk that carries two calls'
deltas, or the finish chunk they share, stays); so does an envelope's ``execute`` record of the
call's id in its turn. A candidate without some calls has the positional indices of the events
after them lowered by the number of indices that went with them (``renumbered``), so the calls
that stay are numbered as the provider would have numbered them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from stream_doctor.minimizer.units import Unit

if TYPE_CHECKING:
    from stream_doctor.values.report import Report

#: The keys whose integers are positions of blocks or calls in a message: Anthropic's and Gemini
#: Interactions' ``index``, the Responses API's ``output_index``, Bedrock's ``contentBlockIndex``,
#: OpenAI Chat's ``tool_calls[].index``. Told apart by their path (``choices[].index`` is not a call's).
INDEX_KEYS = frozenset({"index", "output_index", "contentBlockIndex"})
#: Values nested deeper than this are not looked into for indices.
_DEEPEST = 32

Path = tuple[str, ...]


def tagged(units: list[Unit], offsets: list[int], report: Report) -> list[Unit]:
    """``units`` (one per frame, at ``offsets``) each with the call that owns it, if one does."""
    owner = owners(report)
    ids = run_ids(report)
    return [_tagged(unit, owner.get(offset), ids) for unit, offset in zip(units, offsets, strict=True)]


def _tagged(unit: Unit, call: int | None, ids: Mapping[tuple[int | None, str], int]) -> Unit:
    if call is None and unit.kind == "execute" and unit.payload is not None:
        record = unit.value()
        call_id = record.get("call_id") if isinstance(record, dict) else None
        if isinstance(call_id, str):
            call = ids.get((unit.turn, call_id), ids.get((None, call_id)))
    return unit if call is None else replace(unit, call=call)


def owners(report: Report) -> dict[int, int]:
    """The byte offset of each frame that one call alone owns, and that call's ordinal (0-based)."""
    claimed: dict[int, set[int]] = defaultdict(set)
    for ordinal, call in enumerate(report.calls):
        _raw, _texts, positions, _value = call.stored.content()
        where = [call.started, *positions] + ([call.ended] if call.ended is not None else [])
        for pos in where:
            claimed[pos.offset].add(ordinal)
    return {offset: next(iter(calls)) for offset, calls in claimed.items() if len(calls) == 1}


def run_ids(report: Report) -> dict[tuple[int | None, str], int]:
    """Each call's (turn, id), and its ordinal: what ties an ``execute`` record to its call."""
    ids: dict[tuple[int | None, str], int] = {}
    for ordinal, (call, turn) in enumerate(zip(report.calls, report.call_turns, strict=True)):
        if call.call_id is not None:
            ids.setdefault((turn, call.call_id), ordinal)
    return ids


def without(units: list[Unit], kept: set[int]) -> list[Unit]:
    """``units`` without the calls whose ordinal is not in ``kept``, the indices after them renumbered."""
    stay = [unit for unit in units if unit.call is None or unit.call in kept]
    gone = [unit for unit in units if unit.call is not None and unit.call not in kept]
    return renumbered(stay, gone)


def renumbered(stay: list[Unit], gone: list[Unit]) -> list[Unit]:
    """``stay`` with each positional index lowered by the indices, in its turn and at its path, that only
    ``gone`` held: the numbering the provider would have given the blocks that stay."""
    removed: dict[tuple[int, Path], set[int]] = defaultdict(set)
    for unit in gone:
        for path, value in _indices(unit):
            removed[unit.turn, path].add(value)
    if not removed:
        return stay
    for unit in stay:
        for path, value in _indices(unit):
            removed.get((unit.turn, path), set()).discard(value)
    lowered: dict[tuple[int, Path], list[int]] = {where: sorted(values) for where, values in removed.items() if values}
    if not lowered:
        return stay
    return [_lowered(unit, lowered) for unit in stay]


def _lowered(unit: Unit, lowered: Mapping[tuple[int, Path], list[int]]) -> Unit:
    if not any((unit.turn, path) in lowered for path, _ in _indices(unit)):
        return unit

    def shift(path: Path, value: int) -> int:
        below = lowered.get((unit.turn, path), ())
        return value - sum(1 for gone in below if gone < value)

    return unit.edited(_shifted(unit.value(), (), shift, 0))


def _shifted(value: Any, path: Path, shift: Callable[[Path, int], int], depth: int) -> Any:
    if depth > _DEEPEST:
        return value
    if isinstance(value, dict):
        return {
            key: shift((*path, key), item)
            if key in INDEX_KEYS and type(item) is int
            else _shifted(item, (*path, key), shift, depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_shifted(item, path, shift, depth + 1) for item in value]
    return value


def _indices(unit: Unit) -> Iterator[tuple[Path, int]]:
    """The positional indices an event unit holds, each with its path of keys (list positions left out)."""
    if unit.kind != "event" or unit.payload is None or not any(key.encode() in unit.payload for key in INDEX_KEYS):
        return
    stack: list[tuple[Any, Path, int]] = [(unit.value(), (), 0)]
    while stack:
        current, path, depth = stack.pop()
        if depth > _DEEPEST:
            continue
        if isinstance(current, dict):
            for key, item in current.items():
                if key in INDEX_KEYS and type(item) is int:
                    yield (*path, key), item
                else:
                    stack.append((item, (*path, key), depth + 1))
        elif isinstance(current, list):
            stack.extend((item, path, depth + 1) for item in current)
