"""The machine-readable report of ``check``: ``CheckResult.to_dict()`` as deterministic, indented JSON.

Schema: ``stream_doctor/schemas/check-report-v1.schema.json``. Each capture carries its full
replay report (``report-v1``), or ``null`` when it could not be replayed.
"""

from __future__ import annotations

from typing import Iterator

from stream_doctor.report import CheckResult
from stream_doctor.reporters import RenderOptions, _pieces


def render(result: CheckResult, options: RenderOptions) -> str:
    return b"".join(pieces(result, options)).decode()


def pieces(result: CheckResult, options: RenderOptions) -> Iterator[bytes]:
    """``render``'s text as it is made: a capture, a finding at a time, each replay's report as it was serialised."""
    yield from _pieces.neutral(_pieces.pieces(result.document()))
    yield b"\n"
