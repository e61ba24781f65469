"""How adapters score a capture for detection: each event frame weighs 0, 1 or 2.

A frame weighs 2 when only this provider sends it, 1 when it could be this provider's,
0 when it is not. The score is the share of the greatest possible weight, plus a bonus of
20 as soon as any frame was recognised, capped at 100; detection picks the highest. ``Words`` are
what an adapter recognises a frame by, read by its ``sniff`` and by detection's ranking.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Collection, Iterable, Sequence

from stream_doctor.capture.base import Frame


def score(frames: Sequence[Frame], words: Words, weigh: Callable[[Frame], int], objects_only: bool = True) -> int:
    """Score event frames (by default only those whose payload is a JSON object) with ``weigh``: 0 when
    none holds one of the adapter's ``words`` (the condition detection's ranking reads)."""
    if not words.heard(frames):
        return 0
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


@dataclass(frozen=True, eq=False)
class Words:
    """The words an adapter recognises a frame by: an event name in a field of the frame's object
    (``names``, or a name beginning with one of ``prefixes``), a key of the object (``keys``), or the
    frame's own event name (``events``: an SSE ``event:``, an eventstream ``:event-type``, a data stream
    type id, or the one key of an object that wraps the event, Bedrock's ``{"contentBlockDelta": …}``).

    ``beside`` narrows ``names`` and ``prefixes``: a named frame counts only with one of these keys too
    (the Messages helper's ``content_block_stop`` carries the built ``content_block``). ``within`` is a key whose object is read
    the same way (Gemini Code Assist's ``{"response": chunk}``). The adapter's ``sniff`` scores 0 unless
    some frame holds one of its words (``heard``), and detection asks only the adapters whose words a
    capture holds: both read this one record, so the ranking cannot leave out an adapter that would
    have scored.
    """

    names: Collection[str] = frozenset()
    prefixes: tuple[str, ...] = ()
    field: str = "type"
    keys: Collection[str] = frozenset()
    events: Collection[str] = frozenset()
    beside: Collection[str] = frozenset()
    within: str | None = None

    def admits(self, frame: Frame) -> bool:
        """Whether this frame holds one of the words."""
        value = frame.value
        if self.events:
            event = frame.event
            if event is None and isinstance(value, dict) and len(value) == 1:
                event = next(iter(value))
            if event in self.events:
                return True
        if not isinstance(value, dict):
            return False
        if self._in(value):
            return True
        inner = value.get(self.within) if self.within is not None else None
        return isinstance(inner, dict) and self._in(inner)

    def _in(self, value: dict[str, Any]) -> bool:
        name = value.get(self.field)
        if isinstance(name, str) and (name in self.names or name.startswith(self.prefixes)):
            if not self.beside or any(key in value for key in self.beside):
                return True
        return any(key in value for key in self.keys)

    def heard(self, frames: Iterable[Frame]) -> bool:
        """Whether any event frame holds one of the words: without one the adapter scores 0."""
        return any(self.admits(frame) for frame in frames if frame.kind == "event")


def distinct(frames: Iterable[Frame], words: Iterable[Words]) -> list[Frame]:
    """The first event frame of each shape, where a shape is all that ``Words.admits`` of these ``words``
    reads of a frame (its event name, its keys, the value of each ``field``, the same of each ``within``
    object): ``words.heard`` of these says what it says of all the frames. A stream repeats a few shapes,
    so detection asks each adapter about a few frames, not 50."""
    fields = tuple({w.field for w in words})
    withins = tuple({w.within for w in words if w.within is not None})
    first: dict[object, Frame] = {}
    for frame in frames:
        if frame.kind != "event":
            continue
        try:
            first.setdefault(_shape(frame, fields, withins), frame)
        except TypeError:  # a field holds an array or an object (unhashable): a shape of its own
            first[id(frame)] = frame
    return list(first.values())


def _shape(frame: Frame, fields: tuple[str, ...], withins: tuple[str, ...]) -> object:
    value = frame.value
    if not isinstance(value, dict):
        return frame.event  # ``admits`` reads nothing of it but that it is no object
    inner = [value.get(key) for key in withins]
    return (
        frame.event,
        tuple(value),
        tuple(map(value.get, fields)),
        tuple((tuple(each), tuple(map(each.get, fields))) if isinstance(each, dict) else None for each in inner),
    )
