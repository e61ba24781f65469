"""The machine-readable report of ``check``: ``CheckResult.to_dict()`` as deterministic, indented JSON.

Schema: ``stream_doctor/schemas/check-report-v1.schema.json``. Each capture carries its full
replay report (``report-v1``), or ``null`` when it could not be replayed.
"""

from __future__ import annotations

import orjson

from stream_doctor.report import CheckResult
from stream_doctor.reporters import RenderOptions, _neutral


def render(result: CheckResult, options: RenderOptions) -> str:
    return _neutral.json(orjson.dumps(result.to_dict(raw_reports=True), option=orjson.OPT_INDENT_2).decode()) + "\n"
