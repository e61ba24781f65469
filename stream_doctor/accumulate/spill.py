"""Where a replay keeps its finished calls' argument text: in memory up to a threshold, then on disk.

A call's argument text, its fragments and their positions are what a replay keeps most of (with
100,000 calls, about 1 KB each), yet after the rules have run only a report that shows a call in
detail reads them again. So each call keeps a small handle (``StoredArguments``) and the text lives
in the replay's ``ArgumentStore``: the first ``SPILL_THRESHOLD`` characters of a replay in memory,
everything after in one temporary file (the system's temp folder, unnamed where the system allows,
written sequentially), read back by offset and length when asked. The file is gone when the store
is closed (``Report.close``) or collected, and when the replay fails.

No parsed value is kept either: ``ToolCall.arguments`` parses the text again when asked (orjson,
microseconds per call), except a value that did not come from the text (an input given whole in a
start or completion event), which is kept as it came.
"""

from __future__ import annotations

import os
from array import array
from itertools import accumulate, chain
from typing import IO, Any, Sequence

import orjson

from stream_doctor.accumulate.fragments import FragmentPositions, FragmentTexts
from stream_doctor.capture.base import Pos
from stream_doctor.capture.runs import LazyRun, Positions

#: Characters of argument text (and fragment records) a replay keeps in memory before it spills the
#: rest to a temporary file. Small replays never touch the disk.
SPILL_THRESHOLD = 8 * 1024 * 1024

NO_VALUE: Any = type("NoValue", (), {"__repr__": lambda self: "NO_VALUE"})()
_ITEM = array("q").itemsize
_NEVER = 1 << 62


