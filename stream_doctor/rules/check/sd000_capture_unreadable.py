"""The capture cannot be replayed at all.

What it checks:
    Raised by `stream-doctor check` when a file it was given, or found by its content in a
    folder, cannot be replayed: it cannot be read, its gzip data is cut off or corrupt, its
    format is not recognised, it holds no events, or its provider cannot be detected. `replay`
    exits 2 on such a file; `check` fails that capture and goes on with the others.

Why it matters:
    A fixture that no longer replays checks nothing: the bug it was recorded to show can come
    back unnoticed. One broken file must not hide the findings of a thousand others either.

Severity:
    error. `check` cannot vouch for a capture it cannot read, so the gate fails that capture; the
    finding is about the file, never about the provider.

Example:
    $ stream-doctor check captures/
    error   SD000 capture-unreadable  captures/cut.sse.gz
            the gzip data is cut off before its end (incomplete .gz file)

How to fix:
    Record the capture again, or repair it (`stream-doctor replay FILE` shows the same error on
    its own). If the format or provider is not detected, force it with `--container` or
    `--provider`, or for some paths with `per-path-provider` in the configuration.
    When the finding points at the capture's `.expect.toml` sidecar, the sidecar is what cannot be
    read (not TOML, not a regular file, an unknown key): the capture was replayed, but what it must
    show is unknown, so it fails until the sidecar is repaired. When the message says the
    configuration governing it cannot be read, a `stream-doctor.toml` or `pyproject.toml` in the
    capture's folder or above it is not TOML or holds a bad value: the captures it governs are not
    replayed (their options are unknown) until it is repaired; the others are checked as usual.

    A file kept unreadable on purpose (a cut capture a test needs) can be accepted: declare
    `code = "SD000"` in its expectation sidecar, or let `--update-expectations` write it (it prints
    `accepted PATH as unreadable` when it does). Accepted is never hidden: the capture passes, but
    every check report still counts it in its summary (the terminal and Markdown summary line, JSON
    `summary.unreadable_accepted`, a SARIF run notification, a GitHub warning annotation, a JUnit
    suite property). `--ignore SD000` and `per-path-ignores` cannot deselect it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from stream_doctor.rules.base import Rule, rule
from stream_doctor.values.findings import Finding, Location, Severity

_HINT = "`stream-doctor replay` shows the same error; repair or re-record the capture, or force its format"
_SIDECAR_HINT = "repair the sidecar (or remove it and run `check --update-expectations`)"


@dataclass(frozen=True)
class Unreadable:
    """What ``check`` (or ``scan``) could not read: a capture, or (``sidecar``) its expectations file."""

    path: str
    message: str
    line: int | None = None
    sidecar: bool = False


@rule("The capture cannot be replayed at all (check fails it and goes on)", Severity.ERROR)
def check(unreadable: Unreadable, self: Rule) -> Iterable[Finding]:
    if unreadable.sidecar:
        message = f"the expectations cannot be read: {unreadable.message}"
        yield self.finding_at(Location(unreadable.path), message, _SIDECAR_HINT)
    else:
        yield self.finding_at(Location(unreadable.path, unreadable.line), unreadable.message, _HINT)


def finding(path: str, message: str, line: int | None = None) -> Finding:
    """The capture at ``path`` cannot be replayed: why, and where in it when a line is known."""
    (found,) = check.check(Unreadable(path, message, line), check)
    return found


def unreadable_sidecar(sidecar: str, message: str) -> Finding:
    """The capture's sidecar cannot be read: the capture fails, the other captures are still checked."""
    (found,) = check.check(Unreadable(sidecar, message, sidecar=True), check)
    return found
