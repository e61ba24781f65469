"""What ``--timeline`` and the HTML report show of a replay's events, kept compact as they are read.

Keeping every frame and event (``keep_events``) costs about ten times the capture. A timeline
needs far less: one ``Row`` per event, or per run of one block's deltas (folded, as they are
shown), with the few strings a reporter prints. The engine makes the rows while the events go to
the accumulator (``timeline_rows.Rows.add``), and keeps at most ``MAX_ROWS`` of them per replay; beyond that it
counts them (``Timeline.hidden``), and reporters say so. Reporters read ``report.timeline`` only.
A replay without ``--timeline`` (or ``keep_events``) makes no row: it imports this module, for the
report's empty ``NO_TIMELINE``, and not ``timeline_rows.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stream_doctor.values.timeline_rows import Row

#: Rows kept per replay: about 40 MB at most, and far more than a terminal or a page can show.
MAX_ROWS = 100_000


@dataclass(frozen=True)
class Timeline:
    rows: tuple[Row, ...]
    hidden: int = 0  # rows beyond MAX_ROWS: counted, not kept

    @property
    def total(self) -> int:
        return len(self.rows) + self.hidden


NO_TIMELINE = Timeline(())


def joined(timelines: list[Timeline]) -> Timeline:
    """The turns' timelines as one, in turn order."""
    if len(timelines) == 1:
        return timelines[0]
    return Timeline(tuple(row for t in timelines for row in t.rows), sum(t.hidden for t in timelines))
