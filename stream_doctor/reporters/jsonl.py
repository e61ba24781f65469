"""JSON Lines: one JSON object per line, for streaming large results into other tools.

Every line has a ``type``. A replay gives one ``call`` line per call (the JSON report's call
objects), one ``finding`` line per finding, then one ``summary`` line; ``check`` gives one
``finding`` line per finding of every capture (with its ``capture`` path and how check judged
it: ``status`` expected, failure or below-fail-on), then one ``summary`` line. The summary comes
last, so a reader knows the output is complete. Each line parses on its own; capture content is
escaped as in the JSON reports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator

import orjson

from stream_doctor import jsontext
from stream_doctor.report import Report
from stream_doctor.reporters import RenderOptions
from stream_doctor.reporters._neutral import json_pieces
from stream_doctor.reporters.json_report import call_dicts, finding_dict, summary

if TYPE_CHECKING:
    from stream_doctor.check.result import CheckResult


def render(report: Report | CheckResult, options: RenderOptions) -> str:
    return b"".join(pieces(report, options)).decode()


def pieces(report: Report | CheckResult, options: RenderOptions) -> Iterator[bytes]:
    """The lines, each serialised when its turn comes."""
    return json_pieces(jsontext.shown(line, orjson.OPT_APPEND_NEWLINE) for line in lines(report))


def lines(report: Report | CheckResult) -> Iterator[dict[str, Any]]:
    """The objects, one per line, in order."""
    if not isinstance(report, Report):
        for capture in report.captures:
            for finding in capture.reported:
                yield {
                    "type": "finding",
                    "capture": capture.path,
                    "status": capture.status(finding),
                    **finding_dict(finding),
                }
        yield {"type": "summary", "fail_on": report.fail_on.label, "failed": report.failed, "summary": report.summary()}
        return
    for call in call_dicts(report):
        yield {"type": "call", **call}
    for finding in report.findings:
        yield {"type": "finding", **finding_dict(finding)}
    yield {"type": "summary", "capture": report.path, **summary(report)}
