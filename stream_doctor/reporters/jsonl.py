"""JSON Lines of a replay: one JSON object per line, for streaming large results into other tools.

Every line has a ``type``: one ``call`` line per call (the JSON report's call objects), one
``finding`` line per finding, then one ``summary`` line (``check_jsonl.py`` is check's). The summary
comes last, so a reader knows the output is complete. Each line parses on its own; capture content
is escaped as in the JSON reports (``lined``, which check's lines go through too).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator

import orjson

from stream_doctor.reporters import RenderOptions
from stream_doctor.util import jsontext
from stream_doctor.values.report import Report, call_dicts, summary


def render(report: Report, options: RenderOptions) -> str:
    return b"".join(pieces(report, options)).decode()


def pieces(report: Report, options: RenderOptions) -> Iterator[bytes]:
    """The lines, each serialised when its turn comes."""
    return lined(lines(report))


def lined(objects: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    """Each object as one line of JSON, serialised when its turn comes, capture content escaped."""
    return jsontext.printable_pieces(jsontext.shown(line, orjson.OPT_APPEND_NEWLINE) for line in objects)


def lines(report: Report) -> Iterator[dict[str, Any]]:
    """The objects, one per line, in order."""
    for call in call_dicts(report):
        yield {"type": "call", **call}
    for finding in report.findings:
        yield {"type": "finding", **finding.to_dict()}
    yield {"type": "summary", "capture": report.path, **summary(report)}
