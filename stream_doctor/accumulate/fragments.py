"""A completed call's argument fragments and their positions, kept compactly.

A call's fragments join to its ``raw_arguments``, so each is kept as where it ends in that string
(8 bytes) instead of a string of its own (about 50 bytes and its text again), and each position as
three integers in an array (24 bytes) instead of a ``Pos`` tuple and its integers (about 170 bytes),
or, for a run of events read whole (``capture/runs.py``), computed from the fragments when first read.
Both read like the tuples they replace (length, index, slice, iteration, equality), building a
fragment's text or ``Pos`` when asked. With 100,000 calls of a few fragments each, that is most of
what a replay keeps after the frames are gone.
"""

from __future__ import annotations

from array import array
from itertools import accumulate, chain
from typing import Any, Iterable, Iterator, Sequence, TypeVar, overload

from stream_doctor.capture.base import Pos
from stream_doctor.capture.runs import Positions

_new_tuple = tuple.__new__


_T = TypeVar("_T")


class _TupleLike(Sequence[_T]):
    """A compact sequence that compares, hashes and prints as the tuple of its items (as the tuples it
    replaces did), equal to a tuple or to its own kind only."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (type(self), tuple)):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))


class FragmentTexts(_TupleLike[str]):
    """The fragments of ``raw`` (which they join to), each found from where it ends."""

    __slots__ = ("_raw", "_ends")

    def __init__(self, raw: str, ends: array[int]) -> None:
        self._raw = raw
        self._ends = ends

    @classmethod
    def of(cls, texts: Iterable[str], raw: str) -> FragmentTexts:
        """``texts``, which join to ``raw``."""
        return cls(raw, array("q", list(accumulate(map(len, texts)))))  # a list: as ``spill.ArgumentStore.keep``

    def __len__(self) -> int:
        return len(self._ends)

    @property
    def ends(self) -> Sequence[int]:
        """Where each fragment ends in ``raw``, as kept (nothing built)."""
        return self._ends

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...
    def __getitem__(self, index: int | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        ends = self._ends
        if index < 0:
            index += len(ends)
        if not 0 <= index < len(ends):
            raise IndexError("fragment index out of range")
        return self._raw[ends[index - 1] if index else 0 : ends[index]]

    def __iter__(self) -> Iterator[str]:
        raw = self._raw
        start = 0
        for end in self._ends:
            yield raw[start:end]
            start = end

    def __reduce__(self) -> tuple[Any, ...]:
        return (FragmentTexts, (self._raw, self._ends))


class FragmentPositions(_TupleLike[Pos]):
    """Positions as (number, line, offset) triples in one array; a run's (``capture.runs.Positions``)
    computed from its fragments, ``texts``, when first read."""

    __slots__ = ("_flat", "_texts")

    def __init__(self, flat: array[int], texts: Sequence[str] = ()) -> None:
        self._flat = flat
        self._texts = texts

    @classmethod
    def of(cls, positions: Iterable[Pos]) -> FragmentPositions:
        return cls(array("q", chain.from_iterable(positions)))

    def _triples(self) -> array[int]:
        flat = self._flat
        if type(flat) is Positions and flat.lazy:
            flat = self._flat = flat.flat(self._texts)
            self._texts = ()
        return flat

    def __len__(self) -> int:
        flat = self._flat
        return flat.fragment_count() if type(flat) is Positions else len(flat) // 3

    @overload
    def __getitem__(self, index: int) -> Pos: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Pos, ...]: ...
    def __getitem__(self, index: int | slice) -> Pos | tuple[Pos, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("fragment index out of range")
        at = 3 * index
        return _new_tuple(Pos, self._triples()[at : at + 3])

    def __iter__(self) -> Iterator[Pos]:
        flat = self._triples()
        for at in range(0, len(flat), 3):
            yield _new_tuple(Pos, flat[at : at + 3])

    def __reduce__(self) -> tuple[Any, ...]:
        return (FragmentPositions, (array("q", self._triples()),))