class ArgumentStore:
    """The argument text of one replay's calls (every turn's), each call one record."""

    __slots__ = (
        "threshold", "_held", "_size", "_file", "_end", "_at", "_lengths", "_counts", "_lazy", "_values", "_last",
    )  # fmt: skip

    def __init__(self, threshold: int | None = None) -> None:
        self.threshold = SPILL_THRESHOLD if threshold is None else threshold
        self._held: list[tuple[str, Sequence[str], Sequence[Pos]] | None] = []  # None: on disk
        self._size = 0  # what the held records cost, roughly in characters
        self._file: IO[bytes] | None = None
        self._end = 0  # bytes written
        # per record on disk: where it starts, its text's UTF-8 length, its fragment count
        self._at = array("q")
        self._lengths = array("q")
        self._counts = array("q")
        self._lazy: dict[int, list[LazyRun]] = {}  # the runs of records on disk (their positions computed)
        self._values: dict[int, Any] = {}  # records whose value did not come from their text
        self._last: tuple[int, tuple[str, Sequence[str], Sequence[Pos]]] | None = None  # the last record read back

    @property
    def spilled(self) -> bool:
        """Whether any record went to the temporary file."""
        return self._file is not None

    def keep(self, raw: str, texts: Sequence[str], positions: Positions, value: Any = NO_VALUE) -> StoredArguments:
        """A record of ``raw`` (the join of ``texts``, the fragments at ``positions``, taken as they
        are); ``value``: the call's value when it did not come from ``raw``."""
        record = len(self._held)
        if value is not NO_VALUE:
            self._values[record] = value
        cost = len(raw) + 32 * len(texts)
        ends = array("q", list(accumulate(map(len, texts))))  # from a list: ``array`` appends an iterator item by item
        if self._size + cost <= self.threshold:
            self._size += cost
            fragments = FragmentTexts(raw, ends)
            self._held.append((raw, fragments, FragmentPositions(positions, fragments)))
            self._at.append(-1)
            self._lengths.append(-1)
            self._counts.append(len(texts))
            return StoredArguments(self, record)
        if self._file is None:
            import tempfile  # only a replay past the memory threshold needs it

            self._file = tempfile.TemporaryFile(prefix="stream-doctor-")
        text = raw.encode("utf-8", "surrogatepass")
        self._file.write(text)
        self._file.write(ends)
        self._file.write(positions)  # the triples of fragments read alone; the runs' are kept as runs
        if positions.lazy:
            self._lazy[record] = positions.lazy
        self._held.append(None)
        self._at.append(self._end)
        self._lengths.append(len(text))
        self._counts.append(len(texts))
        self._end += len(text) + (len(ends) + len(positions)) * _ITEM
        return StoredArguments(self, record)

    def record(self, record: int) -> tuple[str, Sequence[str], Sequence[Pos]]:
        """The text, fragments and positions of ``record`` (read back from the file if it is there)."""
        held = self._held[record]
        if held is not None:
            return held
        last = self._last
        if last is not None and last[0] == record:
            return last[1]
        file = self._file
        if file is None:
            raise ValueError("the report's argument store is closed")
        file.flush()
        length, count = self._lengths[record], self._counts[record]
        flat = Positions(self._lazy.get(record))
        alone = count - flat.lazy_count  # fragments whose triples are on disk
        data = os.pread(file.fileno(), length + (count + 3 * alone) * _ITEM, self._at[record])
        raw = data[:length].decode("utf-8", "surrogatepass")
        ends = array("q")
        ends.frombytes(data[length : length + count * _ITEM])
        flat.frombytes(data[length + count * _ITEM :])
        fragments = FragmentTexts(raw, ends)
        found = (raw, fragments, FragmentPositions(flat, fragments))
        self._last = (record, found)
        return found

    def raw(self, record: int) -> str:
        held = self._held[record]  # (every rule reads it: one call, not a second for ``record``)
        return held[0] if held is not None else self.record(record)[0]

    def value(self, record: int) -> Any:
        """The value kept for ``record``, or NO_VALUE when it comes from the text."""
        return self._values.get(record, NO_VALUE)

    def arguments(self, record: int, text: bool) -> Any:
        """The call's value: the one kept for ``record``, else its text as it is (``text``: free-text
        input) or parsed (``{}`` for a blank one); ``ToolCall.arguments``, read by several rules a turn
        (one call here where a value, a raw and a record lookup took three)."""
        value = self._values.get(record, NO_VALUE)
        if value is not NO_VALUE:
            return value
        raw = self.raw(record)
        if text:
            return raw
        return orjson.loads(raw) if raw.strip() else {}

    def count(self, record: int) -> int:
        return self._counts[record]

    def byte_count(self, record: int) -> int:
        length = self._lengths[record]
        return length if length >= 0 else len(self.raw(record).encode("utf-8", "surrogatepass"))

    def close(self) -> None:
        """Delete the temporary file (records on disk can no longer be read)."""
        file, self._file, self._last = self._file, None, None
        if file is not None:
            file.close()


class StoredArguments:
    """One call's record in its store: what ``ToolCall`` reads its argument text and fragments from.

    Compares, hashes and pickles by content, so two replays of one capture give equal calls.
    """

    __slots__ = ("store", "record")

    def __init__(self, store: ArgumentStore, record: int) -> None:
        self.store = store
        self.record = record

    @classmethod
    def held(cls, raw: str, texts: Sequence[str], positions: Sequence[Pos], value: Any = NO_VALUE) -> StoredArguments:
        """A record of its own, in memory (a masked copy of a call, an unpickled one)."""
        flat = Positions()
        flat.extend(chain.from_iterable(positions))
        return ArgumentStore(threshold=_NEVER).keep(raw, texts, flat, value)

    def content(self) -> tuple[str, tuple[str, ...], tuple[Pos, ...], Any]:
        raw, texts, positions = self.store.record(self.record)
        return raw, tuple(texts), tuple(positions), self.store.value(self.record)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StoredArguments):
            return NotImplemented
        return other is self or self.content() == other.content()

    def __hash__(self) -> int:
        return hash(self.store.raw(self.record))

    def __repr__(self) -> str:
        return f"StoredArguments({self.store.raw(self.record)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        raw, texts, positions, value = self.content()
        given = value is not NO_VALUE
        return (_unpickle, (raw, texts, positions, given, value if given else None))


def _unpickle(raw: str, texts: tuple[str, ...], positions: tuple[Pos, ...], given: bool, value: Any) -> StoredArguments:
    return StoredArguments.held(raw, texts, positions, value if given else NO_VALUE)
