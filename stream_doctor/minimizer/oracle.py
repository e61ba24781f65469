"""Does a candidate still show what the minimizer keeps? The engine replays it, in-process, and says.

A candidate is accepted when it replays at all, as the same container and provider as the capture
being minimized, every kept code still fires as the original's finding of it did (the same claim:
code, severity and kind, ``Finding.claim``; on the kept call, when one is named) and no finding at
warning or above appears whose claim the original did not show: a cut that turns a cut-off object
into invalid JSON changes what a client does with it, so it is not the same finding.

A candidate of an envelope that differs from the capture the search holds in a few turns is judged
by replaying only the window of turns its change can reach (``window``): the other turns' findings
are the held capture's, already judged. The result of a search that used windows is checked by a
whole replay (``run._searched``).
"""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING

from stream_doctor.minimizer.ddmin import Stop
from stream_doctor.minimizer.window import Window, turns_of, window
from stream_doctor.values.findings import Claim, Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.minimizer.units import Layout, Unit
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
        claims: frozenset[Claim],
        allowed: frozenset[Claim],
        provider: str,
        container: str,
        deadline: float | None,
    ) -> None:
        self.name, self.options, self.keep, self.call_id = name, options, keep, call_id
        self.claims = claims  # what the original's kept findings say
        self.allowed, self.provider, self.container, self.deadline = allowed, provider, container, deadline
        self.checks = 0
        self._seen: dict[bytes, bool] = {}
        self.reach: int | None = None  # a window's width (``window.width``); None: every candidate whole
        self.kept_turns: dict[str, frozenset[int]] | None = None  # where the held capture shows each kept code
        self.windows = 0  # candidates judged by a window
        self._windows: dict[bytes, tuple[Finding, ...] | None] = {}
        self._shown: dict[bytes, dict[str, frozenset[int | None]]] = {}  # accepted replays' kept codes, by turn

    def accepts(self, layout: Layout, held: list[Unit], candidate: list[Unit]) -> bool:
        """Whether ``candidate`` shows what is kept, ``held`` being the capture the search holds: by the
        window of the turns it changed when there is one, else by a whole replay."""
        shown = self.kept_turns
        found = None if self.reach is None or shown is None else window(held, candidate, self.reach)
        if found is None or shown is None:
            return self._whole(layout, candidate)
        verdict = self._judge_window(layout, found, shown, {number for number, _ in turns_of(candidate) or ()})
        if verdict is None:
            return False
        self.kept_turns = verdict
        return True

    def _whole(self, layout: Layout, candidate: list[Unit]) -> bool:
        accepted, digest = self._verdict(layout.join(candidate))
        if accepted and self.reach is not None:
            self.kept_turns = self.kept_turns_of(self._shown.get(digest), candidate)
        return accepted

    def __call__(self, data: bytes) -> bool:
        return self._verdict(data)[0]

    def _verdict(self, data: bytes) -> tuple[bool, bytes]:
        """Whether ``data`` is accepted (memoised by its digest), and the digest."""
        digest = hashlib.blake2b(data, digest_size=16).digest()
        known = self._seen.get(digest)
        if known is not None:
            return known, digest
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise Stop
        self.checks += 1
        verdict = self._judge(data, digest)
        self._seen[digest] = verdict
        return verdict, digest

    def _judge_window(
        self, layout: Layout, found: Window, shown: dict[str, frozenset[int]], present: set[int]
    ) -> dict[str, frozenset[int]] | None:
        """Where each kept code shows after the change, or None when the window rejects it: a new claim at
        warning or above on a judged turn, or a kept code shown on none."""
        findings = self._window_findings(layout, found) if found.units else ()
        if findings is None:
            return None
        numbers = found.turns

        def turn(finding: Finding) -> int | None:  # the capture's number of a finding's turn
            at = finding.location.interaction
            if len(numbers) == 1:
                return numbers[0]
            return numbers[at - 1] if at is not None and 0 < at <= len(numbers) else None

        judged = [f for f in findings if turn(f) is None or turn(f) in found.judged]
        if any(f.severity >= Severity.WARNING and f.claim not in self.allowed for f in judged):
            return None
        where: dict[str, frozenset[int]] = {}
        for code in self.keep:
            here = {turn(f) for f in judged if self.wanted(f, code)}
            if None in here:
                return None  # a kept finding placed in no turn: the whole replay tells
            where[code] = frozenset(n for n in here if n is not None) | ((shown[code] & present) - found.judged)
            if not where[code]:
                return None
        return where

    def _window_findings(self, layout: Layout, found: Window) -> tuple[Finding, ...] | None:
        """The findings of the window's replay (memoised), None when it does not replay as the capture."""
        data = layout.join(found.units)
        digest = hashlib.blake2b(data, digest_size=16).digest()
        if digest in self._windows:
            return self._windows[digest]
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise Stop
        self.checks += 1
        self.windows += 1
        report = replay_quietly(self.name, self.options, data)
        findings: tuple[Finding, ...] | None = None
        if report is not None:
            with report:
                if self._same_capture(report):
                    findings = tuple(report.findings)
        self._windows[digest] = findings
        return findings

    def kept_turns_of(
        self, shown: dict[str, frozenset[int | None]] | None, units: list[Unit]
    ) -> dict[str, frozenset[int]] | None:
        """Where an accepted candidate shows each kept code, by the capture's turn numbers (``shown``: by
        the interactions of its replay); None when a kept finding is placed in no turn."""
        numbers = [number for number, _ in turns_of(units) or ()]
        if shown is None or not numbers:
            return None
        where: dict[str, frozenset[int]] = {}
        for code, interactions in shown.items():
            places = {1 if len(numbers) == 1 else at for at in interactions}
            if any(at is None or not 0 < at <= len(numbers) for at in places):
                return None
            where[code] = frozenset(numbers[at - 1] for at in places if at is not None)
        return where

    def _judge(self, data: bytes, digest: bytes) -> bool:
        report = replay_quietly(self.name, self.options, data)
        if report is None:
            return False
        with report:
            if not self.judge(report):
                return False
            self._shown[digest] = {
                code: frozenset(f.location.interaction for f in report.findings if self.wanted(f, code))
                for code in self.keep
            }
            return True

    def _same_capture(self, report: Report) -> bool:
        """Whether the report reads its capture as the original was read: the same provider and container."""
        if report.stream.capture.provider != self.provider:
            return False
        return report.source is None or report.source.container == self.container

    def judge(self, report: Report) -> bool:
        if not self._same_capture(report):
            return False
        if any(f.severity >= Severity.WARNING and f.claim not in self.allowed for f in report.findings):
            return False
        return all(any(self.wanted(f, code) for f in report.findings) for code in self.keep)

    def wanted(self, finding: Finding, code: str) -> bool:
        return (
            finding.code == code
            and finding.claim in self.claims
            and (self.call_id is None or finding.call_id == self.call_id)
        )


def replay_quietly(name: str, options: Options, data: bytes) -> Report | None:
    """The engine's report of ``data``, or None when it cannot be replayed (or the engine fails on it:
    a candidate is only ever a cut of a real capture, and such a failure is no reason to stop)."""
    from stream_doctor.engine.pipeline import replay

    try:
        return replay(name, options, data)
    except Exception:  # noqa: BLE001 - a rejected candidate, whatever the reason
        return None
