"""Shared by the SD0xx rules: turn the capture's input problems of some kinds into findings."""

from __future__ import annotations

from typing import Callable, Iterable, Iterator, TypeVar

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.problem_facts import ProblemFacts
from stream_doctor.rules.base import Rule, problems
from stream_doctor.values.findings import Finding

F = TypeVar("F", bound=ProblemFacts)


def problems_of(
    stream: AccumulatedStream,
    rule: Rule,
    hint: str,
    template: str = "{message}",
    words: tuple[type[F], Callable[[F], str]] | None = None,
    kinds: Iterable[str] | None = None,
) -> Iterator[Finding]:
    """Findings for the capture's problems of the kinds the rule reads (``Rule.reads``; ``kinds`` for
    a rule that reads the whole stream). A problem that carries facts of the given type (an adapter's
    ``capture/problem_facts.py`` record) is worded by the rule's function; the others carry their message."""
    wanted = set(kinds) if kinds is not None else None
    for problem in problems(stream, rule) if wanted is None else stream.problems:
        if wanted is None or problem.kind in wanted:
            facts = problem.facts
            if words is not None and isinstance(facts, words[0]):
                message = words[1](facts)
            else:
                message = problem.message
            yield rule.finding(stream, problem.pos, template.format(message=message), hint)
