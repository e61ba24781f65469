"""Shared by the SD0xx rules: turn the capture's input problems of some kinds into findings."""

from __future__ import annotations

from typing import Iterable, Iterator

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.findings import Finding
from stream_doctor.rules.base import Rule


def problems_of(
    stream: AccumulatedStream, rule: Rule, kinds: Iterable[str], hint: str, template: str = "{message}"
) -> Iterator[Finding]:
    wanted = set(kinds)
    for problem in stream.problems:
        if problem.kind in wanted:
            yield rule.finding(stream, problem.pos, template.format(message=problem.message), hint)
