"""Pausing the cyclic garbage collector while a replay builds objects it keeps."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a reader or the replay builds what it keeps.

    A capture of 50,000 events allocates a few hundred thousand containers (frames, positions,
    decoded payloads) that are all kept and form no cycles. Collections triggered by those
    allocations only re-scan live objects: with the collector running they cost about a third of
    the read. Afterwards the new objects are moved straight to the oldest generation
    (``freeze`` + ``unfreeze`` splices lists, it scans nothing); otherwise the first collection
    after ``enable`` would traverse them all once more, for another quarter of the read.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if not gc.get_freeze_count():  # never thaw what an embedding application froze
                gc.freeze()
                gc.unfreeze()
            gc.enable()
