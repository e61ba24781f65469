"""The recording proxy's live lines: one line per finding as it is found, a summary per conversation
when the proxy stops, and the lines of its log. Capture text is neutralised as in every text report
(``_neutral``): a line never carries a control character, a line break or a workflow command."""

from __future__ import annotations

from collections import Counter
from typing import Iterable

from stream_doctor.reporters._neutral import defuse_commands, text
from stream_doctor.values.findings import Finding, Severity


def finding(found: Finding) -> str:
    """``warning SD608 echoed-empty-input  captures/0001-….jsonl:9 (interaction 2, request …): message``"""
    return defuse_commands(
        f"{found.severity.label:<7} {found.code} {text(found.name)}  {text(str(found.location))}: {text(found.message)}"
    )


def summary(path: str, exchanges: int, findings: Iterable[Finding]) -> str:
    """``captures/0001-….jsonl: 2 exchanges, 0 errors, 1 warning, 0 info``"""
    counts = Counter(f.severity for f in findings)
    plural = "" if exchanges == 1 else "s"
    parts = [
        f"{counts[Severity.ERROR]} error{'' if counts[Severity.ERROR] == 1 else 's'}",
        f"{counts[Severity.WARNING]} warning{'' if counts[Severity.WARNING] == 1 else 's'}",
        f"{counts[Severity.INFO]} info",
    ]
    return defuse_commands(f"{text(path)}: {exchanges} exchange{plural}, {', '.join(parts)}")


def log_line(line: str) -> str:
    """A line of the proxy's log (an exchange, a limit, a diagnosis that stopped): what the client or the
    upstream put in it (a URL path, decoded or not, a method, a header, an error) shown escaped."""
    return defuse_commands(text(line))
