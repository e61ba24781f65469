"""Every registered reporter satisfies the reporter Protocol (``reporters/interface.py``) for its kind:
a replay's render a ``Report``, check's a ``CheckResult``, and none takes both (branching on the type)."""

from __future__ import annotations

import inspect
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from stream_doctor.reporters import CHECK_FORMATS, REPLAY_FORMATS
from stream_doctor.reporters.interface import PieceReporter, Reporter


def kind(reporter: Any) -> str | None:
    """The one report type a reporter's functions take (as written: the modules' annotations are text), or None."""
    functions = [reporter.render] + ([reporter.pieces] if isinstance(reporter, PieceReporter) else [])
    taken = {str(next(iter(inspect.signature(f).parameters.values())).annotation) for f in functions}
    return taken.pop() if len(taken) == 1 else None


@pytest.mark.parametrize(("formats", "expected"), [(REPLAY_FORMATS, "Report"), (CHECK_FORMATS, "CheckResult")])
def test_each_registered_reporter_renders_its_own_kind_of_report(formats: Any, expected: str) -> None:
    for name in formats:
        module = formats[name]
        assert isinstance(module, ModuleType) and isinstance(module, Reporter), name
        assert kind(module) == expected, f"{name}: {module.__name__} renders {kind(module)}, not {expected}"


def test_a_reporter_that_branches_on_the_report_type_is_neither_kind() -> None:
    def render(report: Report | CheckResult, options: Any) -> str:  # type: ignore[name-defined]  # noqa: F821
        return ""

    def pieces(report: Report, options: Any) -> Any:  # type: ignore[name-defined]  # noqa: F821
        return iter(())

    assert kind(SimpleNamespace(render=render)) == "Report | CheckResult"
    assert kind(SimpleNamespace(render=render, pieces=pieces)) is None  # render and pieces disagree
    assert not isinstance(SimpleNamespace(pieces=pieces), Reporter)  # no render: no reporter
