"""What ``check`` found: each capture's verdict (``CaptureResult``) and the run's (``CheckResult``).

``check.run`` builds it; the check reporters (terminal, JSON, JUnit, SARIF, GitHub, Markdown, JSON
Lines, statistics) read it and compute nothing of their own. A replay's own report is ``values/report.py``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from stream_doctor.values.finding_counts import Statistic, statistics_of
from stream_doctor.values.findings import Finding, Severity
from stream_doctor.values.report import _codes, severity_counts

if TYPE_CHECKING:
    from stream_doctor.config.expectations import Expectation
    from stream_doctor.values.options import Options


@dataclass(frozen=True)
class Replayed:
    """What check keeps of one replay (a worker sends this back, not the whole ``Report``)."""

    provider: str
    calls: int
    findings: tuple[Finding, ...]
    # The replay's JSON report (report-v1), serialised: a worker sends one bytes object back rather
    # than a dict per call (pickling 100,000 call dicts costs more than the replay itself).
    report_json: bytes
    expected: tuple[Any, ...] = ()  # config.expectations.Expectation: what the envelope header's "expect" declares

    @property
    def report(self) -> dict[str, Any]:
        """The replay's JSON report as plain data (None when check was told not to keep it)."""
        import orjson

        return orjson.loads(self.report_json)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class CaptureResult:
    path: str
    options: Options
    replayed: Replayed | None  # None when the capture could not be replayed
    findings: tuple[Finding, ...]  # the replay's, or the SD000 finding
    expected: tuple[Finding, ...]
    unexpected: tuple[Finding, ...]  # including SD900 for each stale expectation
    stale: tuple[Expectation, ...]
    members: tuple[str, ...] = ()  # a session (``path`` its folder): the captures replayed as one conversation

    @property
    def shown(self) -> str:
        """The entry as text reports name it: a session's folder ends with "/", as a folder does in a listing."""
        return self.path + "/" if self.members else self.path

    @property
    def session_note(self) -> str | None:
        """``2 files as one conversation`` for a session, else None."""
        if not self.members:
            return None
        count = len(self.members)
        return f"{count:,} file{'s' if count != 1 else ''} as one conversation"

    @property
    def unreadable(self) -> bool:
        return self.replayed is None

    @property
    def accepted_unreadable(self) -> bool:
        """Unreadable, and its expectations declare SD000: it passes, and every report still says so."""
        return self.replayed is None and any(f.code == "SD000" for f in self.expected)

    @cached_property
    def failures(self) -> tuple[Finding, ...]:
        """What fails this capture: unexpected findings at or above --fail-on (SD000 and SD900 are errors)."""
        return tuple(f for f in self.unexpected if f.severity >= self.options.fail_on)

    @cached_property
    def below_threshold(self) -> tuple[Finding, ...]:
        """Unexpected findings below --fail-on: reported, not failing."""
        return tuple(f for f in self.unexpected if f.severity < self.options.fail_on)

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    @cached_property
    def counts(self) -> dict[Severity, int]:
        return severity_counts(self.findings)

    def status(self, finding: Finding) -> str:
        """How check judged one of this capture's findings: expected, failure or below-fail-on."""
        if finding in self._expected_set:
            return "expected"
        return "failure" if finding.severity >= self.options.fail_on else "below-fail-on"

    @cached_property
    def _expected_set(self) -> frozenset[Finding]:
        return frozenset(self.expected)

    @cached_property
    def reported(self) -> tuple[Finding, ...]:
        """Every finding of the capture once: the replay's, then the SD900 ones check added."""
        seen = set(self.findings)
        return self.findings + tuple(f for f in self.unexpected if f not in seen)


@dataclass(frozen=True)
class SpecialFile:
    """A file ``check`` met but never opened, because it is not a regular file: reading a FIFO waits
    for a writer, a device never ends."""

    path: str
    kind: str  # fifo, character-device, block-device, socket, directory, broken-link, outside-link, other

    @property
    def described(self) -> str:
        from stream_doctor.capture.limits import KIND_WORDS

        return KIND_WORDS.get(self.kind, KIND_WORDS["other"])


@dataclass(frozen=True)
class CheckResult:
    captures: tuple[CaptureResult, ...]  # sorted by path
    skipped: tuple[str, ...]
    fail_on: Severity
    config: str | None  # the configuration file used
    updated: tuple[str, ...] = ()  # sidecars written or removed by --update-expectations
    special: tuple[SpecialFile, ...] = ()  # not regular files (FIFOs, devices, sockets), never opened
    accepted: tuple[str, ...] = ()  # unreadable captures whose SD000 --update-expectations just declared
    # Where the run's paths are (SARIF's URIs): the repository root holding the working directory (or
    # the working directory outside a repository), absolute, and the working directory relative to it.
    root: str | None = None
    base: str = ""

    @property
    def failed(self) -> bool:
        return any(c.failed for c in self.captures)

    @cached_property
    def failures(self) -> tuple[tuple[CaptureResult, Finding], ...]:
        return tuple((c, f) for c in self.captures for f in c.failures)

    @cached_property
    def expected(self) -> tuple[tuple[CaptureResult, Finding], ...]:
        return tuple((c, f) for c in self.captures for f in c.expected)

    @cached_property
    def below_threshold(self) -> tuple[tuple[CaptureResult, Finding], ...]:
        return tuple((c, f) for c in self.captures for f in c.below_threshold)

    @cached_property
    def totals(self) -> dict[Severity, int]:
        return {s: sum(c.counts[s] for c in self.captures) for s in Severity}

    @property
    def failed_captures(self) -> int:
        return sum(1 for c in self.captures if c.failed)

    @property
    def unreadable(self) -> int:
        return sum(1 for c in self.captures if c.unreadable)

    @cached_property
    def accepted_unreadable(self) -> tuple[CaptureResult, ...]:
        """Unreadable captures that pass because their expectations declare SD000. Accepting one is
        allowed (a fixture kept broken on purpose), hiding it is not: every check report says
        ``unreadable_accepted_words`` in its summary."""
        return tuple(c for c in self.captures if c.accepted_unreadable)

    @property
    def unreadable_accepted_words(self) -> str | None:
        """``1 capture unreadable (accepted by its expectations)``, or None when there is none."""
        count = len(self.accepted_unreadable)
        if not count:
            return None
        if count == 1:
            return "1 capture unreadable (accepted by its expectations)"
        return f"{count:,} captures unreadable (accepted by their expectations)"

    @property
    def stale(self) -> int:
        return sum(len(c.stale) for c in self.captures)

    @cached_property
    def code_counts(self) -> dict[str, int]:
        """How many findings of each code over every capture, sorted by code."""
        return _codes(f for c in self.captures for f in c.reported)

    @cached_property
    def statistics(self) -> tuple[Statistic, ...]:
        """One row per code and severity over every capture (``--statistics``): most frequent first, then by code."""
        return statistics_of(f for c in self.captures for f in c.reported)

    def summary(self) -> dict[str, Any]:
        """The JSON report's ``summary``: captures and findings counted."""
        captures = self.captures
        return {
            "captures": len(captures),
            "passed": len(captures) - self.failed_captures,
            "failed": self.failed_captures,
            "unreadable": self.unreadable,
            "unreadable_accepted": len(self.accepted_unreadable),
            "skipped": len(self.skipped),
            "special_files": len(self.special),
            "findings": {s.label: self.totals[s] for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)},
            "expected": len(self.expected),
            "failures": len(self.failures),
            "stale_expectations": self.stale,
        }
