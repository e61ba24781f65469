"""Which stream rules a turn is handed: the selected rules by what they read, arranged once a selection.

Most stream rules report one kind of problem the reader or the accumulator recorded (``Rule.reads``);
a turn without any (the common case: a clean turn of a long session) has nothing for them, so it is
handed only the rules that read the stream itself. A rule's findings are the same either way: its
check reads the very problems it declares (``rules.base.problems``). Of those, a rule that finds
nothing without some part of the stream (``Rule.needs``: an incomplete call, an error event …) is
handed only the turns that have it: a clean turn is told from one pass (``present``).
"""

from __future__ import annotations

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.rules.base import Fact, Need, Rule


def present(stream: AccumulatedStream) -> set[Need]:
    """The parts of the stream the rules' ``needs`` name that it has (none, for a clean turn)."""
    found: set[Need] = set()
    for call in stream.calls:
        if call.status != "complete":
            found.add("incomplete-call")
        if call.parse_failure is not None:
            found.add("unparsed-call")
        if call.server_side:
            found.add("server-call")
    for message in stream.messages:
        if message.error is not None:
            found.add("message-error")
        elif message.stopped is None:
            found.add("unstopped-message")
        if message.stop_category == "pause":
            found.add("paused-message")
    for execution in stream.executions:
        if execution.call is None:
            found.add("unknown-execution")
            continue
        if execution.call_state != "complete":
            found.add("early-execution")
        if execution.previous is not None:
            found.add("repeated-execution")
    return found


class Dispatch:
    """The selected stream rules, as every turn (``every_turn``: those that read the stream itself, of
    which ``always`` need nothing of it, the others are ``by_need``) and by each fact they read (``by_fact``)."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.every_turn = tuple(rule for rule in rules if rule.reads is None)
        self.always = tuple(rule for rule in self.every_turn if rule.needs is None)
        by_need: dict[Need, list[Rule]] = {}
        for rule in self.every_turn:
            if rule.needs is not None:
                by_need.setdefault(rule.needs, []).append(rule)
        self.by_need = {need: tuple(needing) for need, needing in by_need.items()}
        by_fact: dict[Fact, list[Rule]] = {}
        for rule in rules:
            for fact in rule.reads or ():
                by_fact.setdefault(fact, []).append(rule)
        self.by_fact = {fact: tuple(readers) for fact, readers in by_fact.items()}

    def rules_for(self, stream: AccumulatedStream) -> tuple[Rule, ...]:
        """The rules with something to read in this stream: those of the whole stream that need nothing
        of it or a part it has, then each that reads a kind or type of problem it has, once."""
        needs = present(stream)
        found = self.always
        if needs:
            found += tuple(rule for need, needing in self.by_need.items() if need in needs for rule in needing)
        if not stream.problems and not stream.stream_problems:
            return found
        by_fact = self.by_fact
        wanted: dict[str, Rule] = {}
        for problem in stream.problems:
            for rule in by_fact.get(problem.kind, ()):
                wanted[rule.code] = rule
        for stream_problem in stream.stream_problems:
            for rule in by_fact.get(type(stream_problem), ()):
                wanted[rule.code] = rule
        return (*found, *wanted.values()) if wanted else found
