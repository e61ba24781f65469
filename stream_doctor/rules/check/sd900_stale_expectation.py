"""A finding that a capture's expectations declare no longer appears.

What it checks:
    Raised by `stream-doctor check` for each expected finding (an `[[expect]]` entry of a
    capture's `.expect.toml` sidecar, or an `expect` entry of the configuration) that the
    capture no longer produces, among the rules selected for it.

Why it matters:
    A fixture recorded to show a bug must keep showing it: if a change in stream-doctor (or in
    the fixture) makes the finding disappear, the test that fixture stands for silently stops
    testing anything.

Severity:
    error. An expectation that no longer holds means the capture no longer shows what it was kept
    for.

Example:
    $ stream-doctor check fixtures/
    error   SD900 stale-expectation  fixtures/bugs/empty_input.jsonl.expect.toml:4
            expected SD102 empty-input-execution (call toolu_01A), which
            fixtures/bugs/empty_input.jsonl no longer shows

How to fix:
    If the finding went away on purpose (the capture was re-recorded, a rule was narrowed),
    remove the entry, or run `stream-doctor check --update-expectations` to rewrite the
    sidecars. Otherwise find out why the finding vanished: `stream-doctor replay` on the capture
    shows what it produces now.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from stream_doctor.rules.base import Rule, rule
from stream_doctor.values.findings import Finding, Location, Severity


@dataclass(frozen=True)
class Stale:
    """An expected finding (``expected``: its code, name and call) that ``capture`` no longer shows."""

    capture: str
    declared_at: Location
    expected: str


@rule("A finding the capture's expectations declare no longer appears", Severity.ERROR)
def check(stale: Stale, self: Rule) -> Iterable[Finding]:
    yield self.finding_at(
        stale.declared_at,
        f"expected {stale.expected}, which {stale.capture} no longer shows",
        "remove the entry if the finding went away on purpose (or run `check --update-expectations`)",
        related=(("capture", Location(stale.capture)),),
    )


def finding(capture: str, declared_at: Location, expected: str) -> Finding:
    (found,) = check.check(Stale(capture, declared_at, expected), check)
    return found
