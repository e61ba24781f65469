"""The machine-readable report: ``Report.to_dict()`` as deterministic, indented JSON.

Schema: ``stream_doctor/schemas/report-v1.schema.json``; the shape is documented in
``stream_doctor/report.py``, which builds it.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.report import Report
from stream_doctor.reporters import RenderOptions


def render(report: Report, options: RenderOptions) -> str:
    return report.to_json()


def pieces(report: Report, options: RenderOptions) -> Iterator[bytes]:
    """``render``'s text as it is made: a call, a finding at a time (``Report.json_pieces``)."""
    return report.json_pieces()
