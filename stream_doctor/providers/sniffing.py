"""How adapters score a capture for detection: each event frame weighs 0, 1 or 2.

A frame weighs 2 when only this provider sends it, 1 when it could be this provider's,
0 when it is not. The score is the share of the greatest possible weight, plus a bonus of
20 as soon as any frame was recognised, capped at 100; detection picks the highest.
"""

from __future__ import annotations

from typing import Any, Callable, Collection, Sequence

from stream_doctor.capture.base import Frame


def score(frames: Sequence[Frame], weigh: Callable[[Frame], int], objects_only: bool = True) -> int:
    """Score event frames (by default only those whose payload is a JSON object) with ``weigh``."""
    seen = known = 0
    for frame in frames:
        if frame.kind != "event" or (objects_only and not isinstance(frame.value, dict)):
            continue
        seen += 1
        known += weigh(frame)
    if not seen:
        return 0
    return min(100, int(100 * known / (seen * 2)) + (20 if known else 0))


def by_type(field: str, known: Collection[str], strong: Collection[str] = ()) -> Callable[[Frame], int]:
    """Weigh a frame by the event name in ``field``: 2 when it is in ``strong``, 1 when in ``known``."""

    def weigh(frame: Frame) -> int:
        kind: Any = frame.value.get(field)
        if not isinstance(kind, str) or kind not in known:
            return 0
        return 2 if not strong or kind in strong else 1

    return weigh
