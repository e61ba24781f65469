"""Records made on the hot path: immutable to the type checker, plain slot stores at run time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar, dataclass_transform

_T = TypeVar("_T")


@dataclass_transform(frozen_default=True)
def record(cls: type[_T]) -> type[_T]:
    """A slotted dataclass that compares and hashes by its fields, as a frozen one does, and that mypy
    holds frozen (an assignment to a field is an error in CI), but whose ``__init__`` stores each field
    in its slot: a frozen dataclass sets each through ``object.__setattr__``, a call per field, which for
    the records a replay makes for every turn (a call, its message, the stream) cost about 5% of a long
    session's replay. A record may be weakly referenced (a request's facts name the previous ones so)."""
    return dataclass(slots=True, weakref_slot=True, unsafe_hash=True)(cls)
