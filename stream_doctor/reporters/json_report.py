"""The machine-readable report of a replay: ``replay --format json`` (schema
``stream_doctor/schemas/report-v1.schema.json``), as the report model gives it (``report.json_pieces``:
built from ``report.json_document``, a call and a finding at a time, safe to print).
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.reporters import RenderOptions
from stream_doctor.values.report import Report, json_pieces


def render(report: Report, options: RenderOptions) -> str:
    return report.to_json()


def pieces(report: Report, options: RenderOptions) -> Iterator[bytes]:
    """``render``'s text as it is made: a call, a finding at a time."""
    return json_pieces(report)
