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
    global _application_froze
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            # Never thaw what an embedding application froze. ``get_freeze_count`` walks the
            # permanent generation (~95 ms after a large ``gc.freeze()``), so once it has been
            # seen non-empty it is not asked again; while it is empty the walk costs nothing.
            if not _application_froze:
                _application_froze = gc.get_freeze_count() > 0
            if not _application_froze:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


#: Whether the permanent generation was found holding objects (the application uses gc.freeze()).
_application_froze = False
