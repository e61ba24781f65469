"""The rows of ``--statistics`` (as ruff's): how often each code was found, at each severity.

Apart from the report model because only ``--statistics`` (``replay`` and ``check``) makes them: a
replay that prints its report does not create their class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from stream_doctor.values.findings import Finding, Severity


@dataclass(frozen=True, eq=False)
class Statistic:
    """How often one code was found (``--statistics``, as ruff's)."""

    code: str
    name: str
    severity: Severity
    count: int

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "name": self.name, "severity": self.severity.label, "count": self.count}


def statistics_of(findings: Iterable[Finding]) -> tuple[Statistic, ...]:
    """One row per code and severity: a code found at two (SD8xx: a warning for a real library, info
    for a naive pattern) is two rows, so no finding is counted at a severity it does not have."""
    first: dict[tuple[str, Severity], Finding] = {}
    counts: dict[tuple[str, Severity], int] = {}
    for finding in findings:
        key = (finding.code, finding.severity)
        first.setdefault(key, finding)
        counts[key] = counts.get(key, 0) + 1
    rows = [Statistic(code, first[code, severity].name, severity, n) for (code, severity), n in counts.items()]
    return tuple(sorted(rows, key=lambda row: (-row.count, row.code, -row.severity)))
