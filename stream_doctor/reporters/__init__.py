"""Reporters stage: pure ``render(report, options) -> str`` functions; they never print or read CLI flags.

Every reporter takes the report it renders (a replay's ``Report``, ``values/report.py``, or check's
``CheckResult``, ``check/result.py``) and one ``RenderOptions``; what more than one reporter needs is
computed by the report, not here.

A format whose output grows with the report (JSON, JSON Lines, SARIF, check's JSON and JUnit) also
has ``pieces(report, options) -> Iterator[bytes]``: the same output as UTF-8 bytes, made a piece
at a time as it is read (each call, each finding), so that nothing holds the whole of it;
``render`` is those pieces joined. The CLI writes the pieces as they come (``rendered`` below,
``cli/output.py``); reporters still never write.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any, Iterator, Sequence, TypeVar

from stream_doctor.util.registry import LazyRegistry

T = TypeVar("T")

#: ``replay --format``: the reporter module of each format, imported when used (the registry idiom of
#: readers, adapters and rules). Each has ``render(Report, RenderOptions) -> str``.
REPLAY_FORMATS: LazyRegistry[ModuleType] = LazyRegistry(
    {name: f"stream_doctor.reporters.{module}" for name, module in
     {"terminal": "terminal", "json": "json_report", "jsonl": "jsonl", "html": "html"}.items()}
)  # fmt: skip
FORMATS = tuple(REPLAY_FORMATS)

#: ``check --report FORMAT[:PATH]``: the reporter module of each format, imported when used. Each has
#: ``render(CheckResult, RenderOptions) -> str``.
CHECK_FORMATS: LazyRegistry[ModuleType] = LazyRegistry(
    {name: f"stream_doctor.reporters.{module}" for name, module in
     {"terminal": "check_terminal", "json": "check_json", "junit": "junit", "sarif": "sarif", "github": "github",
      "markdown": "markdown", "jsonl": "check_jsonl", "statistics": "check_statistics"}.items()}
)  # fmt: skip


class MissingExtra(RuntimeError):
    """A reporter needs an optional dependency that is not installed; the message says how to install it."""


@dataclass(frozen=True)
class RenderOptions:
    """How to render, the same for every reporter (each reads the fields that apply to it)."""

    width: int = 100  # text reports: the line width
    color_system: str | None = None  # rich colour system ("standard", "truecolor" …); None: plain text
    timeline: bool = False  # replay's terminal report: every event with its position
    max_rows: int = 200  # text reports: rows per list (calls, findings …) before a "… N more" line; 0: all

    def rows(self, items: Sequence[T]) -> Sequence[T]:
        """The rows a text report prints of a list: the first ``max_rows`` (all of them when it is 0)."""
        return items[: self.max_rows] if self.max_rows else items


def rendered(reporter: ModuleType, report: Any, options: RenderOptions) -> str | Iterator[bytes]:
    """What to write for ``report`` in a reporter module's format: its pieces when it makes them, else its text."""
    pieces = getattr(reporter, "pieces", None)
    return pieces(report, options) if pieces is not None else reporter.render(report, options)  # type: ignore[no-any-return]
