"""Shared by the SD4xx rules: each reports the accumulator's stream problems of one kind."""

from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

from stream_doctor.accumulate.irregularities import BlockEvent
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.base import Pos
from stream_doctor.rules.base import Rule, problems
from stream_doctor.util.wording import excerpt
from stream_doctor.values.findings import Finding


def problems_of(
    stream: AccumulatedStream,
    rule: Rule,
    message: Callable[[Any], str],
    hint: str,
    related: Callable[[Any], list[tuple[str, Pos | None]]] = lambda problem: [],
) -> Iterator[Finding]:
    """A finding for each of the stream's problems of the type the rule reads (``Rule.reads``), worded
    by ``message`` and ``related`` (each handed a problem of that type)."""
    for problem in problems(stream, rule):
        yield rule.finding(stream, problem.pos, message(problem), hint, related(problem))


def block(key: object) -> str:
    return f"block index {key}"


def grouped(stream: AccumulatedStream, rule: Rule) -> list[list[Any]]:
    """The block events of the type the rule reads (``Rule.reads``), grouped by message and block key,
    in order of first appearance."""
    groups: dict[tuple[int | None, str], list[Any]] = {}
    for problem in problems(stream, rule):
        groups.setdefault((problem.message, repr(problem.key)), []).append(problem)
    return list(groups.values())


def describe_events(group: Sequence[BlockEvent]) -> str:
    """``3 input_json_delta fragments (47 characters: `{"city"…`) and a stop``."""
    deltas = [a for a in group if a.event != "stop"]
    stops = len(group) - len(deltas)
    parts = []
    if deltas:
        kinds = sorted({a.event for a in deltas})
        text = "".join(a.text for a in deltas)
        size = sum(a.size for a in deltas)
        noun = "event" if len(deltas) == 1 else "events"
        carried = f", carrying {excerpt(text, 60)}" if text else ""
        parts.append(f"{len(deltas)} {'/'.join(kinds)} {noun} ({size} characters{carried})")
    if stops:
        parts.append("a stop" if stops == 1 else f"{stops} stops")
    return " and ".join(parts)
