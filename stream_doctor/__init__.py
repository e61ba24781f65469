"""stream-doctor: replay captured LLM streams and diagnose how their tool calls were assembled.

The public API is what ``__all__`` names (documented in docs/api.md)::

    from stream_doctor import replay, Report

    report = replay("capture.sse")
    assert not report.failed, report.findings

Every other module is internal: it may change in any release. Importing the package is cheap:
the names below load their modules on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
    "Finding",
    "Location",
    "MinimizeError",
    "Minimized",
    "Report",
    "RunError",
    "Severity",
    "__version__",
    "minimize",
    "render",
    "replay",
]

if TYPE_CHECKING:
    from stream_doctor.api import minimize, render, replay
    from stream_doctor.engine.stages import RunError
    from stream_doctor.minimizer.run import Minimized, MinimizeError
    from stream_doctor.util.version import __version__
    from stream_doctor.values.findings import Finding, Location, Severity
    from stream_doctor.values.report import Report

_LAZY = {
    "replay": "stream_doctor.api",
    "render": "stream_doctor.api",
    "minimize": "stream_doctor.api",
    "Minimized": "stream_doctor.minimizer.run",
    "MinimizeError": "stream_doctor.minimizer.run",
    "Report": "stream_doctor.values.report",
    "RunError": "stream_doctor.engine.stages",
    "Finding": "stream_doctor.values.findings",
    "Location": "stream_doctor.values.findings",
    "Severity": "stream_doctor.values.findings",
    "__version__": "stream_doctor.util.version",  # defined below every layer, which nothing imports the root for
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'stream_doctor' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
