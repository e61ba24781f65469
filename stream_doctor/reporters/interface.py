"""What a reporter is: a module with ``render(report, options) -> str`` (``Reporter``), and, when its
output grows with the report, ``pieces(report, options) -> Iterator[bytes]`` too (``PieceReporter``).

A replay's reporters render a ``Report`` (``REPLAY_FORMATS``), check's a ``CheckResult``
(``CHECK_FORMATS``): one module per format and kind, none branching on the type it is handed (a
format both commands have is two modules, ``jsonl``/``check_jsonl``, sharing its pieces).
``tests/test_reporters_protocol.py`` holds every registered module to its kind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from stream_doctor.check.result import CheckResult
    from stream_doctor.reporters import RenderOptions
    from stream_doctor.values.report import Report

R = TypeVar("R", contravariant=True)


@runtime_checkable
class Reporter(Protocol[R]):
    def render(self, report: R, options: RenderOptions) -> str: ...


@runtime_checkable
class PieceReporter(Reporter[R], Protocol[R]):
    def pieces(self, report: R, options: RenderOptions) -> Iterator[bytes]: ...


if TYPE_CHECKING:
    ReplayReporter = Reporter[Report]
    CheckReporter = Reporter[CheckResult]
