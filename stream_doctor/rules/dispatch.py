"""Which stream rules a turn is handed: the selected rules by what they read, arranged once a selection.

Most stream rules report one kind of problem the reader or the accumulator recorded (``Rule.reads``);
a turn without any (the common case: a clean turn of a long session) has nothing for them, so it is
handed only the rules that read the stream itself. A rule's findings are the same either way: its
check reads the very problems it declares (``rules.base.problems``).
"""

from __future__ import annotations

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Fact, Rule


class Dispatch:
    """The selected stream rules, as every turn (``every_turn``) and by each fact they read (``by_fact``)."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.every_turn = tuple(rule for rule in rules if rule.reads is None)
        by_fact: dict[Fact, list[Rule]] = {}
        for rule in rules:
            for fact in rule.reads or ():
                by_fact.setdefault(fact, []).append(rule)
        self.by_fact = {fact: tuple(readers) for fact, readers in by_fact.items()}

    def rules_for(self, stream: AccumulatedStream) -> tuple[Rule, ...]:
        """The rules with something to read in this stream: those of the whole stream, then each that
        reads a kind or type of problem it has, once."""
        if not stream.problems and not stream.stream_problems:
            return self.every_turn
        by_fact = self.by_fact
        wanted: dict[str, Rule] = {}
        for problem in stream.problems:
            for rule in by_fact.get(problem.kind, ()):
                wanted[rule.code] = rule
        for stream_problem in stream.stream_problems:
            for rule in by_fact.get(type(stream_problem), ()):
                wanted[rule.code] = rule
        return (*self.every_turn, *wanted.values()) if wanted else self.every_turn
