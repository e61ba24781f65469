"""GitHub Actions workflow commands: one annotation per finding that fails ``check``.

``::error file=PATH,line=N,title=SD102 empty-input-execution::message`` on standard output;
GitHub shows each on the file's line in the run and the pull request. Findings below
``--fail-on`` and expected findings get none, so a run where all is as expected prints nothing, but
for an unreadable capture its expectations accept (SD000): that gets a warning, never silence.
Capture content is neutralised (no control character, so no line of its own), then escaped as
the runner expects; every line of this output is one of our annotations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stream_doctor.reporters import RenderOptions
from stream_doctor.reporters._neutral import text as N
from stream_doctor.values.findings import Finding, Severity

if TYPE_CHECKING:
    from stream_doctor.check.result import CheckResult

LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def render(result: CheckResult, options: RenderOptions) -> str:
    accepted = [
        annotation(finding, " (accepted by its expectations)", Severity.WARNING) + "\n"
        for capture in result.accepted_unreadable
        for finding in capture.expected
        if finding.code == "SD000"
    ]
    return "".join(accepted) + "".join(annotation(finding) + "\n" for _capture, finding in result.failures)


def annotation(finding: Finding, note: str = "", severity: Severity | None = None) -> str:
    properties = {"file": N(finding.location.path)}
    if finding.location.line is not None:
        properties["line"] = str(finding.location.line)
    properties["title"] = f"{finding.code} {finding.name}{note}"
    listed = ",".join(f"{key}={escape_property(value)}" for key, value in properties.items())
    message = N(finding.message) + "\n" + f"hint: {N(finding.hint)}"
    where = [] if finding.location.interaction is None else [f"interaction {finding.location.interaction}"]
    if finding.location.request_path is not None:
        where.append(f"request {N(finding.location.request_path)}".rstrip())
    elif finding.location.event is not None:
        where.append(f"event {finding.location.event}")
    if where:
        message = f"{', '.join(where)}: " + message
    return f"::{LEVELS[severity or finding.severity]} {listed}::{escape_data(message)}"


def escape_data(text: str) -> str:
    """The message part: ``%``, CR and LF are encoded (the runner decodes them back)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A property value: also ``:`` and ``,``, which would end it."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")
