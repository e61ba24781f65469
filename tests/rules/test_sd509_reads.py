"""SD509 reads a call's arguments only when another call of the message runs the same tool: a call
alone under its name cannot have a twin, and parsing and serialising its arguments again cost a
replay of one long call as much as parsing the capture (issue 34)."""

from __future__ import annotations

from typing import Any

import pytest

from stream_doctor.accumulate.stream import ToolCall
from stream_doctor.engine.pipeline import replay
from stream_doctor.values.options import Options


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """The names of the calls whose parsed arguments are read from now on."""
    reads: list[str | None] = []
    parsed = ToolCall.arguments

    def counted(call: ToolCall) -> Any:
        reads.append(call.name)
        return parsed.fget(call)  # type: ignore[attr-defined]

    monkeypatch.setattr(ToolCall, "arguments", property(counted))
    return reads


def test_twins_are_read_and_found(monkeypatch: pytest.MonkeyPatch) -> None:
    reads = _reads(monkeypatch)
    report = replay("fixtures/openai/duplicate_call_reemitted.sse", Options(select=("SD509",)))
    assert [f.code for f in report.findings] == ["SD509"]
    assert set(reads) == {"send_email"}


def test_calls_of_different_tools_are_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Near miss: two calls in one message, each of its own tool."""
    reads = _reads(monkeypatch)
    report = replay("fixtures/anthropic/parallel_calls.sse", Options(select=("SD509",)))
    calls = report.stream.calls
    assert len(calls) >= 2 and len({call.name for call in calls}) == len(calls)
    assert report.findings == () and reads == []
