"""Does a candidate still show what the minimizer keeps? The engine replays it, in-process, and says.

A candidate is accepted when it replays at all, as the same container and provider as the capture
being minimized, every kept code still fires (on the kept call, when one is named) and no finding
at warning or above appears whose code the original did not show.
"""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING

from stream_doctor.minimizer.ddmin import Stop
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.values.options import Options
    from stream_doctor.values.report import Report


class Oracle:
    """Replays candidates (memoised by their bytes' digest) and counts the replays."""

    def __init__(
        self,
        name: str,
        options: Options,
        keep: tuple[str, ...],
        call_id: str | None,
        allowed: frozenset[str],
        provider: str,
        container: str,
        deadline: float | None,
    ) -> None:
        self.name, self.options, self.keep, self.call_id = name, options, keep, call_id
        self.allowed, self.provider, self.container, self.deadline = allowed, provider, container, deadline
        self.checks = 0
        self._seen: dict[bytes, bool] = {}

    def __call__(self, data: bytes) -> bool:
        digest = hashlib.blake2b(data, digest_size=16).digest()
        known = self._seen.get(digest)
        if known is not None:
            return known
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise Stop
        self.checks += 1
        verdict = self._judge(data)
        self._seen[digest] = verdict
        return verdict

    def _judge(self, data: bytes) -> bool:
        report = replay_quietly(self.name, self.options, data)
        if report is None:
            return False
        try:
            return self.judge(report)
        finally:
            report.close()

    def judge(self, report: Report) -> bool:
        if report.stream.capture.provider != self.provider:
            return False
        if report.source is not None and report.source.container != self.container:
            return False
        if any(f.severity >= Severity.WARNING and f.code not in self.allowed for f in report.findings):
            return False
        return all(any(self.wanted(f, code) for f in report.findings) for code in self.keep)

    def wanted(self, finding: Finding, code: str) -> bool:
        return finding.code == code and (self.call_id is None or finding.call_id == self.call_id)


def replay_quietly(name: str, options: Options, data: bytes) -> Report | None:
    """The engine's report of ``data``, or None when it cannot be replayed (or the engine fails on it:
    a candidate is only ever a cut of a real capture, and such a failure is no reason to stop)."""
    from stream_doctor.engine.pipeline import replay

    try:
        return replay(name, options, data)
    except Exception:  # noqa: BLE001 - a rejected candidate, whatever the reason
        return None
