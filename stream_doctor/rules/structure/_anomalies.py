"""Shared by the SD4xx rules: each reports the accumulator's anomalies of one kind."""

from __future__ import annotations

from typing import Any, Callable, Iterator

from stream_doctor.accumulate.stream import AccumulatedStream, Anomaly
from stream_doctor.capture.base import Pos
from stream_doctor.findings import Finding
from stream_doctor.rules.base import Rule, excerpt


def anomalies_of(
    stream: AccumulatedStream,
    rule: Rule,
    kind: str,
    message: Callable[[Anomaly, dict[str, Any]], str],
    hint: str,
    related: Callable[[dict[str, Any]], list[tuple[str, Pos | None]]] = lambda detail: [],
) -> Iterator[Finding]:
    for anomaly in stream.anomalies:
        if anomaly.kind == kind:
            yield rule.finding(stream, anomaly.pos, message(anomaly, anomaly.detail), hint, related(anomaly.detail))


def block(detail: dict[str, Any]) -> str:
    return f"block index {detail.get('key')}"


def grouped(stream: AccumulatedStream, kind: str) -> list[list[Anomaly]]:
    """Anomalies of one kind, grouped by message and block key, in order of first appearance."""
    groups: dict[tuple[int | None, Any], list[Anomaly]] = {}
    for anomaly in stream.anomalies:
        if anomaly.kind == kind:
            groups.setdefault((anomaly.message, repr(anomaly.detail.get("key"))), []).append(anomaly)
    return list(groups.values())


def describe_events(group: list[Anomaly]) -> str:
    """``3 input_json_delta fragments (47 characters: `{"city"…`) and a stop``."""
    deltas = [a for a in group if a.detail.get("event") != "stop"]
    stops = len(group) - len(deltas)
    parts = []
    if deltas:
        kinds = sorted({str(a.detail.get("event")) for a in deltas})
        text = "".join(str(a.detail.get("text", "")) for a in deltas)
        size = sum(int(a.detail.get("size", 0)) for a in deltas)
        noun = "event" if len(deltas) == 1 else "events"
        carried = f", carrying {excerpt(text, 60)}" if text else ""
        parts.append(f"{len(deltas)} {'/'.join(kinds)} {noun} ({size} characters{carried})")
    if stops:
        parts.append("a stop" if stops == 1 else f"{stops} stops")
    return " and ".join(parts)
