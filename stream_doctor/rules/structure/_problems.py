"""Shared by the SD4xx rules: each reports the accumulator's stream problems of one kind."""

from __future__ import annotations

from typing import Callable, Iterator, Sequence, TypeVar

from stream_doctor.accumulate.irregularities import BlockEvent, StreamProblem
from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.capture.base import Pos
from stream_doctor.rules.base import Rule, of_kind
from stream_doctor.util.wording import excerpt
from stream_doctor.values.findings import Finding

A = TypeVar("A", bound=StreamProblem)
B = TypeVar("B", bound=BlockEvent)


def problems_of(
    stream: AccumulatedStream,
    rule: Rule,
    kind: type[A],
    message: Callable[[A], str],
    hint: str,
    related: Callable[[A], list[tuple[str, Pos | None]]] = lambda problem: [],
) -> Iterator[Finding]:
    for problem in of_kind(stream, kind):
        yield rule.finding(stream, problem.pos, message(problem), hint, related(problem))


def block(key: object) -> str:
    return f"block index {key}"


def grouped(stream: AccumulatedStream, kind: type[B]) -> list[list[B]]:
    """Block events of one kind, grouped by message and block key, in order of first appearance."""
    groups: dict[tuple[int | None, str], list[B]] = {}
    for problem in of_kind(stream, kind):
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
