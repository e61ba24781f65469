"""Rules that ``check`` reports itself: about a capture as a whole or its expectations, not its stream.

They carry the same metadata as the stream rules (code, name, summary, severity, documentation)
so SARIF, JUnit and ``explain`` treat them alike, but they are not in ``rules.RULES``:
``engine.diagnose`` runs those over a replayed stream, and these have no stream to look at.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from stream_doctor.accumulate.stream import AccumulatedStream
from stream_doctor.check import sd000_capture_unreadable, sd900_stale_expectation
from stream_doctor.findings import Finding
from stream_doctor.rules.base import FAMILIES, Rule

CHECK_FAMILY = "SD9"
CHECK_FAMILY_TITLE = "check: what `stream-doctor check` found about a capture's expectations"


@dataclass(frozen=True)
class CheckRule(Rule):
    @property
    def family(self) -> str:
        title = FAMILIES.get(self.code[:3], CHECK_FAMILY_TITLE if self.code.startswith(CHECK_FAMILY) else "")
        return title.split(":")[0]


def _no_stream_check(stream: AccumulatedStream, rule: Rule) -> Iterable[Finding]:
    return ()


CHECK_RULES: tuple[CheckRule, ...] = tuple(
    CheckRule(module.CODE, module.NAME, module.SUMMARY, module.SEVERITY, _no_stream_check, module.__doc__ or "")
    for module in (sd000_capture_unreadable, sd900_stale_expectation)
)

CAPTURE_UNREADABLE, STALE_EXPECTATION = CHECK_RULES


def lookup(code_or_name: str) -> CheckRule | None:
    wanted = code_or_name.strip()
    return next((r for r in CHECK_RULES if r.code == wanted.upper() or r.name == wanted.lower()), None)
