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

    Objects moved that way skip the collector's own rule for full collections (it counts only what
    survives a younger generation), so the reference cycles a replay leaves behind (its call and
    block records, an exception and its frames) would wait forever in a process that replays
    capture after capture: a library user, the pytest plugin, a ``scan`` worker, the fuzzer. So this
    module keeps the collector's rule itself: it adds up the containers allocated under each pause,
    and once they pass a quarter of the heap it last measured (and at least ``COLLECT_AFTER``) the
    next pause begins by counting the heap's containers (a list of them: about a sixth of a
    collection's cost). Only when the heap has grown by more than a quarter since it was measured, as
    the collector's own rule asks of what survived into its oldest generation, does one full
    collection run; a heap found smaller is the measure from then on. A replay whose caller let its
    report go leaves little or nothing behind (a 300-turn session: 5 containers): walking the whole
    heap every few replays for that cost a loop of replays 2-3% of its time. The collection runs as
    a pause begins, not at the end of one: then it would traverse everything the pause built and
    its caller still holds (a replay's report: a 300-turn session's took 15 ms to walk, five times a
    collection without it); by the next pause the caller has mostly let it go. The first pause of a
    process only sets the measure, so a one-shot command pays nothing.
    """
    global _application_froze, _allocated, _heap
    was_enabled = gc.isenabled()
    if was_enabled and _heap >= 0 and _allocated > max(COLLECT_AFTER, _heap // 4):
        _allocated, live = 0, len(gc.get_objects())
        if live - _heap > _heap // 4:  # what the pauses moved is still there, in part
            gc.collect()
            _heap = len(gc.get_objects())
        elif live < _heap:  # it shrank (the first pause's measure held its report): measured from here
            _heap = live
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
            _allocated += gc.get_count()[0]  # net containers allocated under the pause (freeze zeroes it)
            if not _application_froze:
                gc.freeze()
                gc.unfreeze()
            gc.enable()
            if _heap < 0:  # the first pause: what it built is the live heap (a one-shot command stops here)
                _heap, _allocated = _allocated, 0


#: Net containers moved to the oldest generation since the heap was last measured.
_allocated = 0
#: Containers alive at the last full collection this module ran (-1: none yet, see ``no_gc``).
_heap = -1
#: The fewest moved containers that trigger a full collection.
COLLECT_AFTER = 100_000

#: Whether the permanent generation was found holding objects (the application uses gc.freeze()).
_application_froze = False
