"""Delta debugging (Zeller's ddmin, complement form): the smallest sub-list a test still accepts.

Deterministic: chunks are tried in order, and the test decides alone. ``Stop`` raised by the test
(the time is up) ends the search; the best list found so far is then what the caller keeps.
"""

from __future__ import annotations

from typing import Callable, Sequence, TypeVar

T = TypeVar("T")


class Stop(Exception):
    """The time bound is reached: keep the best candidate found so far."""


def ddmin(items: Sequence[T], accepts: Callable[[list[T]], bool], keep_one: bool = False) -> list[T]:
    """A sub-list of ``items`` (order kept) that ``accepts`` takes and from which no single item can be
    removed (1-minimal). ``items`` itself is taken to be accepted. Removing everything is tried first
    unless ``keep_one``. Chunks halve: n = 2, 4 … until each chunk is one item."""
    current = list(items)
    if not current:
        return current
    if not keep_one and accepts([]):
        return []
    chunks = 2
    while len(current) >= 2:
        size = max(1, -(-len(current) // chunks))  # ceil
        removed_one = False
        for start in range(0, len(current), size):
            candidate = current[:start] + current[start + size :]
            if (candidate or not keep_one) and accepts(candidate):
                current = candidate
                chunks = max(chunks - 1, 2)
                removed_one = True
                break
        if removed_one:
            continue
        if size == 1:
            break
        chunks = min(len(current), chunks * 2)
    return current
