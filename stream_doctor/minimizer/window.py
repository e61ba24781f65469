"""Which turns a candidate changed, and the window of turns that judges it.

A finding reads its own turn and at most its rule's ``reach`` turns before it, never a later one
(``rules.base.Rule.reach``). So when a candidate differs from the capture the search holds in some
turns only (one edited, some removed), every other turn's findings are the ones already judged: only
the turns that see a change within the reach need judging, and each of them needs the ``reach``
turns before it to be judged as a whole replay would. Those turns, joined in order, are the window:
a small envelope the engine replays in place of the whole capture. A candidate whose turns the
engine would split otherwise (a turn's request removed) has no window, nor has a kept finding whose
rule reads every earlier turn: the whole candidate is replayed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from stream_doctor.minimizer.units import Unit

#: One turn of a candidate: its number in the capture being minimized, and its units.
Turn = tuple[int, tuple[Unit, ...]]


@dataclass(frozen=True)
class Window:
    """The units to replay, the turn (the capture's number) each turn of their replay is, and the turns
    whose findings the replay judges (the others' are those of the capture the search holds)."""

    units: list[Unit]
    turns: tuple[int, ...]
    judged: frozenset[int]


def width(keep: Iterable[str]) -> int | None:
    """How many turns before a judged one a window holds: the widest bounded reach of any rule (a new
    finding of any of them must show), or None when a kept code's rule reads every earlier turn."""
    from stream_doctor.rules import RULES

    reaches = {code: rule.reach for code, rule in RULES.items()}
    if any(reaches.get(code) is None for code in keep):
        return None
    return max(reach for reach in reaches.values() if reach is not None)


def turns_of(units: Sequence[Unit]) -> list[Turn] | None:
    """``units`` by turn, in order; None unless each turn begins with its only request, where the engine
    cuts an envelope into turns (``conversation.build.split``) whatever else the turns hold."""
    turns: list[tuple[int, list[Unit]]] = []
    for unit in units:
        if unit.kind == "request":
            turns.append((unit.turn, [unit]))
        elif turns and turns[-1][0] == unit.turn:
            turns[-1][1].append(unit)
        else:
            return None
    if len({number for number, _ in turns}) != len(turns):
        return None
    return [(number, tuple(group)) for number, group in turns]


def window(before: Sequence[Unit], after: Sequence[Unit], reach: int) -> Window | None:
    """The window that judges ``after`` against ``before`` (what the search holds), or None: replay it
    whole (no turns the engine reads alike, or the window would be the whole of it)."""
    old, new = turns_of(before), turns_of(after)
    if old is None or new is None or len(new) < 2:
        return None
    seen = {context[0]: context for context in (_context(old, at, reach) for at in range(len(old)))}
    changed = [at for at in range(len(new)) if seen.get(new[at][0]) != _context(new, at, reach)]
    replayed = sorted({at for changed_at in changed for at in range(max(0, changed_at - reach), changed_at + 1)})
    if len(replayed) == len(new):
        return None
    return Window(
        [unit for at in replayed for unit in new[at][1]],
        tuple(new[at][0] for at in replayed),
        frozenset(new[at][0] for at in changed),
    )


def _context(turns: list[Turn], at: int, reach: int) -> tuple[int, tuple[Turn, ...], bool]:
    """What turn ``at``'s findings read: the turn and the ``reach`` turns before it, and whether it is the
    last (the capture's end is the last turn's)."""
    return turns[at][0], tuple(turns[max(0, at - reach) : at + 1]), at == len(turns) - 1
