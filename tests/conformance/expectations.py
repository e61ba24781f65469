"""The corpus conformance expectations: what replaying each file of ``../shared/corpus`` must give.

``expected.yml`` holds, per corpus file, the calls rebuilt (per turn: id, name, and a hash of the raw
argument text) and every finding at warning or above (code, severity, where), each with a one-line
``why`` that cites the bytes. ``python -m tests.conformance.expectations`` rewrites the file from a
fresh replay, keeping the justifications of findings that are still there and marking new ones
``TODO`` (which the test refuses): a rule change shows up as a reviewable diff of that file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from tests.conftest import CORPUS, corpus_files

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = Path(__file__).with_name("expected.yml")
TODO = "TODO: justify from the bytes"


def corpus_names() -> list[str]:
    """Each corpus file's name as ``expected.yml`` keys it (its path under the corpus), sorted as text."""
    return sorted(p.relative_to(CORPUS).as_posix() for p in corpus_files())


def observe(name: str) -> dict[str, Any]:
    """What replaying one corpus file gives, in the shape of ``expected.yml`` (without justifications)."""
    from stream_doctor.engine.pipeline import replay
    from stream_doctor.values.findings import Severity
    from stream_doctor.values.options import Options

    report = replay(str(CORPUS / name), Options())
    calls = []
    for number, turn in enumerate(report.turns, 1):
        for call in turn.stream.calls:
            digest = hashlib.sha256(call.raw_arguments.encode("utf-8", "surrogatepass")).hexdigest()[:12]
            calls.append([number, call.call_id, call.name, digest])
    findings = [
        {
            "code": f.code,
            "severity": f.severity.label,
            "at": f"line {f.location.line}" if f.location.line is not None else "end",
            "call": f.call_id,
        }
        for f in report.findings
        if f.severity >= Severity.WARNING
    ]
    return {
        "provider": report.stream.capture.provider,
        "calls": calls,
        "findings": findings,
        "info": sorted({f.code for f in report.findings if f.severity < Severity.WARNING}),
    }


def load() -> dict[str, Any]:
    import yaml

    return yaml.safe_load(EXPECTED.read_text()) or {}


def _key(finding: dict[str, Any]) -> tuple[Any, ...]:
    return (finding["code"], finding["severity"], finding["at"], finding.get("call"))


def rewrite() -> None:
    import yaml

    old = load() if EXPECTED.exists() else {}
    fresh: dict[str, Any] = {}
    for name in corpus_names():
        seen = observe(name)
        kept = {_key(f): f.get("why", TODO) for f in (old.get(name) or {}).get("findings", [])}
        for finding in seen["findings"]:
            finding["why"] = kept.get(_key(finding), TODO)
        fresh[name] = seen
    header = "# " + __doc__.strip().splitlines()[0] + "\n# Regenerate: python -m tests.conformance.expectations\n"
    EXPECTED.write_text(
        header + yaml.safe_dump(fresh, sort_keys=True, width=120, allow_unicode=True, default_flow_style=None)
    )


if __name__ == "__main__":
    rewrite()
